"""One loader for "a model" that may be one fold's model or every fold model of an experiment.

``load_predictor(path)`` accepts a fold (exported model) folder, ``results/<name>/fold0``, or the results
folder of a whole experiment, ``results/<name>``. For a results folder it loads every fold model (through
``faina.serving.fold_model.load_exported``, the one way models are rebuilt) and returns their ensemble
(``models/ensemble.py``): MVML members average probabilities, MVMD members average emissions and decode
once. Either way the returned module's ``predict_step`` gives what a single model's gives, so
``faina.predict`` and other prediction code treat one model and an ensemble alike.

A results folder whose folds are not all finished (a fold without ``metrics.json`` or without its exported
model, or folds the run never reached, e.g. ``cv.folds=[0]``) is refused with one message naming them:
an ensemble of whatever happened to finish would be a different model each time it is loaded.
"""

from __future__ import annotations

import re
from pathlib import Path

from common.errors import UserError
from common.untrusted import read_json_object
from faina.serving.fold_model import load_exported

MODEL_FILES = ("model.json", "model.safetensors")
FOLD_DIR = re.compile(r"fold(\d+)$")
# what must agree between members for their average to mean anything
MAX_FOLDS = 1000  # more than any cross-validation; a bigger count in experiment.json is damage
SHARED_META = ("task", "level", "grain", "labels", "num_views", "labels_inventory", "context")


def is_model_dir(path: Path) -> bool:
    """A fold folder (model.json + model.safetensors) or an exported model folder (config.json + weights)."""
    if all((path / name).is_file() for name in MODEL_FILES):
        return True
    return (path / "config.json").is_file()  # load_exported says clearly when it is not a Faina model's


def is_model_or_heads_dir(path: Path) -> bool:
    """A model folder, or a multi-task fold folder (``heads.json`` naming one model folder per head)."""
    from faina.serving.heads import HEADS_FILE

    return is_model_dir(path) or (path / HEADS_FILE).is_file()


def expected_folds(results_dir: Path) -> int | None:
    """How many fold models the experiment's configuration asks for (``None`` when it is not recorded).

    ``experiment.json`` may come with someone else's results folder: a damaged one, or a ``cv.num_folds`` that is
    not a fold count, is one message (guessing the folds instead would ensemble whatever happens to be there)."""
    saved = results_dir / "experiment.json"
    if not saved.is_file():
        return None
    fix = "restore the experiment.json that the run wrote, or predict with one of its fold folders"
    cv = read_json_object(saved, "the saved experiment config", fix).get("cv")
    if cv is None:
        return None
    if not isinstance(cv, dict):
        raise UserError(f"the field cv must be a mapping, not {type(cv).__name__}", path=saved, fix=fix)
    count = cv.get("num_folds")
    if count is None:
        return None
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_FOLDS:
        shown = repr(count) if len(repr(count)) <= 40 else type(count).__name__
        raise UserError(
            f"the field cv.num_folds must be a whole number of folds from 1 to {MAX_FOLDS} (got {shown})",
            path=saved,
            fix=fix,
        )
    return count


def fold_dirs(results_dir: Path) -> list[Path]:
    """The finished fold folders of an experiment, in fold order; a clear error when any is unfinished."""
    found = {int(m.group(1)): p for p in results_dir.iterdir() if p.is_dir() and (m := FOLD_DIR.match(p.name))}
    expected = expected_folds(results_dir)
    wanted = range(expected) if expected is not None else sorted(found)
    if not found and expected is None:
        raise UserError(
            "neither an exported model folder (model.json + model.safetensors) nor an experiment's "
            "results folder (fold0, fold1, ...)",
            path=results_dir,
            fix="point to results/<name> of a finished run, or to one of its fold folders",
        )
    unfinished = [
        f"fold{k}"
        for k in wanted
        if k not in found or not (found[k] / "metrics.json").is_file() or not is_model_or_heads_dir(found[k])
    ]
    if unfinished:
        raise UserError(
            f"the experiment has unfinished folds: {', '.join(unfinished)} (of {len(wanted)}; a fold is "
            "finished when it has metrics.json and its exported model)",
            path=results_dir,
            fix="rerun the same training command to finish them (finished folds are skipped), or "
            f"predict with one finished fold, e.g. {results_dir / 'fold0'}",
        )
    return [found[k] for k in wanted]


def load_predictor(path: str | Path, trust_remote_code: bool = False, head: str | None = None):
    """``(model, meta)`` for a fold/model folder, or for the ensemble of every fold of a results folder (of a
    multi-task run: the ensemble of every fold's ``head``).

    ``meta`` is the model's ``model.json`` content; for an ensemble it is the first fold's, plus
    ``"ensemble": [fold folders]``. ``trust_remote_code``: the caller's consent to an encoder with custom code
    (a saved file cannot give it).
    """
    path = Path(path)
    if not path.is_dir():
        raise UserError(
            "no such folder", path=path, fix="point to results/<name> of a finished run, or to one of its fold folders"
        )
    if is_model_dir(path):
        return load_exported(path, trust_remote_code)
    folders = fold_dirs(path)
    if head is not None:
        from faina.serving.heads import head_folders

        folders = [head_folders(folder, head)[0][1] for folder in folders]
    loaded = [load_exported(folder, trust_remote_code) for folder in folders]
    meta = dict(loaded[0][1])
    for folder, (_, other) in zip(folders[1:], loaded[1:]):
        differs = [key for key in SHARED_META if other.get(key) != meta.get(key)]
        if differs:
            raise UserError(
                f"{folder.name} differs from {folders[0].name} in {', '.join(differs)}; its model cannot "
                "join their ensemble",
                path=path,
                fix="ensemble folds of one experiment only",
            )
    from models.ensemble import ensemble

    if len(loaded) == 1:
        model = loaded[0][0]
    else:
        model = ensemble([model for model, _ in loaded])
    meta["ensemble"] = [str(folder) for folder in folders]
    return model, meta

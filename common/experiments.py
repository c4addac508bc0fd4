"""What every cross-validated runner shares: the fold loop, per-fold configs, and the experiment guard.

A fold is finished when its ``metrics.json`` exists (runners write it atomically, last), so a rerun of an
experiment picks up exactly where the previous one stopped: finished folds are reused, an interrupted one
resumes from its last checkpoint (``common.checkpointing``). A damaged ``metrics.json`` is reported and its
fold runs again. A rerun with another configuration under the same name is refused instead of mixing
results, and so is a second run of the same experiment while the first is still going (``common.locking``).
Under DDP only rank 0 reports.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from lightning.fabric.utilities.rank_zero import rank_zero_only
from omegaconf import DictConfig, OmegaConf

from common.checkpointing import remove_checkpoints
from common.errors import UserError
from common.faults import kill_point
from common.io import atomic_write_json, atomic_write_text, remove_partial_files
from common.locking import experiment_lock
from common.renames import with_current_targets
from common.untrusted import read_json_object

log = logging.getLogger(__name__)

Fold = TypeVar("Fold")


def run_folds(
    exp_dir: Path,
    folds: Iterable[Fold],
    index_of: Callable[[Fold], int],
    run_fold: Callable[[Fold, Path], dict],
    wanted: Collection[int] | None = None,
    keep_checkpoints: bool = False,
) -> list[dict] | None:
    """Results of the folds whose index is in ``wanted`` (all when ``None``); ``None`` on ranks other than 0.
    A finished fold's checkpoints are deleted unless ``keep_checkpoints`` (its exported model holds the best
    weights)."""
    results = []
    for fold in folds:
        index = index_of(fold)
        if wanted is not None and index not in wanted:
            continue
        fold_dir = fold_folder(exp_dir, index)
        finished = read_finished_fold(fold_dir / "metrics.json", index)
        if finished is not None:
            log.info("fold %d: finished earlier, reusing %s", index, fold_dir / "metrics.json")
        else:
            finished = run_fold(fold, fold_dir)
        if rank_zero_only.rank == 0 and not keep_checkpoints:
            remove_checkpoints(fold_dir)
        results.append(finished)
        kill_point("fold-done")  # the fault tests' "killed between folds"
    return results if rank_zero_only.rank == 0 else None


def fold_folder(exp_dir: Path, index: int) -> Path:
    """Where fold ``index`` of the experiment in ``exp_dir`` writes everything it makes."""
    return exp_dir / f"fold{index}"


def read_finished_fold(path: Path, index: int) -> dict | None:
    """A finished fold's metrics, or ``None`` to run it; a damaged file is reported and deleted, never reused."""
    if not path.is_file():
        return None
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(result, dict) or result.get("fold") != index:
            raise ValueError(f"it does not hold the results of fold {index}")
        return result
    except (ValueError, UnicodeDecodeError, RecursionError) as err:  # RecursionError: absurdly nested JSON
        reason = (str(err).splitlines() or [type(err).__name__])[0]
        log.warning("fold %d: %s is damaged (%s); deleting it and running the fold again", index, path, reason)
        if rank_zero_only.rank == 0:
            path.unlink()
        return None


@contextlib.contextmanager
def exclusive_experiment(exp_dir: Path) -> Iterator[None]:
    """The experiment folder for this run alone: locked at once (a second run stops with one message), then
    cleared of the partial files that killed writes left. DDP workers run inside their rank-0 process's lock."""
    if rank_zero_only.rank != 0:
        yield
        return
    with experiment_lock(exp_dir):
        for partial in remove_partial_files(exp_dir):
            log.info("removed %s, a partial file of an interrupted run", partial)
        yield


# keys that may change between runs of one experiment without changing its results
VOLATILE_KEYS = (
    "fold",
    "paths",
    "logger",
    "callbacks",
    "cv.folds",
    "hydra",
    "checkpoint.keep",
    "checkpoint.resume_every_minutes",
    "checkpoint.resume_every_n_epochs",
    "outputs",  # what is drawn beside the scores, never what is scored
)


# blocks added after results folders were first written, with the values that mean "off": while off they change
# no result, so they are left out of the identity and a folder written before them is still the same experiment
ADDED_WHILE_OFF = {"early_stopping": {"patience": None}}


def experiment_identity(cfg: DictConfig) -> dict:
    container = OmegaConf.to_container(cfg, resolve=True)
    for key, off in ADDED_WHILE_OFF.items():
        block = container.get(key)
        if isinstance(block, dict) and all(block.get(name) == value for name, value in off.items()):
            container.pop(key)
    for key in VOLATILE_KEYS:
        parent, _, leaf = key.rpartition(".")
        node = container
        for part in filter(None, parent.split(".")):
            node = node.get(part, {})
        node.pop(leaf, None)
    return container


def guard_same_experiment(cfg: DictConfig, exp_dir: Path) -> None:
    """Reuse finished folds only for the same configuration; refuse to mix results of two configs."""
    identity = experiment_identity(cfg)
    saved = exp_dir / "experiment.json"
    if saved.is_file():
        # only compared with this run's config, never instantiated: a tampered file can refuse the rerun, not run code
        before = with_current_targets(
            read_json_object(
                saved,
                "the saved experiment config",
                fix=("give this run its own name=..., or delete the folder to start over"),
            )
        )
        if before != json.loads(json.dumps(identity)):
            changed = sorted(_diff_keys(before, identity))
            raise UserError(
                f"the folder holds results of another configuration (differs in: {', '.join(changed)})",
                path=exp_dir,
                fix="give this run its own name=..., or delete the folder to start over",
            )
    exp_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_json(saved, identity)
    atomic_write_text(exp_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))


def _diff_keys(a, b, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        keys = []
        for key in set(a) | set(b):
            keys += _diff_keys(a.get(key), b.get(key), f"{prefix}{key}.")
        return keys
    return [] if a == b else [prefix.rstrip(".")]

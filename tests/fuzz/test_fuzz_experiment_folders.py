"""Fuzzing what reads a results folder back: ``experiment.json`` on a rerun (``guard_same_experiment``) and
``faina.serving.loading`` (``fold_dirs`` / ``load_predictor``) when a results folder is given to predict with.

A rerun accepts exactly the ``experiment.json`` that means the same configuration (after translating the
module paths of earlier releases) and refuses every other with one ``UserError``; nothing in it is called.
A results folder predicts with the ensemble of exactly the folds its ``experiment.json`` records, when all
are finished; anything else (a list instead of an object, a ``cv`` that is a list, a negative, huge or
non-integer ``num_folds``, missing or unfinished folds, broken bytes) is one ``UserError``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from common.renames import with_current_targets
from fuzz.model_files import TINY_BLOCK, hostile_documents, spoiled_documents, tiny_fold_json, tiny_weights
from fuzz.support import JUNK_SCALARS, SCRATCH, fuzz_settings, json_junk, outcome, spoiled_bytes, tried
from helpers.hostile import tripwires

GUARD = "experiment.json (guard_same_experiment)"
FOLDS = "results folder (fold_dirs)"
PREDICTOR = "results folder (load_predictor)"


@functools.cache
def run_config():
    """The composed training config of a small span run (what a rerun compares experiment.json with), resolved
    once: the guard resolves it again on every call, and a config of plain values resolves in a tenth of the time."""
    from omegaconf import OmegaConf

    from helpers.configs import compose_train

    cfg = compose_train(
        f"paths.root_dir={SCRATCH / 'root'}", "task=span-f", "callbacks=none", "logger=none", "cv.num_folds=2"
    )
    return OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))


@functools.cache
def identity() -> dict:
    from common.experiments import experiment_identity

    return json.loads(json.dumps(experiment_identity(run_config())))


@pytest.fixture(scope="module", autouse=True)
def artefacts():
    identity()
    tiny_weights()


def guard(data: bytes):
    from common.experiments import guard_same_experiment

    exp_dir = SCRATCH / "experiment"
    exp_dir.mkdir(parents=True, exist_ok=True)
    (exp_dir / "experiment.json").write_bytes(data)
    tried(GUARD)
    return outcome(lambda: guard_same_experiment(run_config(), exp_dir))


def test_a_first_run_writes_the_identity_a_rerun_accepts():
    from common.experiments import guard_same_experiment

    exp_dir = SCRATCH / "first-run"
    shutil.rmtree(exp_dir, ignore_errors=True)
    guard_same_experiment(run_config(), exp_dir)
    saved = (exp_dir / "experiment.json").read_bytes()
    assert json.loads(saved) == identity()
    _, err = guard(saved)
    assert err is None, err


@fuzz_settings(600)
@given(st.data())
def test_a_rerun_accepts_exactly_the_same_configuration(data):
    kind, spoiled = data.draw(spoiled_documents(identity()))
    _, err = guard(spoiled if isinstance(spoiled, bytes) else json.dumps(spoiled).encode("utf-8"))
    same = isinstance(spoiled, dict) and with_current_targets(spoiled) == identity()
    assert (err is None) == same, (kind, err)


@fuzz_settings(300)
@given(st.data())
def test_hostile_nodes_in_experiment_json_refuse_the_rerun_and_never_run(data):
    victim = SCRATCH / "victim" / "VICTIM"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("keep me\n", encoding="utf-8")
    hostile = data.draw(hostile_documents(identity(), victim))
    with pytest.MonkeyPatch.context() as patch:
        calls = tripwires(patch)
        _, err = guard(json.dumps(hostile).encode("utf-8"))
    assert calls == [] and victim.read_text(encoding="utf-8") == "keep me\n"
    assert (err is None) == (with_current_targets(hostile) == identity())  # a Hydra key it already had: the same


@fuzz_settings(100)
@given(st.data())
def test_broken_bytes_in_experiment_json_refuse_the_rerun(data):
    _, spoiled = data.draw(spoiled_bytes(json.dumps(identity()).encode("utf-8")))
    _, err = guard(spoiled)
    assert (err is None) == (spoiled.rstrip() == json.dumps(identity()).encode("utf-8").rstrip() or _same_json(spoiled))


def _same_json(data: bytes) -> bool:
    try:
        return json.loads(data.decode("utf-8")) == identity()
    except ValueError:
        return False


# --- a results folder given to predict with -------------------------------------------------------------------
@functools.cache
def tiny_model_json() -> str:
    return json.dumps(tiny_fold_json(TINY_BLOCK))


@functools.cache
def weights_file():
    path = SCRATCH / "tiny-weights" / "model.safetensors"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(tiny_weights())
    return path


def tiny_fold(folder, finished: bool):
    """A fold folder as export_model writes it (no training: the tiny model's weights), with metrics.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.json").write_text(tiny_model_json(), encoding="utf-8")
    os.link(weights_file(), folder / "model.safetensors")  # one 4 MB file, linked: a thousand folders cost nothing
    if finished:
        (folder / "metrics.json").write_text(json.dumps({"fold": int(folder.name[4:])}), encoding="utf-8")


# (null is "not recorded", like a missing key: the folds found are the experiment's, see the "no-cv" case)
num_folds_junk = (
    st.sampled_from([v for v in JUNK_SCALARS if v is not None])
    | st.integers(-5, 5)
    | st.sampled_from((10**6, 2**70, 1.0, "2"))
)


@st.composite
def results_folders(draw) -> tuple[dict | bytes | None, dict[int, bool], int | None]:
    """``(experiment.json content or raw bytes or None, {fold: finished}, folds expected or None for an error)``."""
    present = draw(st.dictionaries(st.integers(0, 4), st.booleans(), max_size=4))
    choice = draw(st.sampled_from(("valid", "valid", "none", "no-cv", "junk-count", "junk-cv", "junk", "bytes")))
    count = draw(st.integers(1, 4))
    experiment = {"task": {"name": "span-f"}, "cv": {"num_folds": count, "seed": 1}}
    complete = lambda n: all(present.get(k) for k in range(n))  # noqa: E731
    if choice == "valid":
        return experiment, present, count if complete(count) else None
    if choice in ("none", "no-cv"):  # nothing recorded: the folds found count (the test's own check)
        return (None if choice == "none" else {"task": {}}), present, None
    if choice == "junk-count":
        value = draw(num_folds_junk)
        fold_count = type(value) is int and 1 <= value <= 1000  # noqa: E721  (True is not a count)
        return {"cv": {"num_folds": value}}, present, value if fold_count and complete(value) else None
    if choice == "junk-cv":
        return {"cv": draw(json_junk().filter(lambda v: not isinstance(v, dict) and v is not None))}, present, None
    if choice == "junk":
        return draw(json_junk().filter(lambda v: not isinstance(v, dict))), present, None
    return draw(spoiled_bytes(json.dumps(experiment).encode("utf-8")))[1], present, "bytes"


def write_results(experiment, present: dict[int, bool]):
    folder = SCRATCH / "results-run"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for index, finished in present.items():
        tiny_fold(folder / f"fold{index}", finished)
    if isinstance(experiment, bytes):
        (folder / "experiment.json").write_bytes(experiment)
    elif experiment is not None:
        (folder / "experiment.json").write_text(json.dumps(experiment), encoding="utf-8")
    return folder


def check_folds(folds, err, folder, experiment, present: dict[int, bool], expected):
    """The folds a reader gave (or its error) are what the folder's experiment.json and fold folders say."""
    if experiment is None or (isinstance(experiment, dict) and "cv" not in experiment):
        # nothing recorded: the folds found, all of which must be finished
        wanted = sorted(present)
        if wanted and all(present.values()):
            assert err is None and folds == [folder / f"fold{k}" for k in wanted]
        else:
            assert err is not None
    elif expected == "bytes":
        if folds is not None:
            assert folds == [folder / f"fold{k}" for k in range(len(folds))]
    elif expected is None:
        assert err is not None
    else:
        assert err is None, err
        assert folds == [folder / f"fold{k}" for k in range(expected)]


@fuzz_settings(1000)
@given(results_folders())
def test_fold_dirs_gives_exactly_the_recorded_folds_or_one_user_error(drawn):
    from faina.serving.loading import fold_dirs

    experiment, present, expected = drawn
    folder = write_results(experiment, present)
    tried(FOLDS)
    folds, err = outcome(lambda: fold_dirs(folder))
    check_folds(folds, err, folder, experiment, present, expected)


@fuzz_settings(300)
@given(results_folders())
@example(({"cv": {"num_folds": 2}}, {0: True, 1: True}, 2))  # an ensemble of two real (untrained) fold models
@example(([{"cv": {"num_folds": 2}}], {0: True, 1: True}, None))  # the AttributeError / IndexError cases once found
@example(({"cv": [2]}, {0: True, 1: True}, None))
@example(({"cv": {"num_folds": -1}}, {0: True, 1: True}, None))
def test_load_predictor_ensembles_exactly_the_recorded_folds_or_says_why_not(drawn):
    from faina.serving.loading import load_predictor

    experiment, present, expected = drawn
    folder = write_results(experiment, present)
    tried(PREDICTOR)
    loaded, err = outcome(lambda: load_predictor(folder))
    folds = None if loaded is None else [folder.__class__(path) for path in loaded[1]["ensemble"]]
    check_folds(folds, err, folder, experiment, present, expected)

"""The tier guard of ``tests/tiers.py``: while a fast-tier test runs, training a fold and starting ``train.py`` in a
child are refused with a message saying what to do; other tiers, Hydra's info flags and the shared runs may."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

import tiers
from common.fold_training import FoldTrainer


class Item:
    """What the guard reads of a collected test: its id and its tier (``stash``)."""

    def __init__(self, tier: str | None = None):
        self.nodeid = "tests/example.py::test_example"
        self.stash = {} if tier is None else {tiers._ITEM_TIER: tier}


def test_a_fast_test_that_fits_a_fold_fails_saying_how_to_mark_it():
    with tiers._guarded(Item()):
        with pytest.raises(pytest.fail.Exception, match=r"trains a train.py run \(FoldTrainer.fit\).*mark it e2e"):
            FoldTrainer.fit(None, None)


def test_a_fast_test_that_starts_train_py_fails_before_the_child_starts():
    with tiers._guarded(Item()):
        with pytest.raises(pytest.fail.Exception, match="starts train.py in a child process"):
            subprocess.Popen([sys.executable, "train.py", "task=span-f"])


def test_hydra_info_flags_and_other_programs_may_start_in_the_fast_tier():
    with tiers._guarded(Item()):
        done = subprocess.run([sys.executable, "-c", "pass", "train.py", "--help"], check=True)
        assert done.returncode == 0


@pytest.mark.parametrize("tier", ["e2e", "slow"])
def test_other_tiers_train_unguarded(tier):
    original = FoldTrainer.fit
    with tiers._guarded(Item(tier)):
        assert FoldTrainer.fit is original
    assert FoldTrainer.fit is original


def test_sanctioned_training_may_fit_and_the_guard_is_lifted_afterwards():
    original = FoldTrainer.fit
    calls = []
    FoldTrainer.fit = lambda *args, **kwargs: calls.append(args)
    try:
        with tiers._guarded(Item()):
            with tiers.sanctioned_training():
                FoldTrainer.fit("fold", "module")
            with pytest.raises(pytest.fail.Exception):
                FoldTrainer.fit("fold", "module")
        assert calls == [("fold", "module")]
    finally:
        FoldTrainer.fit = original


def test_the_tier_of_a_comma_list_and_all():
    assert tiers.chosen_tiers("all") == set(tiers.TIERS)
    assert tiers.chosen_tiers("fast,e2e") == {"fast", "e2e"}
    with pytest.raises(pytest.UsageError):
        tiers.chosen_tiers("fast,nightly")


def session_config(source=pytest.Config.ArgsSource.TESTPATHS, **options):
    """What ``tiers.whole_collection`` reads of a session's config: where its paths came from and its filters."""
    defaults = {"keyword": "", "markexpr": "", "deselect": None, "ignore": None, "ignore_glob": None}
    return SimpleNamespace(args_source=source, option=SimpleNamespace(**{**defaults, "lf": False, **options}))


def test_only_a_session_of_every_test_counts_the_tiers_itself():
    assert tiers.whole_collection(session_config())  # `pytest`, `pytest --tiers all`, with -n or not
    partial = [
        session_config(pytest.Config.ArgsSource.ARGS),  # `pytest tests/docs`
        session_config(keyword="readme"),
        session_config(markexpr="not slow"),
        session_config(deselect=["tests/test_tiers.py::test_x"]),
        session_config(ignore=["tests/fuzz"]),
        session_config(ignore_glob=["*fuzz*"]),
        session_config(lf=True),
        session_config(stepwise=True),
    ]
    assert not any(tiers.whole_collection(config) for config in partial)


def test_the_fast_count_is_what_the_default_tier_runs():
    assert tiers.runs_in("fast", {"fast"}) and tiers.runs_in("fuzz", {"fast"})  # the harness at a tenth
    assert not tiers.runs_in("e2e", {"fast"}) and not tiers.runs_in("slow", {"fast", "fuzz"})
    assert all(tiers.runs_in(tier, set(tiers.TIERS)) for tier in tiers.TIERS)

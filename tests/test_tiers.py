"""The tier guard of ``tests/tiers.py``: while a fast-tier test runs, training a fold and starting ``train.py`` in a
child are refused with a message saying what to do; other tiers, Hydra's info flags and the shared runs may."""

from __future__ import annotations

import subprocess
import sys

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

"""Test tiers: ``pytest`` runs the contributor's loop (``fast``); ``--tiers all`` runs everything CI runs.

Each test belongs to one tier:

- ``fast`` (no mark): units, config composition, the readers, the scorers, and the one shared tiny trained run
  (``trained_runs`` in ``tests/helpers/trained.py``) that the loader, prediction and export tests read;
- ``e2e``: trains through ``train.py`` or Lightning's ``Trainer.fit``, builds the hub replicas, fine-tunes LoRA;
- ``fuzz``: the hypothesis harness (``tests/fuzz/``) at its full example counts;
- ``slow``: real small models (MiniLM at full size, SmolLM2), subprocess sweeps and launchers, DDP, the
  fresh-clone check.

``--tiers fast,e2e`` (a comma list, or ``all``; ``$FALLACY_TEST_TIERS`` gives the default) chooses which run; the
others are deselected and the run's header says how many. The fast tier still runs the fuzz tests, with a tenth
of their examples (``tests/fuzz/support.py``: profile ``quick``), unless ``fuzz`` is chosen too.

A tier comes from a mark (``@pytest.mark.e2e``, a module's ``pytestmark``) or from a fixture the test uses
(a fixture decorated with :func:`fixture_tier`: a test that takes the replicas is ``e2e`` without saying so); with
several, the slowest wins (slow, then e2e, then fuzz). A test of the fast tier that
trains anyway fails with a message saying so: while it sets up and runs, training a fold of a ``train.py`` run
(``FoldTrainer.fit``) and starting ``train.py`` in a child process are refused, except inside :func:`sanctioned_training` (the shared trained runs,
built once per session).
docs/design.md says which tier a new test belongs to.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import subprocess
from pathlib import Path

import pytest

TIERS = ("fast", "e2e", "fuzz", "slow")
TIER_MARKS = ("slow", "e2e", "fuzz")  # a test marked with several belongs to the first
TIERS_ENV = "FALLACY_TEST_TIERS"
FUZZ_PROFILE_ENV = "FALLACY_FUZZ_PROFILE"
TIER_ATTRIBUTE = "_test_tier"
PROBE_ENV = "FALLACY_FIXTURE_PROBE"  # set by the fresh-clone probe: costly fixtures are not built
HYDRA_INFO_FLAGS = {"--cfg", "-c", "--help", "-h", "--hydra-help", "--info", "-i"}  # train.py prints, trains nothing
FUZZ_FOLDER = "fuzz"  # every test under tests/fuzz/ is the fuzz tier

_sanctioned = 0


@contextlib.contextmanager
def sanctioned_training():
    """Training that the fast tier pays for on purpose (the session's shared trained runs)."""
    global _sanctioned
    _sanctioned += 1
    try:
        yield
    finally:
        _sanctioned -= 1


def chosen_tiers(value: str) -> set[str]:
    names = {part.strip() for part in value.split(",") if part.strip()}
    if names == {"all"}:
        return set(TIERS)
    unknown = names - set(TIERS)
    if unknown or not names:
        raise pytest.UsageError(f"--tiers {value!r}: name one or more of {', '.join(TIERS)} (comma-separated), or all")
    return names


class NotBuilt:
    """What a costly fixture gives in the fresh-clone probe (``PROBE_ENV`` set), which sets up every fixture without
    running the tests: any attribute, item, path or call of it is itself, so cheap fixtures built on it still run."""

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self

    def __truediv__(self, other):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter(())


def fixture_tier(tier: str):
    """Put every test that uses the decorated fixture in ``tier`` (below ``@pytest.fixture``): a fixture that trains
    or builds models says so once, and no test of it can land in the fast tier by forgetting a mark. Such a fixture
    is costly: the fresh-clone probe (``tests/test_fresh_clone.py``) does not build it (:class:`NotBuilt`) but
    still sets up the fixtures it takes, where missing data would show."""
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}: one of {TIERS}")

    def mark(function):
        if inspect.isgeneratorfunction(function):

            @functools.wraps(function)
            def costly(*args, **kwargs):
                if os.environ.get(PROBE_ENV):
                    yield NotBuilt()
                    return
                yield from function(*args, **kwargs)

        else:

            @functools.wraps(function)
            def costly(*args, **kwargs):
                return NotBuilt() if os.environ.get(PROBE_ENV) else function(*args, **kwargs)

        setattr(costly, TIER_ATTRIBUTE, tier)
        return costly

    return mark


def _fixture_tiers(item) -> set[str]:
    info = getattr(item, "_fixtureinfo", None)
    found = set()
    for definitions in info.name2fixturedefs.values() if info is not None else ():
        for definition in definitions:
            tier = getattr(definition.func, TIER_ATTRIBUTE, None)
            if tier is not None:
                found.add(tier)
    return found


def tier_of(item) -> str:
    named = {mark for mark in TIER_MARKS if item.get_closest_marker(mark) is not None} | _fixture_tiers(item)
    if FUZZ_FOLDER in Path(str(item.path)).parts:
        named.add("fuzz")
    return next((tier for tier in TIER_MARKS if tier in named), "fast")


def runs_in(tier: str, tiers: set[str]) -> bool:
    """Whether a test of ``tier`` runs when ``tiers`` are chosen: the fast tier also runs the fuzz tests (quickly)."""
    return tier in tiers or (tier == "fuzz" and "fast" in tiers)


def pytest_addoption(parser):
    parser.addoption(
        "--tiers",
        default=os.environ.get(TIERS_ENV, "fast"),
        help="test tiers to run: fast (the default), e2e, fuzz, slow, comma-separated, or all (what CI runs)",
    )


def pytest_configure(config):
    tiers = chosen_tiers(config.getoption("--tiers"))
    config.stash[_TIERS_KEY] = tiers
    # the fuzz harness reads its profile when its modules are imported, after this
    if "fuzz" not in tiers:
        os.environ[FUZZ_PROFILE_ENV] = "quick"
    elif os.environ.get(FUZZ_PROFILE_ENV) == "quick":
        del os.environ[FUZZ_PROFILE_ENV]


_TIERS_KEY = pytest.StashKey[set]()


def pytest_collection_modifyitems(config, items):
    tiers = config.stash[_TIERS_KEY]
    kept, dropped = [], []
    for item in items:
        tier = tier_of(item)
        item.stash[_ITEM_TIER] = tier
        (kept if runs_in(tier, tiers) else dropped).append(item)
    if whole_collection(config):
        fast = sum(runs_in(item.stash[_ITEM_TIER], {"fast"}) for item in items)
        config.stash[_COUNTS_KEY] = (fast, len(items))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    config.stash[_DROPPED_KEY] = len(dropped)


_ITEM_TIER = pytest.StashKey[str]()
_DROPPED_KEY = pytest.StashKey[int]()
_COUNTS_KEY = pytest.StashKey[tuple]()


def whole_collection(config) -> bool:
    """Whether this session collects every test of the repository: run from the configured test paths, with no
    keyword, mark, deselection, ignore or last-failed filter (what ``pytest --collect-only -q`` counts)."""
    option = config.option
    filters = (option.keyword, option.markexpr, option.deselect, option.ignore, option.ignore_glob)
    return (
        config.args_source is pytest.Config.ArgsSource.TESTPATHS
        and not any(filters)
        and not getattr(option, "lf", False)
        and not getattr(option, "stepwise", False)
    )


def tier_counts(config) -> tuple[int, int] | None:
    """``(fast tier, every tier)`` as ``pytest --collect-only -q`` counts them, from this session's own collection
    when it collected every test (:func:`whole_collection`); ``None`` for a partial session."""
    return config.stash.get(_COUNTS_KEY, None)


def pytest_report_header(config):
    tiers = sorted(config.stash[_TIERS_KEY], key=TIERS.index)
    fuzz = "full" if "fuzz" in tiers else "a tenth of"
    return f"tiers: {','.join(tiers)} (fuzz harness at {fuzz} its counts; --tiers all runs what CI runs)"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    dropped = config.stash.get(_DROPPED_KEY, 0)
    if dropped:
        terminalreporter.write_line(
            f"{dropped} tests of other tiers were not run (tiers: {','.join(sorted(config.stash[_TIERS_KEY]))}); "
            "`pytest --tiers all` runs every tier"
        )


def _refuse_training(item) -> list[tuple]:
    """What the guard replaces while a fast-tier test sets up and runs: ``FoldTrainer.fit`` (every fold a
    ``train.py`` run trains, Faina or Missci, in this process) and ``Popen`` of ``train.py`` (one in a child).
    A few optimiser steps of a tiny module through Lightning's own ``Trainer`` stay allowed: a unit test."""
    from common.fold_training import FoldTrainer

    original_fit, original_popen = FoldTrainer.fit, subprocess.Popen.__init__

    def refused_fit(*args, **kwargs):
        if not _sanctioned:
            pytest.fail(
                f"{item.nodeid} trains a train.py run (FoldTrainer.fit) but belongs to the fast tier: mark it e2e "
                "(or slow), or read the shared tiny run (the trained_runs fixture, tests/helpers/trained.py)",
                pytrace=False,
            )
        return original_fit(*args, **kwargs)

    def refused_child(self, args, *rest, **kwargs):
        words = [str(a) for a in (args if isinstance(args, (list, tuple)) else [args])]
        starts_training = any(w == "train.py" or w.endswith("/train.py") for w in words)
        if starts_training and not _sanctioned and not set(words) & HYDRA_INFO_FLAGS:
            pytest.fail(
                f"{item.nodeid} starts train.py in a child process but belongs to the fast tier: mark it e2e (or slow)",
                pytrace=False,
            )
        return original_popen(self, args, *rest, **kwargs)

    return [(FoldTrainer, "fit", refused_fit), (subprocess.Popen, "__init__", refused_child)]


@contextlib.contextmanager
def _guarded(item):
    if item.stash.get(_ITEM_TIER, "fast") not in ("fast", "fuzz"):
        yield
        return
    patches = _refuse_training(item)
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, replacement in patches:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with _guarded(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with _guarded(item):
        yield

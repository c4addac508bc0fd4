"""A run started from the checkout with ``paths.results_dir`` elsewhere: nothing lands in the checkout, the features
go to the user's cache folder, and the log holds none of the libraries' known noise (``common.library_noise``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests_paths import REPO
from tiers import fixture_tier

# what a fold's log held before common.library_noise (docs/training.md#quiet-logs)
NOISE = (
    "💡 Tip",
    "litlogger",
    "GPU available:",
    "TPU available:",
    "to estimate number of stepping batches",
    "LeafSpec",
    "The anonymous setting has no effect",
    "Loading weights",
)


def checkout_files() -> set[str]:
    files = set()
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__", ".pytest_cache", ".ruff_cache")]
        files.update(os.path.relpath(os.path.join(folder, name), REPO) for name in names)
    return files


@pytest.fixture(scope="module")
@fixture_tier("e2e")
def quiet_run(tmp_path_factory, tiny_encoder, small_sample):
    """``train.py`` from the repository root, W&B offline, one fold of one epoch; (stderr, results, cache, new files)."""
    tmp = tmp_path_factory.mktemp("quiet_run")
    before = checkout_files()
    env = {k: v for k, v in os.environ.items() if k not in ("FALLACY_FEATURE_CACHE", "NO_COLOR")}
    env.update(XDG_CACHE_HOME=str(tmp / "xdg"), WANDB_MODE="offline", PYTHONDONTWRITEBYTECODE="1")
    command = [
        sys.executable,
        "train.py",
        "task=span-f",
        "cv.num_folds=2",
        "cv.folds=[0]",
        "trainer.max_epochs=1",
        "logger=wandb",
        "loader.batch_size=8",
        f"paths.results_dir={tmp / 'results'}",
        f"encoder.name_or_path={tiny_encoder}",
        "data=custom",
        f"data.train_path={small_sample / 'sample.conll'}",
        "name=quiet",
    ]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done, tmp / "results", tmp / "xdg", checkout_files() - before


@pytest.mark.e2e
def test_a_run_with_results_dir_writes_nothing_into_the_checkout(quiet_run):
    _, results, cache, new_files = quiet_run
    assert new_files == set(), f"written into the checkout: {sorted(new_files)[:10]}"
    assert (results / "quiet" / "fold0" / "metrics.json").is_file()
    assert list((results / "quiet").glob("hydra/*/.hydra/config.yaml"))  # Hydra's own files: in the results too
    # the features: in the user's cache folder, outside the checkout (paths.feature_cache's default)
    assert list((cache / "fallacy-framework" / "features").glob("features-*.arrow"))


@pytest.mark.e2e
def test_the_log_holds_none_of_the_known_noise(quiet_run):
    done, _, _, _ = quiet_run
    log = done.stdout + done.stderr
    assert [line for line in log.splitlines() if any(noise in line for noise in NOISE)] == []
    assert "features of 60 posts tokenised" in done.stderr  # the run's own progress still shows
    assert "| strict | avg |" in done.stdout  # and its results table is on stdout


@pytest.mark.e2e
def test_a_redirected_log_holds_no_bar_frames_and_no_warning_source_lines(quiet_run):
    """stderr is a pipe here, as in a log file: no progress bar draws, and the expected states of a one-epoch run
    (zero denominators, an early collapse) are plain lines, not Python's ``file.py:57: ...Warning`` and its
    source line."""
    done, _, _, _ = quiet_run
    assert "tokenising posts:" not in done.stderr and "━" not in done.stderr and "Predicting" not in done.stderr
    assert re.findall(r"^.*\.py:\d+: \w*Warning.*$", done.stderr, re.MULTILINE) == []


def test_other_warnings_of_the_same_library_still_show():
    """The pytree filter names one message of one module: the same category elsewhere is not hidden."""
    import warnings

    from common.library_noise import quiet_libraries

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_libraries()
        warnings.warn_explicit(
            "`isinstance(treespec, LeafSpec)` is deprecated",
            FutureWarning,
            "x.py",
            1,
            module="lightning.pytorch.utilities._pytree",
        )
        warnings.warn_explicit(
            "`isinstance(treespec, LeafSpec)` is deprecated", FutureWarning, "y.py", 1, module="mine"
        )
        warnings.warn_explicit(
            "another deprecation", FutureWarning, "x.py", 2, module="lightning.pytorch.utilities._pytree"
        )
    assert [str(w.message) for w in caught] == ["`isinstance(treespec, LeafSpec)` is deprecated", "another deprecation"]


def test_lightning_notices_other_than_the_known_ones_still_show(caplog):
    import logging

    from common.library_noise import quiet_libraries

    quiet_libraries()
    rank_zero = logging.getLogger("lightning.pytorch.utilities.rank_zero")
    with caplog.at_level(logging.INFO, logger="lightning.pytorch.utilities.rank_zero"):
        rank_zero.info("GPU available: False, used: False")
        rank_zero.info("`Trainer.fit` stopped: `max_epochs=1` reached.")
        rank_zero.info("`Trainer.fit` stopped: `max_steps=10` reached.")
    assert [r.getMessage() for r in caplog.records] == ["`Trainer.fit` stopped: `max_steps=10` reached."]


def test_redirected_logs_get_no_colour_codes(monkeypatch):
    from common import library_noise

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))  # noqa: SIM115 - closed with the test process
    library_noise.quiet_libraries()
    assert os.environ["NO_COLOR"] == "1"

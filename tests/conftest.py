"""Shared fixtures: paths of the synthetic samples, the real Missci files (``real_missci``), tmp helpers.

Every test runs on a fresh clone: Missci tests read the synthetic sample shipped in ``missci/sample_data/``.
Only tests that check the paper's own figures (counts, baselines, pinned checksums) need the real Missci
files; they take the ``real_missci`` fixture, which marks them ``real_missci`` and skips them, saying so, when
the files are not there. ``tests/test_fresh_clone.py`` fails if any other test skips for missing data.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tiers")  # imported here before pytest loads it as the plugin below
from tiers import fixture_tier  # noqa: E402

pytest_plugins = ["tiers"]  # tests/tiers.py: the test tiers (fast by default, --tiers all for CI)

REPO = Path(__file__).resolve().parents[1]
REAL_MISSCI = "real_missci"
REAL_MISSCI_SKIP = "needs the real Missci files"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def session_folder(variable: str, prefix: str) -> None:
    """Point ``variable`` at a new temporary folder, removed when this process exits, unless it is set already (by
    the user, or by the process that started this one: pytest-xdist's workers and child pytest runs share their
    parent's folder, which the parent removes)."""
    if variable not in os.environ:
        folder = tempfile.mkdtemp(prefix=prefix)
        os.environ[variable] = folder
        atexit.register(shutil.rmtree, folder, ignore_errors=True)


# parsed label inventories are cached as JSON (common/yaml_cache.py): keep the tests' copies out of ~/.cache
session_folder("FALLACY_YAML_CACHE", "fallacy-yaml-cache-")
# and the tokenised features (paths.feature_cache, by default in the user's cache): each session starts empty
session_folder("FALLACY_FEATURE_CACHE", "fallacy-feature-cache-")
# under pytest -n (pytest-xdist) each worker and the processes it starts compute on one thread: N workers share N
# cores; two threads each would stall on each other's OpenMP barriers (set before torch is first imported)
if os.environ.get("PYTEST_XDIST_WORKER"):
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture
def write_file(tmp_path):
    """Write text to a file under tmp_path and return its path."""

    def _write(name: str, text: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return _write


def real_missci_candidates() -> list[Path]:
    """Where the real Missci files may be: $MISSCI_DATA, data/missci in the checkout, ../shared/data/missci."""
    places = [os.environ.get("MISSCI_DATA"), REPO / "data" / "missci", REPO.parent / "shared" / "data" / "missci"]
    return [Path(p) for p in places if p and str(p) != "sample"]


@pytest.fixture(scope="session")
def real_missci() -> Path:
    """The folder of the official Missci files, checked against the pinned sha256 sums (skips when absent)."""
    from missci.download import SHA256

    for folder in real_missci_candidates():
        if all((folder / name).is_file() for name in SHA256):
            for name, expected in SHA256.items():
                if hashlib.sha256((folder / name).read_bytes()).hexdigest() != expected:
                    pytest.fail(
                        f"{folder / name} is not the pinned Missci file (sha256 differs); "
                        f"fetch it again with `python -m missci.download {folder}`"
                    )
            return folder.resolve()
    pytest.skip(
        f"{REAL_MISSCI_SKIP} ({', '.join(str(p) for p in real_missci_candidates())}): "
        f"`python -m missci.download data/missci` fetches them"
    )


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> str:
    """A 2-layer, 32-wide BERT (random weights) with all-MiniLM-L6-v2's tokenizer: fast and offline."""
    from helpers.trained import save_tiny_encoder

    return str(save_tiny_encoder(tmp_path_factory.mktemp("tiny_encoder")))


@pytest.fixture(scope="session")
def small_sample(tmp_path_factory) -> Path:
    """60 synthetic posts (labelled and unlabelled copies, span and post files)."""
    from helpers.trained import write_small_sample

    return write_small_sample(tmp_path_factory.mktemp("sample60"))


@pytest.fixture(scope="session")
@fixture_tier("fast")
def trained_runs(tmp_path_factory, tiny_encoder, small_sample):
    """The session's shared tiny runs and their exports (``helpers.trained.TrainedRuns``): read them, never write
    into them (``helpers.trained.copy_of``)."""
    from helpers.trained import train_shared_runs

    return train_shared_runs(tmp_path_factory.mktemp("trained_runs"), tiny_encoder, small_sample)


@pytest.fixture(scope="session")
def missci_sample() -> Path:
    """The synthetic Missci sample shipped in the package (never skipped)."""
    from missci.dataset.synthetic import default_sample_dir

    return default_sample_dir()


def pytest_collection_modifyitems(config, items):
    """A test that takes the ``real_missci`` fixture carries the ``real_missci`` marker (``-m "not real_missci"``)."""
    for item in items:
        if REAL_MISSCI in getattr(item, "fixturenames", ()):
            item.add_marker(REAL_MISSCI)


# --- the fuzz summary: how many inputs each reader was given (tests/fuzz/support.py counts them) --------------
def pytest_terminal_summary(terminalreporter):
    from fuzz.support import COUNTS, active_profile

    if not COUNTS:
        return
    terminalreporter.section(f"fuzzed readers (profile {active_profile()}): inputs tried")
    for reader, count in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{reader:<40} {count:>8}")
    terminalreporter.write_line(f"{'total':<40} {sum(COUNTS.values()):>8}")


def pytest_sessionfinish(session):
    """An xdist worker hands its counts to the main process, which prints the summary."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from fuzz.support import COUNTS

        workeroutput["fuzz_counts"] = dict(COUNTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    from fuzz.support import COUNTS

    COUNTS.update(getattr(node, "workeroutput", {}).get("fuzz_counts", {}))

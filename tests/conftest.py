"""Shared fixtures: paths of the synthetic samples, the real Missci files (``real_missci``), tmp helpers.

Every test runs on a fresh clone: Missci tests read the synthetic sample shipped in ``missci/sample_data/``.
Only tests that check the paper's own figures (counts, baselines, pinned checksums) need the real Missci
files; they take the ``real_missci`` fixture, which marks them ``real_missci`` and skips them, saying so, when
the files are not there. ``tests/test_fresh_clone.py`` fails if any other test skips for missing data.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REAL_MISSCI = "real_missci"
REAL_MISSCI_SKIP = "needs the real Missci files"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# parsed label inventories are cached as JSON (common/yaml_cache.py): keep the tests' copies out of ~/.cache
os.environ.setdefault("FALLACY_YAML_CACHE", tempfile.mkdtemp(prefix="fallacy-yaml-cache-"))
# and the tokenised features (paths.feature_cache, by default in the user's cache): each session starts empty
os.environ.setdefault("FALLACY_FEATURE_CACHE", tempfile.mkdtemp(prefix="fallacy-feature-cache-"))


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
def missci_sample() -> Path:
    """The synthetic Missci sample shipped in the package (never skipped)."""
    from missci.dataset.synthetic import default_sample_dir

    return default_sample_dir()


def pytest_collection_modifyitems(config, items):
    """A test that takes the ``real_missci`` fixture carries the ``real_missci`` marker (``-m "not real_missci"``)."""
    for item in items:
        if REAL_MISSCI in getattr(item, "fixturenames", ()):
            item.add_marker(REAL_MISSCI)

"""The hub-shaped replicas (``models.replicas``), built once per session, and how tests run the CLIs on them.

End-to-end tests go through the project's stable surfaces only: ``train.py`` with Hydra overrides in a
subprocess, and the ``python -m faina.<tool>`` / ``python -m missci.<tool>`` commands (a fresh process where the
test is about reloading, their ``main(argv)`` otherwise), so they survive module moves inside the packages.
The helpers that run them: tests/replica_cli.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tiers import fixture_tier


@pytest.fixture(scope="session")
@fixture_tier("e2e")
def replicas(tmp_path_factory) -> dict[str, Path]:
    """Every replica, written once: name -> folder (what encoder.name_or_path= / llm.name_or_path= take)."""
    from models.hub_replicas.layouts import write_replicas

    return write_replicas(tmp_path_factory.mktemp("hub_replicas"))


@pytest.fixture
def replica_copy(replicas, tmp_path):
    """A private copy of one replica, for tests that break it."""

    def _copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(replicas[name], target)
        return target

    return _copy

"""Fixtures of the fault tests: a 30-post sample and one uninterrupted run of the harness's experiment."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.faults import harness
from tiers import fixture_tier


@pytest.fixture(scope="session")
def fault_sample(tmp_path_factory) -> Path:
    from faina.data.synthetic import write_sample

    folder = tmp_path_factory.mktemp("sample30")
    write_sample(folder, posts=30, seed=5)
    return folder


@pytest.fixture(scope="session")
@fixture_tier("e2e")
def uninterrupted(tmp_path_factory, tiny_encoder, fault_sample) -> dict[str, bytes]:
    """The results folder of the experiment run once without faults (what every faulted run must end with)."""
    root = tmp_path_factory.mktemp("uninterrupted")
    result = harness.run(harness.command(root, tiny_encoder, fault_sample))
    assert result.returncode == 0, harness.describe(result)
    files = harness.snapshot(root)
    assert {
        "results.md",
        "results.json",
        "fold0/metrics.json",
        "fold1/predictions.tsv",
        "fold1/model.safetensors",
    } <= set(files)
    return files

"""``checkpoint.average_last``: a run killed inside the averaging window and rerun ends with the same files, byte
for byte, as the run that was never killed (the running mean travels in ``last.ckpt``), and the fold says it
predicted with the mean."""

from __future__ import annotations

import json

import pytest

from runner.faults import harness
from runner.faults.test_kill_and_rerun import assert_same_results

pytestmark = pytest.mark.e2e

AVERAGED = ("trainer.max_epochs=3", "checkpoint.average_last=2")


def test_killed_while_averaging_and_rerun_gives_the_same_model(tmp_path, tiny_encoder, fault_sample):
    clean_root, faulted_root = tmp_path / "clean", tmp_path / "faulted"
    clean = harness.run(harness.command(clean_root, tiny_encoder, fault_sample, *AVERAGED))
    assert clean.returncode == 0, harness.describe(clean)
    assert "fold 0 predicts with the mean of the last 2 epochs' weights" in clean.stderr
    metrics = json.loads((harness.experiment_dir(clean_root) / "fold0" / "metrics.json").read_text())
    assert metrics["averaged_epochs"] == 2

    # fold 0: 3 batches an epoch; the 7th batch is epoch 2's first, after epoch 1 went into the mean
    cmd = harness.command(faulted_root, tiny_encoder, fault_sample, *AVERAGED)
    first = harness.run(cmd, kill_at="train-batch@7")
    assert harness.killed(first), harness.describe(first)
    second = harness.run(cmd)
    assert second.returncode == 0, harness.describe(second)
    assert "fold 0: resuming from" in second.stderr
    assert_same_results(faulted_root, harness.snapshot(clean_root))

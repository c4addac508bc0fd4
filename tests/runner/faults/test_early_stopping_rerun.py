"""``early_stopping.patience``: a run killed after a fold decided to stop, or in the middle of the epochs it waits
through, and rerun ends with the same files, byte for byte, as the run that was never killed (the callback's
counters travel in ``last.ckpt``, and a fold that had stopped stays stopped)."""

from __future__ import annotations

import json

import pytest

from runner.faults import harness
from runner.faults.test_kill_and_rerun import assert_same_results
from tiers import fixture_tier

pytestmark = pytest.mark.e2e

# on the harness's 30 posts, fold 0 stops after 2 of 8 epochs and fold 1 after 4 (its best dev F1 in its 3rd)
STOPPING = ("trainer.max_epochs=8", "early_stopping.patience=1")
BATCHES_PER_EPOCH = 3


@pytest.fixture(scope="module")
@fixture_tier("e2e")
def stopped_clean(tmp_path_factory, tiny_encoder, fault_sample) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("stopped-clean")
    clean = harness.run(harness.command(root, tiny_encoder, fault_sample, *STOPPING))
    assert clean.returncode == 0, harness.describe(clean)
    for fold, epochs in ((0, 2), (1, 4)):
        metrics = json.loads((harness.experiment_dir(root) / f"fold{fold}" / "metrics.json").read_text())
        assert metrics["early_stopping"] == {"patience": 1, "epochs_trained": epochs, "stopped_early": True}
    return harness.snapshot(root)


@pytest.mark.parametrize("fold_done", [1, 2])
def test_killed_after_a_fold_stopped_and_rerun_trains_no_further_epoch(
    tmp_path, tiny_encoder, fault_sample, stopped_clean, fold_done
):
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample, *STOPPING)
    first = harness.run(cmd, kill_at=f"trained@{fold_done}")  # after the fold's fit, before its prediction
    assert harness.killed(first), harness.describe(first)
    second = harness.run(cmd)
    assert second.returncode == 0, harness.describe(second)
    assert f"fold {fold_done - 1}: resuming from" in second.stderr
    assert_same_results(tmp_path, stopped_clean)


def test_killed_while_waiting_for_an_improvement_and_rerun_waits_the_same(
    tmp_path, tiny_encoder, fault_sample, stopped_clean
):
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample, *STOPPING)
    # fold 0's 2 epochs, then fold 1's first 3: the kill lands in fold 1's 4th epoch, the one without improvement
    batch = 2 * BATCHES_PER_EPOCH + 3 * BATCHES_PER_EPOCH + 2
    first = harness.run(cmd, kill_at=f"train-batch@{batch}")
    assert harness.killed(first), harness.describe(first)
    second = harness.run(cmd)
    assert second.returncode == 0, harness.describe(second)
    assert "fold 1: resuming from" in second.stderr
    assert_same_results(tmp_path, stopped_clean)

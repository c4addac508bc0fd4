"""A run killed at any point and rerun ends exactly where an uninterrupted run ends (same files, same bytes).

Each test kills a real ``train.py`` (SIGKILL, at a named point: ``common.faults``), reruns the same command,
possibly killing it again further on, and finally compares the results folder with the uninterrupted run's.
"""

from __future__ import annotations

import pytest

from common.checkpointing import checkpoint_damage
from runner.faults import harness

pytestmark = pytest.mark.e2e


def assert_same_results(root, uninterrupted, config_differs: bool = False):
    files = harness.snapshot(root)
    if config_differs:  # the run's own config.yaml names its settings; everything it produced must be the same
        files.pop("config.yaml"), (uninterrupted := dict(uninterrupted)).pop("config.yaml")
    assert sorted(files) == sorted(uninterrupted)  # nothing missing, no leftover checkpoint or partial file
    for name, data in uninterrupted.items():
        assert files[name] == data, f"{name} differs from the uninterrupted run's"


def test_killed_mid_epoch_and_between_folds(tmp_path, tiny_encoder, fault_sample, uninterrupted):
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample)
    fold0 = harness.experiment_dir(tmp_path) / "fold0"

    # fold 0, epoch 1, batch 2 of 3: epoch 0's checkpoint is on disk, no result yet
    first = harness.run(cmd, kill_at="train-batch@5")
    assert harness.killed(first), harness.describe(first)
    assert checkpoint_damage(fold0 / "checkpoints" / "last.ckpt") is None
    assert not (fold0 / "metrics.json").exists()

    # resumed mid-fold, finished fold 0, killed before fold 1 started
    second = harness.run(cmd, kill_at="fold-done@1")
    assert harness.killed(second), harness.describe(second)
    assert "fold 0: resuming from" in second.stderr
    assert (fold0 / "metrics.json").is_file() and not (fold0 / "checkpoints").exists()
    assert not (fold0.parent / "fold1").exists()

    last = harness.run(cmd)
    assert last.returncode == 0, harness.describe(last)
    assert "fold 0: finished earlier" in last.stderr
    assert_same_results(tmp_path, uninterrupted)


def test_killed_at_the_default_resume_interval_trains_the_fold_again_to_the_same_files(
    tmp_path, tiny_encoder, fault_sample, uninterrupted
):
    # the default interval (a resume point after 10 minutes of training) writes none in a fold this short: a kill
    # mid-fold leaves no checkpoint, and the rerun trains the fold from scratch, to the same bytes
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample, every_epoch=False)
    fold0 = harness.experiment_dir(tmp_path) / "fold0"
    first = harness.run(cmd, kill_at="train-batch@5")
    assert harness.killed(first), harness.describe(first)
    assert not (fold0 / "checkpoints" / "last.ckpt").exists() and not (fold0 / "metrics.json").exists()

    last = harness.run(cmd)
    assert last.returncode == 0, harness.describe(last)
    assert "resuming from" not in last.stderr
    assert_same_results(tmp_path, uninterrupted, config_differs=True)


@pytest.mark.slow
def test_killed_during_every_write(tmp_path, tiny_encoder, fault_sample, uninterrupted):
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample)
    exp = harness.experiment_dir(tmp_path)
    fold0 = exp / "fold0"
    partials = lambda: sorted(p.name for p in exp.rglob(".*.tmp"))  # noqa: E731

    # halfway through writing epoch 1's checkpoint: epoch 0's stays whole
    result = harness.run(cmd, kill_at="write:last.ckpt@2")
    assert harness.killed(result), harness.describe(result)
    assert checkpoint_damage(fold0 / "checkpoints" / "last.ckpt") is None
    assert any(name.startswith(".last.ckpt.") for name in partials())

    # after training, before the prediction file
    result = harness.run(cmd, kill_at="trained@1")
    assert harness.killed(result), harness.describe(result)
    assert "a partial file of an interrupted run" in result.stderr and "fold 0: resuming from" in result.stderr
    assert not (fold0 / "predictions.tsv").exists()

    # while exporting the model, then while writing the fold's metrics
    for point, file in (("write:model.safetensors@1", "model.safetensors"), ("write:metrics.json@1", "metrics.json")):
        result = harness.run(cmd, kill_at=point)
        assert harness.killed(result), harness.describe(result)
        assert not (fold0 / file).exists(), f"a half-written {file} is in place"

    # while writing the results table (both folds finished)
    result = harness.run(cmd, kill_at="write:results.md@1")
    assert harness.killed(result), harness.describe(result)
    assert (exp / "fold1" / "metrics.json").is_file() and not (exp / "results.md").exists()

    result = harness.run(cmd)
    assert result.returncode == 0, harness.describe(result)
    assert partials() == []
    assert_same_results(tmp_path, uninterrupted)
    # fold 0 last ran resumed after its training: no validation pass of its best epoch in memory, so its rule and
    # calibration were fitted on a new dev pass, to the same files as the uninterrupted run's validation pass
    assert harness.fold_notes(tmp_path, 0)["dev_pass"] == "new"
    assert harness.fold_notes(tmp_path, 1)["dev_pass"] == "validation"


@pytest.mark.slow
def test_damaged_checkpoint_and_metrics_are_named_and_redone(tmp_path, tiny_encoder, fault_sample, uninterrupted):
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample)
    fold0 = harness.experiment_dir(tmp_path) / "fold0"
    result = harness.run(cmd, kill_at="train-batch@5")
    assert harness.killed(result), harness.describe(result)
    last = fold0 / "checkpoints" / "last.ckpt"
    last.write_bytes(last.read_bytes()[: last.stat().st_size // 2])  # truncated, as by a full disk elsewhere

    result = harness.run(cmd, kill_at="fold-done@1")
    assert harness.killed(result), harness.describe(result)
    assert f"fold 0: {last} is damaged" in result.stderr and "from scratch" in result.stderr
    assert "Traceback" not in result.stderr

    metrics = fold0 / "metrics.json"
    metrics.write_text(metrics.read_text()[:100])  # cut short
    result = harness.run(cmd)
    assert result.returncode == 0, harness.describe(result)
    assert f"fold 0: {metrics} is damaged" in result.stderr and "running the fold again" in result.stderr
    assert "Traceback" not in result.stderr
    assert_same_results(tmp_path, uninterrupted)


def test_sigterm_exits_143_with_one_message_and_a_rerun_resumes(tmp_path, tiny_encoder, fault_sample, uninterrupted):
    """A scheduler's or ``kill``'s SIGTERM: Lightning stops after the batch with a ``SystemExit`` that has no code,
    which would make the killed run exit 0 as if finished; ``train.py`` exits 143 and says how to resume."""
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample)
    fold0 = harness.experiment_dir(tmp_path) / "fold0"
    stopped = harness.run(cmd, kill_at="train-batch@5:TERM")
    assert stopped.returncode == 143, harness.describe(stopped)
    assert "received SIGTERM" in stopped.stderr and "Rerun the same command" in stopped.stderr
    assert "Traceback" not in stopped.stderr and not (fold0 / "metrics.json").exists()
    assert checkpoint_damage(fold0 / "checkpoints" / "last.ckpt") is None
    last = harness.run(cmd)
    assert last.returncode == 0, harness.describe(last)
    assert "fold 0: resuming from" in last.stderr
    assert_same_results(tmp_path, uninterrupted)

"""A multi-task run (``task=multi``: span-f and post-f of one corpus, smoothed sampling that draws the small entry
again) killed mid-epoch and between folds, then rerun, ends with the uninterrupted run's files byte for byte: the
entries' batch order is a function of (seed, epoch), and the whole model resumes from its last checkpoint."""

from __future__ import annotations

import sys

import pytest

from runner.faults import harness

pytestmark = pytest.mark.e2e


def command(root, encoder, sample):
    return [
        sys.executable,
        "train.py",
        "task=multi",
        f"task.entries.span_f.data.train_path={sample / 'sample.conll'}",
        "task.entries.span_f.data.test_path=null",
        f"task.entries.post_f.data.train_path={sample / 'sample.conll'}",
        "task.entries.post_f.weight=0.5",
        "task.sampling.alpha=0.5",
        "cv.num_folds=2",
        "trainer.max_epochs=2",
        "loader.batch_size=4",
        "callbacks=none",
        "logger=csv",
        f"paths.root_dir={root}",
        f"encoder.name_or_path={encoder}",
        f"name={harness.NAME}",
        "checkpoint.resume_every_n_epochs=1",
    ]


def test_a_killed_multi_task_run_resumes_to_the_same_files(tmp_path, tiny_encoder, fault_sample):
    whole = tmp_path / "whole"
    done = harness.run(command(whole, tiny_encoder, fault_sample))
    assert done.returncode == 0, harness.describe(done)
    expected = harness.snapshot(whole)
    assert {"fold0/heads.json", "fold1/span_f/model.safetensors", "fold1/post_f/predictions.tsv"} <= set(expected)

    faulted = tmp_path / "faulted"
    cmd = command(faulted, tiny_encoder, fault_sample)
    first = harness.run(cmd, kill_at="train-batch@9")  # epoch 1 (an epoch: 6 batches of the 2 entries)
    assert harness.killed(first), harness.describe(first)
    second = harness.run(cmd, kill_at="fold-done@1")
    assert harness.killed(second), harness.describe(second)
    assert "fold 0: resuming from" in second.stderr
    last = harness.run(cmd)
    assert last.returncode == 0, harness.describe(last)
    files = harness.snapshot(faulted)
    assert sorted(files) == sorted(expected)
    for name, data in expected.items():
        assert files[name] == data, f"{name} differs from the uninterrupted run's"

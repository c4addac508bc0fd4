"""The same command runs under Lightning DDP: 2 CPU processes with the gloo backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests_paths import REPO


@pytest.mark.slow
def test_ddp_two_cpu_processes(tiny_encoder, small_sample, tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "train.py",
        "task=span-f",
        "trainer=ddp",
        "trainer.accelerator=cpu",
        "trainer.devices=2",
        "trainer.max_epochs=1",
        "cv.num_folds=2",
        "callbacks=none",
        "logger=csv",
        "loader.batch_size=8",
        f"paths.root_dir={tmp_path}",
        f"encoder.name_or_path={tiny_encoder}",
        "data=custom",
        f"data.train_path={small_sample / 'sample.conll'}",
        "name=ddp",
    ]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "distributed_backend=gloo" in result.stderr + result.stdout or "gloo" in result.stderr + result.stdout
    summary = json.loads((tmp_path / "results" / "ddp" / "results.json").read_text())
    # both folds trained under DDP; rank 0 predicted every test post of each fold on one device
    assert [f["fold"] for f in summary["folds"]] == [0, 1]
    assert sum(f["test_posts"] for f in summary["folds"]) == 60
    gold = (tmp_path / "results" / "ddp" / "fold0" / "gold.conll").read_text().count("# post_id")
    pred = (tmp_path / "results" / "ddp" / "fold0" / "predictions.conll").read_text().count("# post_id")
    assert gold == pred == summary["folds"][0]["test_posts"]

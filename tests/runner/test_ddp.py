"""The same command runs under Lightning DDP: 2 CPU processes with the gloo backend."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

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
    log = result.stderr + result.stdout
    assert "distributed_backend=gloo" in log
    # two processes joined the process group, one line per rank
    assert "GLOBAL_RANK: 0, MEMBER: 1/2" in log and "GLOBAL_RANK: 1, MEMBER: 2/2" in log
    summary = json.loads((tmp_path / "results" / "ddp" / "results.json").read_text())
    # both folds trained under DDP; rank 0 predicted every test post of each fold on one device
    assert [f["fold"] for f in summary["folds"]] == [0, 1]
    assert sum(f["test_posts"] for f in summary["folds"]) == 60
    gold = (tmp_path / "results" / "ddp" / "fold0" / "gold.conll").read_text().count("# post_id")
    pred = (tmp_path / "results" / "ddp" / "fold0" / "predictions.conll").read_text().count("# post_id")
    assert gold == pred == summary["folds"][0]["test_posts"]


def _dropout_free_copy(encoder: str, folder: Path) -> Path:
    """The tiny encoder without dropout: with nothing random in a step, DDP must repeat one process exactly."""
    shutil.copytree(encoder, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _train(tmp_path: Path, encoder: Path, sample: Path, name: str, *trainer: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "train.py",
        "task=span-f",
        *trainer,
        "trainer.max_epochs=3",
        "cv.num_folds=2",
        "cv.folds=[0]",
        "cv.dev_fraction=0.25",
        "callbacks=none",
        "logger=csv",
        "loader.batch_size=8",
        "model.dropout=0",
        f"paths.root_dir={tmp_path}",
        f"encoder.name_or_path={encoder}",
        "data=custom",
        f"data.train_path={sample / 'sample.conll'}",
        f"name={name}",
    ]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _dev_epochs(fold: Path) -> list[tuple[float, float, float]]:
    rows = list(csv.DictReader((fold / "logs" / "metrics.csv").open()))
    return [
        (float(r["val/f1"]), float(r["val/gold_spans"]), float(r["val/predicted_spans"]))
        for r in rows
        if r.get("val/f1")
    ]


@pytest.mark.slow
@pytest.mark.e2e
def test_two_ddp_processes_train_like_one(tiny_encoder, small_sample, tmp_path):
    """loader.batch_size is the effective batch: two processes take 4 posts each of the one-process batch of 8,
    so every step, the schedule and the scores are the one-process run's. With dropout off nothing random is left
    in a step; what may differ is the order of float sums in the gradient all-reduce (~1e-7 relative), far below
    the tolerances (1e-4 on each epoch's dev F1, 0.1 points of test F1). The old behaviour (8 posts per process,
    half the steps) moved dev F1 by 5e-3 at the second epoch and test strict F1 by 0.35 points on this run."""
    encoder = _dropout_free_copy(tiny_encoder, tmp_path / "encoder")
    _train(tmp_path, encoder, small_sample, "one", "trainer.devices=1")
    ddp = _train(tmp_path, encoder, small_sample, "two", "trainer=ddp", "trainer.accelerator=cpu", "trainer.devices=2")
    # two processes really ran: each joined the process group (Lightning prints one line per rank)
    assert "GLOBAL_RANK: 0, MEMBER: 1/2" in ddp.stderr and "GLOBAL_RANK: 1, MEMBER: 2/2" in ddp.stderr
    one_fold, two_fold = tmp_path / "results" / "one" / "fold0", tmp_path / "results" / "two" / "fold0"
    one, two = _dev_epochs(one_fold), _dev_epochs(two_fold)
    assert len(one) == len(two) == 3
    for (f1_one, gold_one, pred_one), (f1_two, gold_two, pred_two) in zip(one, two):
        assert f1_two == pytest.approx(f1_one, abs=1e-4)
        assert (gold_two, pred_two) == (gold_one, pred_one)  # counts are sums over the processes, every post once
    one_metrics = json.loads((one_fold / "metrics.json").read_text())
    two_metrics = json.loads((two_fold / "metrics.json").read_text())
    strict = [m["test"]["strict"]["avg"]["f1"] for m in (one_metrics, two_metrics)]
    assert strict[1] == pytest.approx(strict[0], abs=1e-3) and strict[0] > 0
    # each line of the log once: rank 1 does not repeat rank 0's progress
    features = [line for line in ddp.stderr.splitlines() if line.startswith("features of")]
    assert len(features) == 1, features


def test_a_batch_that_does_not_split_over_the_processes_is_one_message():
    from types import SimpleNamespace

    from common.errors import UserError
    from faina.data.datamodule import FainaDataModule
    from faina.data.folds import FoldSplit

    module = FainaDataModule([], FoldSplit(0, [], [], []), 0, batch_size=6)
    module.trainer = SimpleNamespace(distributed_sampler_kwargs={"num_replicas": 4, "rank": 1})
    with pytest.raises(UserError, match=r"loader.batch_size=6 is not a multiple of the 4 training processes"):
        module.processes()
    module.trainer = SimpleNamespace(distributed_sampler_kwargs={"num_replicas": 3, "rank": 2})
    assert module.processes() == (3, 2)


def _train_multi(tmp_path: Path, encoder: Path, sample: Path, name: str, *trainer: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    conll = sample / "sample.conll"
    command = [
        sys.executable, "train.py", "task=multi", *trainer, "trainer.max_epochs=2", "cv.num_folds=2", "cv.folds=[0]",
        "cv.dev_fraction=0.25", "callbacks=none", "logger=csv", "loader.batch_size=8",
        "task.entries.span_f.model.dropout=0", "task.entries.post_f.model.dropout=0",
        f"task.entries.span_f.data.train_path={conll}", f"task.entries.post_f.data.train_path={conll}",
        f"paths.root_dir={tmp_path}", f"encoder.name_or_path={encoder}", f"name={name}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _multi_dev_epochs(fold: Path) -> list[tuple]:
    """Per validation, the optimiser steps so far and each entry's dev F1 and counts."""
    rows = list(csv.DictReader((fold / "logs" / "metrics.csv").open()))
    keys = ("val/span_f/f1", "val/post_f/f1", "val/span_f/gold_spans", "val/post_f/gold_labels")
    return [(int(r["step"]), *(float(r[k]) if r.get(k) else None for k in keys)) for r in rows if r.get("val/f1")]


@pytest.mark.slow
@pytest.mark.e2e
def test_a_multi_task_run_under_two_ddp_processes_trains_like_one(tiny_encoder, small_sample, tmp_path):
    """``task=multi`` under DDP: every process takes the same entry at each step and half of its batch, so the run
    makes the one-process run's optimiser steps and its dev scores per entry match it (dropout off: nothing random
    is left in a step but the order of the gradient all-reduce's float sums)."""
    encoder = _dropout_free_copy(tiny_encoder, tmp_path / "encoder")
    _train_multi(tmp_path, encoder, small_sample, "one", "trainer.devices=1")
    ddp = _train_multi(
        tmp_path, encoder, small_sample, "two", "trainer=ddp", "trainer.accelerator=cpu", "trainer.devices=2"
    )
    assert "GLOBAL_RANK: 0, MEMBER: 1/2" in ddp.stderr and "GLOBAL_RANK: 1, MEMBER: 2/2" in ddp.stderr
    one_fold, two_fold = tmp_path / "results" / "one" / "fold0", tmp_path / "results" / "two" / "fold0"
    one, two = _multi_dev_epochs(one_fold), _multi_dev_epochs(two_fold)
    assert len(one) == len(two) == 2
    for first, second in zip(one, two):
        assert first[0] == second[0] > 0  # the same optimiser steps at each validation
        assert first[1:3] == pytest.approx(second[1:3], abs=1e-4)  # each entry's dev F1
        assert first[3:] == second[3:]  # dev counts: sums over the processes, every post once
    for entry in ("span_f", "post_f"):
        scores = [
            json.loads((fold / "metrics.json").read_text())["entries"][entry]["test"] for fold in (one_fold, two_fold)
        ]
        assert scores[1]["strict"]["avg"]["f1"] == pytest.approx(scores[0]["strict"]["avg"]["f1"], abs=1e-3)

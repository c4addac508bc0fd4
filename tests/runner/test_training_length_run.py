"""How long a fold trains, through ``train.run``: with ``early_stopping.patience`` a fold stops ``patience`` epochs
after its best dev F1, predicts with that epoch's weights, and has trained exactly the first epochs of the same fold
without stopping (the schedule's length stays ``trainer.max_epochs``); with ``trainer.max_steps`` it trains that
many optimiser steps, however many epochs they make; either with ``checkpoint.average_last`` is refused."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from common.errors import UserError
from faina.training.cross_validation import check_training_length
from train import run

LENGTH = ("task=post-c", "cv.folds=[0]", "trainer.max_epochs=10", "loader.batch_size=4", "logger=csv")


def dev_f1_by_epoch(fold: Path) -> list[float]:
    return [float(row["val/f1"]) for row in csv.DictReader((fold / "logs" / "metrics.csv").open()) if row["val/f1"]]


@pytest.mark.e2e
def test_a_fold_stops_after_its_patience_and_keeps_its_best_dev_epoch(make_cfg):
    stopped_cfg = make_cfg(*LENGTH, "early_stopping.patience=2", "name=stopped")
    run(stopped_cfg)
    fold = Path(stopped_cfg.paths.results_dir) / "stopped" / "fold0"
    metrics = json.loads((fold / "metrics.json").read_text())
    curve = dev_f1_by_epoch(fold)
    best = max(range(len(curve)), key=lambda epoch: (curve[epoch], -epoch))  # the first epoch of the best score
    assert metrics["early_stopping"]["stopped_early"] is True
    assert metrics["early_stopping"]["epochs_trained"] == len(curve) == best + 1 + 2 < 10
    assert metrics["best_dev_f1"] == pytest.approx(curve[best])

    full_cfg = make_cfg(*LENGTH, "name=full")
    run(full_cfg)
    full = Path(full_cfg.paths.results_dir) / "full" / "fold0"
    assert "early_stopping" not in json.loads((full / "metrics.json").read_text())
    full_curve = dev_f1_by_epoch(full)
    assert len(full_curve) == 10 and full_curve[: len(curve)] == curve  # the same epochs, then more


@pytest.mark.e2e
def test_a_step_budget_trains_that_many_steps_whatever_the_epochs(make_cfg):
    cfg = make_cfg(*LENGTH, "trainer.max_epochs=null", "trainer.max_steps=20", "name=steps")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / "steps" / "fold0"
    train_posts = json.loads((fold / "metrics.json").read_text())["train_posts"]
    batches = math.ceil(train_posts / 4)
    rows = list(csv.DictReader((fold / "logs" / "metrics.csv").open()))
    assert max(int(row["step"]) for row in rows) < 20  # Lightning counts steps from 0
    assert len(dev_f1_by_epoch(fold)) == 20 // batches  # every whole epoch is validated; the checkpoint is one
    assert 20 // batches > 1


def test_early_stopping_and_the_mean_of_the_last_epochs_are_refused_together(make_cfg):
    cfg = make_cfg("task=post-c", "early_stopping.patience=3", "checkpoint.average_last=2")
    with pytest.raises(UserError, match="early_stopping.patience may stop the fold before them") as info:
        check_training_length(cfg)
    assert "early_stopping.patience=null" in info.value.fix
    with pytest.raises(UserError, match="early_stopping.patience must be a whole number"):
        run(make_cfg("task=post-c", "early_stopping.patience=0"))
    assert not (Path(cfg.paths.results_dir) / cfg.name).exists()  # refused before the experiment folder exists
    with pytest.raises(UserError, match="trainer.max_steps may end the fold before them"):
        check_training_length(make_cfg("task=post-c", "trainer.max_steps=100", "checkpoint.average_last=2"))
    check_training_length(make_cfg("task=post-c", "early_stopping.patience=3"))  # alone, each is fine
    check_training_length(make_cfg("task=post-c", "trainer.max_steps=100", "early_stopping.patience=3"))
    check_training_length(make_cfg("task=post-c", "checkpoint.average_last=2"))


@pytest.mark.e2e
def test_a_soft_run_stops_and_selects_on_its_dev_soft_loss(make_cfg):
    """With a min_delta no later epoch can beat, the run must stop after its first epoch plus its patience: the
    stop is certain, not a property of this run's curve, and the kept epoch is the lowest-loss one."""
    cfg = make_cfg(
        "task=post-f", "data.targets=soft", "cv.folds=[0]", "trainer.max_epochs=8", "loader.batch_size=4",
        "logger=csv", "early_stopping.patience=2", "early_stopping.min_delta=100", "name=soft",
    )  # fmt: skip
    run(cfg)
    fold = Path(cfg.paths.results_dir) / "soft" / "fold0"
    metrics = json.loads((fold / "metrics.json").read_text())
    rows = [row for row in csv.DictReader((fold / "logs" / "metrics.csv").open()) if row.get("val/loss")]
    loss = [float(row["val/loss"]) for row in rows]
    best = min(range(len(loss)), key=lambda epoch: (loss[epoch], epoch))  # the first epoch of the lowest loss
    assert metrics["selected_on"]["monitor"] == "val/loss" and metrics["selected_on"]["mode"] == "min"
    assert metrics["selected_on"]["epoch"] == best and metrics["selected_on"]["score"] == pytest.approx(loss[best])
    assert metrics["best_dev_f1"] == pytest.approx(float(rows[best]["val/f1"]))  # the kept epoch's F1, reported
    assert metrics["early_stopping"] == {"patience": 2, "epochs_trained": 3, "stopped_early": True}
    assert len(loss) == 3 < 8

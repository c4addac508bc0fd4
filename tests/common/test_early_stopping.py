"""``early_stopping``: Lightning's EarlyStopping on the checkpoint's dev metric, off by default, one message for a
bad value, a stopped fold stays stopped when resumed, and a run that logs no dev metric is told so."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from common.early_stopping import DevEarlyStopping, check_patience
from common.errors import UserError
from common.experiments import experiment_identity
from faina.training.run_settings import early_stopping as early_stopping_callback
from helpers.configs import compose_train


def fake_trainer(**metrics: float) -> SimpleNamespace:
    """What the callback reads of a Trainer at an epoch's end (the strategy decides alone, as one process does)."""
    return SimpleNamespace(
        callback_metrics={name: torch.tensor(value) for name, value in metrics.items()},
        fast_dev_run=False,
        sanity_checking=False,
        should_stop=False,
        current_epoch=0,
        state=SimpleNamespace(fn="fit"),
        strategy=SimpleNamespace(reduce_boolean_decision=lambda decision, all: decision),
    )


def test_off_by_default_and_on_with_a_patience_watching_the_checkpoints_metric():
    assert compose_train().early_stopping.patience is None
    assert early_stopping_callback(compose_train()) is None
    callback = early_stopping_callback(compose_train("early_stopping.patience=4", "checkpoint.monitor=val/loss"))
    assert isinstance(callback, DevEarlyStopping)
    # checkpoint.mode follows the monitored name (min for a loss) unless set
    assert (callback.patience, callback.monitor, callback.mode) == (4, "val/loss", "min")
    assert early_stopping_callback(compose_train("early_stopping.patience=4", "checkpoint.mode=min")).mode == "min"
    overridden = compose_train("early_stopping.patience=4", "checkpoint.monitor=val/loss", "checkpoint.mode=max")
    assert early_stopping_callback(overridden).mode == "max"


def test_a_soft_target_run_stops_on_its_dev_soft_loss_going_down():
    # data.targets=soft selects its checkpoint on val/loss (min): early stopping watches the same measure, same way
    callback = early_stopping_callback(compose_train("data.targets=soft", "early_stopping.patience=2"))
    assert (callback.monitor, callback.mode) == ("val/loss", "min")
    trainer = fake_trainer(**{"val/loss": 0.5})
    for epoch, loss in enumerate([0.5, 0.4, 0.45, 0.41]):  # lowest at epoch 1, then two epochs without a new low
        trainer.current_epoch, trainer.callback_metrics["val/loss"] = epoch, torch.tensor(loss)
        callback.on_train_epoch_end(trainer, None)
    assert trainer.should_stop and callback.stopped_epoch == 3 and float(callback.best_score) == pytest.approx(0.4)
    views = early_stopping_callback(compose_train("early_stopping.patience=2"))
    assert (views.monitor, views.mode) == ("val/f1", "max")


@pytest.mark.parametrize("value", [0, -3, 2.5, "five", True])
def test_a_wrong_patience_is_one_message_naming_the_key(value):
    with pytest.raises(UserError, match="early_stopping.patience must be a whole number of epochs") as info:
        check_patience(value)
    assert "early_stopping.patience=5" in info.value.fix


def test_a_negative_min_delta_is_refused():
    with pytest.raises(UserError, match="early_stopping.min_delta must be a number ≥ 0"):
        early_stopping_callback(compose_train("early_stopping.patience=2", "early_stopping.min_delta=-0.1"))


def test_it_stops_after_patience_epochs_without_improvement():
    callback = DevEarlyStopping("val/f1", "max", patience=2)
    decisions = []
    for epoch, f1 in enumerate([0.1, 0.3, 0.2, 0.3, 0.25]):  # best at epoch 1; 2 and 3 do not improve on it
        trainer = fake_trainer(**{"val/f1": f1})
        trainer.current_epoch = epoch
        callback.on_train_epoch_end(trainer, None)
        decisions.append(trainer.should_stop)
        if trainer.should_stop:
            break
    assert decisions == [False, False, False, True] and callback.stopped and callback.stopped_epoch == 3


def test_a_fold_resumed_after_its_stopping_epoch_stays_stopped():
    """Lightning keeps the callback's counters in last.ckpt, not the trainer's should_stop: without this, a fold
    killed after it decided to stop would train another epoch when rerun."""
    stopped = DevEarlyStopping("val/f1", "max", patience=1)
    trainer = fake_trainer(**{"val/f1": 0.5})
    stopped.on_train_epoch_end(trainer, None)
    trainer = fake_trainer(**{"val/f1": 0.4})
    trainer.current_epoch = 1
    stopped.on_train_epoch_end(trainer, None)
    assert trainer.should_stop

    resumed = DevEarlyStopping("val/f1", "max", patience=1)
    resumed.load_state_dict(stopped.state_dict())
    fresh = fake_trainer()
    resumed.on_train_start(fresh, None)
    assert fresh.should_stop is True

    still_running = DevEarlyStopping("val/f1", "max", patience=3)
    still_running.load_state_dict(DevEarlyStopping("val/f1", "max", patience=3).state_dict())
    fresh = fake_trainer()
    still_running.on_train_start(fresh, None)
    assert fresh.should_stop is False


def test_a_run_without_the_dev_metric_is_one_message_naming_the_setting():
    callback = DevEarlyStopping("val/f1", "max", patience=2)
    with pytest.raises(UserError, match="early_stopping.patience stops on the dev metric val/f1") as info:
        callback.on_train_epoch_end(fake_trainer(**{"train/loss": 1.0}), None)
    assert "early_stopping.patience=null" in info.value.fix and "train/loss" in info.value.fix


def test_results_written_before_the_setting_existed_are_the_same_experiment_while_it_is_off():
    """A folder whose experiment.json has no early_stopping block is rerun (finished folds reused) as long as the
    setting is off; turned on, the run is another configuration."""
    off, on = compose_train(), compose_train("early_stopping.patience=3")
    assert "early_stopping" not in experiment_identity(off)
    assert experiment_identity(on)["early_stopping"] == {"patience": 3, "min_delta": 0.0}
    assert experiment_identity(off) == {k: v for k, v in experiment_identity(on).items() if k != "early_stopping"}

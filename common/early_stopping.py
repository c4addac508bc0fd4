"""Training length that adapts to the corpus: stop a fold once its dev metric has stopped improving.

A fixed epoch count is too few for a small corpus and more than needed for a large one. ``early_stopping.patience:
N`` (``conf/train.yaml``; null, the default: off) stops a fold once the metric that picks its checkpoint
(``checkpoint.monitor`` / ``checkpoint.mode``: the dev F1, or the dev soft loss going down for
``data.targets=soft``) has not improved for N epochs in a row, so the weights that predict stay the best dev
epoch's (``common.checkpointing``), and ``trainer.max_epochs`` is the most it trains (and the length of the
learning-rate schedule, which is the same with and without stopping: a stopped fold has trained exactly the
first epochs of the fold that never stops). Measured in docs/benchmark-quality.md.

This is Lightning's ``EarlyStopping``, with two things a fold here needs:
- a resumed fold that had decided to stop stays stopped. Lightning keeps the callback's counters in
  ``last.ckpt`` but not the trainer's ``should_stop``, so a fold killed after its stopping epoch (between the last
  ``last.ckpt`` and the end of the fold) would train one more epoch when rerun, and could pick another epoch;
- a run that logs no dev metric (nothing to stop on) gets one message naming the setting, not a traceback.
"""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl
from lightning.pytorch.callbacks import EarlyStopping
from lightning.pytorch.callbacks.early_stopping import EarlyStoppingReason

from common.errors import UserError


def check_patience(value: Any) -> int | None:
    """``early_stopping.patience`` as a number of epochs (``None``: off), or one message naming the key and the fix."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(
            f"early_stopping.patience must be a whole number of epochs ≥ 1 (or null: off), not {value!r}",
            fix="set early_stopping.patience=5, or early_stopping.patience=null to train every epoch",
        )
    return value


def check_min_delta(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UserError(
            f"early_stopping.min_delta must be a number ≥ 0, not {value!r}",
            fix="set early_stopping.min_delta=0.0 (any improvement of the dev metric counts)",
        )
    return float(value)


class DevEarlyStopping(EarlyStopping):
    """Stops the fold after ``patience`` epochs without an improvement of ``monitor`` (the checkpoint's metric)."""

    def __init__(self, monitor: str, mode: str, patience: int, min_delta: float = 0.0):
        super().__init__(
            monitor=monitor,
            mode=mode,
            patience=check_patience(patience),
            min_delta=check_min_delta(min_delta),
            strict=False,  # a missing metric is reported below, as a UserError
            check_on_train_epoch_end=True,  # after the epoch's validation, before FoldCheckpoint writes last.ckpt
        )

    @property
    def stopped(self) -> bool:
        """Whether the fold stopped before ``trainer.max_epochs`` because the dev metric stopped improving."""
        return self.stopping_reason != EarlyStoppingReason.NOT_STOPPED

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        # resumed from a last.ckpt written after the stopping epoch: stop again before another epoch trains
        if self.stopped:
            trainer.should_stop = True

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not (trainer.fast_dev_run or trainer.sanity_checking) and self.monitor not in trainer.callback_metrics:
            raise UserError(
                f"early_stopping.patience stops on the dev metric {self.monitor} (checkpoint.monitor), and this run"
                " logs none",
                fix="leave early_stopping.patience=null for a run without a dev split, or set checkpoint.monitor to a"
                f" metric it logs ({', '.join(sorted(trainer.callback_metrics)) or 'none'})",
            )
        super().on_train_epoch_end(trainer, pl_module)


def early_stopping_callback(patience: Any, min_delta: Any, monitor: str, mode: str) -> DevEarlyStopping | None:
    """The fold's early stopping on ``monitor`` (the measure that selects its weights, in ``mode``), or ``None``
    when ``patience`` is null; both values checked with one message each."""
    patience = check_patience(patience)
    if patience is None:
        return None
    return DevEarlyStopping(monitor, mode, patience, 0.0 if min_delta is None else min_delta)

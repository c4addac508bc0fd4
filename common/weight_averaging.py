"""The mean of a fold's weights over its last N epochs: an ensemble of one run, at no extra training.

Why: a seed ensemble of K models costs K trainings and K forward passes per prediction. Averaging the weights a
single run passes through at the end of its last epochs (stochastic weight averaging over epoch ends, on the
run's own schedule) costs one extra copy of the weights in memory during those epochs and nothing at prediction.
Whether it pays is measured on real data in docs/benchmark-quality.md.

``checkpoint.average_last: N`` (0, the default: off). At the end of each of the last N of ``trainer.max_epochs``
epochs — after that epoch's validation, so the best-epoch tracking of ``common.checkpointing`` still sees the
weights as trained — the callback adds the weights to a running mean; the fold then predicts with the mean
instead of the best dev epoch's weights. Floating-point tensors are averaged (in float32); other tensors
(integer buffers) keep their latest value. The running mean and its count are part of the callback's state, so
``last.ckpt`` carries them and a killed run resumes to the same mean (plain tensors: ``weights_only=True``).
Averaging does not touch training (no optimiser state, no random numbers), so a run with it trains exactly as the
same run without it: the two are a paired comparison.
"""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import Callback

from common.errors import UserError


def check_average_last(value: Any, minimum: int = 0) -> int:
    """``checkpoint.average_last`` as a number of epochs (0: off), or one message naming the key and the fix."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UserError(
            f"checkpoint.average_last must be a whole number of epochs ≥ 1 (or 0: off), not {value!r}",
            fix="set checkpoint.average_last=3, or 0 to predict with the best dev epoch",
        )
    return value


class LastEpochsAverage(Callback):
    """Running mean of the module's ``state_dict`` at the end of each of the last ``last_epochs`` epochs."""

    def __init__(self, last_epochs: int):
        self.last_epochs = check_average_last(last_epochs, minimum=1)  # 0 (off) means no callback at all
        self.count = 0
        self.mean: dict[str, torch.Tensor] = {}

    @property
    def state_key(self) -> str:
        return f"LastEpochsAverage[{self.last_epochs}]"

    def averages(self, epoch: int, max_epochs: int) -> bool:
        """Whether the end of ``epoch`` (0-based) is one of the averaged ones."""
        return epoch >= max_epochs - self.last_epochs

    def add(self, state: dict[str, torch.Tensor]) -> None:
        """One more set of weights into the mean: m ← m + (w − m) / k (exact, no sum that could overflow)."""
        self.count += 1
        for name, value in state.items():
            value = value.detach().to("cpu")
            if not value.is_floating_point():
                self.mean[name] = value.clone()
            elif self.count == 1 or name not in self.mean:
                self.mean[name] = value.to(torch.float32, copy=True)
            else:
                self.mean[name] += (value.to(torch.float32) - self.mean[name]) / self.count

    def weights(self) -> dict[str, torch.Tensor]:
        """The averaged ``state_dict`` (``load_state_dict`` casts each tensor back to the module's dtype)."""
        return dict(self.mean)

    # --- Lightning hooks ---
    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.sanity_checking or trainer.fast_dev_run:
            return
        if self.averages(trainer.current_epoch, trainer.max_epochs):
            self.add(pl_module.state_dict())

    def state_dict(self) -> dict[str, Any]:
        return {"last_epochs": self.last_epochs, "count": self.count, "mean": self.mean}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.count = int(state_dict["count"])
        self.mean = dict(state_dict["mean"])

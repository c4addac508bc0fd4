"""Objects that tests put into configs by import path (tests/ is on the import path, see pyproject.toml)."""

from __future__ import annotations

import lightning.pytorch as pl


class SimulatedCrash(RuntimeError):
    """Stands for a killed job in the resume test."""


class CrashAfterEpoch(pl.Callback):
    """Raise after the given epoch's checkpoint is written, like a job killed mid-fold."""

    def __init__(self, epoch: int = 0):
        self.epoch = epoch

    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.current_epoch == self.epoch:
            raise SimulatedCrash(f"simulated crash after epoch {self.epoch}")

"""``common.checkpointing``: saving the resumable ``last.ckpt`` does not log Lightning's misleading
"`weights_only` was not set" note (every load here is ``weights_only=True``; the note is about what a save holds)."""

from __future__ import annotations

import logging

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from common.checkpointing import FoldCheckpoint
from helpers.tiny_regression import TinyRegression

NOTE = "`weights_only` was not set"


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_saving_the_full_checkpoint_does_not_log_the_weights_only_note(tmp_path, monkeypatch):
    connector = logging.getLogger("lightning.pytorch.trainer.connectors.checkpoint_connector")
    monkeypatch.setattr(connector, "filters", [])  # as in a fresh process, whatever earlier tests installed
    monkeypatch.setattr(connector, "level", logging.INFO)
    records = Records()
    connector.addHandler(records)
    try:
        trainer = pl.Trainer(
            max_epochs=1,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            accelerator="cpu",
        )
        trainer.fit(
            TinyRegression(features=2), DataLoader(TensorDataset(torch.randn(4, 2), torch.randn(4, 1)), batch_size=2)
        )
        trainer.save_checkpoint(tmp_path / "plain.ckpt")
        assert any(m.startswith(NOTE) for m in records.messages)  # what Lightning logs without the filter
        records.messages.clear()
        FoldCheckpoint(tmp_path / "fold", monitor=None)
        trainer.save_checkpoint(tmp_path / "fold.ckpt")
        assert not any(m.startswith(NOTE) for m in records.messages) and (tmp_path / "fold.ckpt").is_file()
    finally:
        connector.removeHandler(records)

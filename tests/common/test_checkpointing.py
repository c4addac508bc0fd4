"""``common.checkpointing``: saving the resumable ``last.ckpt`` does not log Lightning's misleading
"`weights_only` was not set" note (every load here is ``weights_only=True``; the note is about what a save holds)."""

from __future__ import annotations

import logging

import lightning.pytorch as pl
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from common.checkpointing import FoldCheckpoint
from helpers.tiny_regression import ScoredRegression, TinyRegression

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


# --- the resume interval and the best weights in memory ----------------------------------------------------------
def fit_scored(tmp_path, scores, **interval):
    import lightning.pytorch as pl

    checkpoint = FoldCheckpoint(tmp_path / "checkpoints", "val/f1", "max", **interval)
    module = ScoredRegression(scores)
    pl.Trainer(
        max_epochs=len(scores),
        logger=False,
        callbacks=[checkpoint],
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
    ).fit(module, DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)), batch_size=2))
    return checkpoint, module


def saved_epochs(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_by_default_a_short_fold_writes_no_checkpoint_and_predicts_from_the_best_weights_in_memory(tmp_path):
    checkpoint, module = fit_scored(tmp_path, [0.2, 0.5, 0.3])  # three epochs, well within 10 minutes
    assert saved_epochs(tmp_path / "checkpoints") == []
    assert checkpoint.best_epoch == 1
    best = checkpoint.best_weights()
    assert all(torch.equal(best[k], v) for k, v in module.weights_at_epoch[1].items())
    assert not all(torch.equal(best[k], v) for k, v in module.state_dict().items())  # training moved on


def test_every_n_epochs_writes_the_resume_point_with_the_best_weights_it_names(tmp_path):
    checkpoint, module = fit_scored(tmp_path, [0.2, 0.5, 0.3, 0.1], resume_every_n_epochs=2, resume_every_minutes=None)
    folder = tmp_path / "checkpoints"
    assert saved_epochs(folder) == ["best-epoch=1.safetensors", "last.ckpt"]
    last = torch.load(folder / "last.ckpt", weights_only=True)
    assert last["epoch"] == 3  # written at the ends of epochs 1 and 3; the last one stays
    state = next(v for k, v in last["callbacks"].items() if "FoldCheckpoint" in k)
    assert state["best_epoch"] == 1
    from common.checkpointing import load_weights

    written = load_weights(folder / "best-epoch=1.safetensors")
    assert all(torch.equal(written[k], v) for k, v in module.weights_at_epoch[1].items())


def test_zero_minutes_writes_a_resume_point_after_every_epoch(tmp_path, monkeypatch):
    import lightning.pytorch as pl

    epochs = []
    original = pl.Trainer.save_checkpoint

    def counting(self, path, *args, **kwargs):
        epochs.append(self.current_epoch)
        return original(self, path, *args, **kwargs)

    monkeypatch.setattr(pl.Trainer, "save_checkpoint", counting)
    fit_scored(tmp_path, [0.2, 0.5, 0.3], resume_every_minutes=0)
    assert epochs == [0, 1, 2]


def test_keep_ends_the_fold_with_a_resume_point(tmp_path):
    checkpoint, _ = fit_scored(tmp_path, [0.2, 0.5, 0.3], final_resume_point=True)
    assert saved_epochs(tmp_path / "checkpoints") == ["best-epoch=1.safetensors", "last.ckpt"]


@pytest.mark.parametrize(
    ("epochs", "minutes", "named"),
    [(0, None, "resume_every_n_epochs"), (1.5, None, "resume_every_n_epochs"), (None, -1, "resume_every_minutes")],
)
def test_a_wrong_interval_is_one_message_naming_its_key(tmp_path, epochs, minutes, named):
    from common.errors import UserError

    with pytest.raises(UserError, match=f"checkpoint.{named} must be"):
        FoldCheckpoint(tmp_path, resume_every_n_epochs=epochs, resume_every_minutes=minutes)

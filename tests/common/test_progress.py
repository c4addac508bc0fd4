"""Progress shows on a terminal and nowhere else: tqdm loops, Lightning's bar and the datasets library's bar."""

from __future__ import annotations

import io
import sys

import lightning as L
import torch

from common.progress import datasets_bars, on_terminal, progress
from common.progress_bar import TerminalProgressBar


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal and keeps what is written to it."""

    def isatty(self) -> bool:
        return True


def test_a_loop_draws_its_bar_on_a_terminal_only(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert on_terminal()
    assert list(progress(range(3), "tagging 3 posts")) == [0, 1, 2]
    assert "tagging 3 posts" in terminal.getvalue() and "3/3" in terminal.getvalue()
    log_file = io.StringIO()  # what a redirected stderr is
    monkeypatch.setattr(sys, "stderr", log_file)
    assert not on_terminal()
    assert list(progress(range(3), "tagging 3 posts")) == [0, 1, 2]
    assert log_file.getvalue() == ""


class _Doubler(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(1))

    def predict_step(self, batch, batch_idx):
        return batch * self.weight


def _predict(bar: TerminalProgressBar) -> list:
    trainer = L.Trainer(accelerator="cpu", logger=False, enable_checkpointing=False, callbacks=[bar])
    loader = torch.utils.data.DataLoader(torch.arange(4.0), batch_size=1)
    return trainer.predict(_Doubler(), loader)


def test_lightnings_bar_draws_on_a_terminal_and_is_quiet_in_a_log_file(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = TerminalProgressBar()
    assert bar.is_enabled
    assert len(_predict(bar)) == 4
    assert "Predicting" in terminal.getvalue()
    log_file = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log_file)
    bar = TerminalProgressBar()
    assert bar.is_disabled
    assert len(_predict(bar)) == 4
    assert "Predicting" not in log_file.getvalue()


def test_the_datasets_bar_is_off_in_a_log_file_and_restored_after(monkeypatch):
    import datasets

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert datasets.is_progress_bar_enabled()
    with datasets_bars():
        assert not datasets.is_progress_bar_enabled()
        datasets.Dataset.from_dict({"x": [1, 2, 3]}).map(lambda row: row, desc="tokenising posts")
    assert datasets.is_progress_bar_enabled()
    assert "tokenising posts" not in sys.stderr.getvalue()
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    with datasets_bars():
        assert datasets.is_progress_bar_enabled()

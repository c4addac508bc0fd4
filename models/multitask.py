"""One shared encoder, several heads: the LightningModule of a multi-task run (MaChAmp's shape).

``heads`` maps head names to ordinary single-task modules (``MVML`` / ``MVMD``) that all hold the *same* encoder
object. The encoder is registered once, here (``encoder``); inside each head it is a plain attribute, so the module's
state has one copy of it and a head's own state is its decoders only. ``standalone(head)`` re-attaches the encoder
to a head for as long as the caller needs a complete single-task model (fitting its decision rule, calibrating,
predicting, exporting it as a model folder that ``faina.predict`` reads like any other).

Entries (``entries``: name, head name, loss weight, in the data module's order) are what the batches come from: a
training batch carries ``entry`` and trains that entry's head, its loss times the entry's weight. Each entry is
validated on its own dev loader and logged as ``val/<entry>/...`` (its F1, per view, its loss, its predicted and gold
counts); ``val/f1`` (what selects the checkpoint) is the target entry's F1 (``selection: target``) or the mean of the
entries' F1 weighted by their loss weights (``selection: mean``), and ``val/loss`` the target's dev loss.

The optimiser follows the target's head: its optimiser and schedule, its discriminative decay over the encoder's
layers; each head's own parameters train at that head's ``head_lr``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import lightning as L
import torch
from torch import nn

from common.validation_outputs import ValidationOutputs
from models.base import FallacyModule, optimizer_with_schedule

SELECTIONS = ("target", "mean")


@dataclass(frozen=True)
class EntryHead:
    """An entry as the model sees it: its name, the head it trains and its loss weight."""

    name: str
    head: str
    weight: float


class MultiTaskModel(L.LightningModule):
    def __init__(
        self,
        heads: dict[str, FallacyModule],
        entries: Sequence[EntryHead],
        target: str,
        entry_metrics: dict[str, nn.Module],
        selection: str = "target",
    ):
        super().__init__()
        if selection not in SELECTIONS:
            raise ValueError(f"unknown selection {selection!r}; one of {', '.join(SELECTIONS)}")
        encoders = {id(head.encoder) for head in heads.values()}
        if len(encoders) != 1:
            raise ValueError("the heads of a multi-task model must share one encoder object")
        self.encoder = next(iter(heads.values())).encoder
        for head in heads.values():  # the encoder lives here; in each head it is a plain attribute
            del head._modules["encoder"]
            head.__dict__["encoder"] = self.encoder
        self.heads = nn.ModuleDict(heads)
        self.entries = list(entries)
        self.target = target
        self.selection = selection
        self.entry_metrics = nn.ModuleDict(entry_metrics)
        self._entry_counts = {entry.name: [0, 0, 0] for entry in self.entries}
        self._entry_gold_views: dict[str, dict[str, int]] = {entry.name: {} for entry in self.entries}
        self._logged: dict[str, float] = {}
        self._dev_loss: dict[str, tuple[float, int]] = {}
        self.validation_outputs = ValidationOutputs()  # per entry (its loader's index), when the runner records

    # --- the heads as single-task models ---------------------------------------------------------------
    @contextlib.contextmanager
    def standalone(self, head_name: str) -> Iterator[FallacyModule]:
        """The head ``head_name`` with the encoder registered in it again: a complete single-task model (its state
        holds the encoder, ``.to()`` moves it) until the block ends."""
        head = self.heads[head_name]
        del head.__dict__["encoder"]
        head._modules["encoder"] = self.encoder
        try:
            yield head
        finally:
            del head._modules["encoder"]
            head.__dict__["encoder"] = self.encoder

    def entry(self, position: int | torch.Tensor) -> EntryHead:
        return self.entries[int(position)]

    @contextlib.contextmanager
    def speaking_for(self, entry: EntryHead) -> Iterator[FallacyModule]:
        """The entry's head, logging under ``<split>/<entry>/...`` into this module's logs, with the entry's own dev
        metric and counts (entries sharing a head are scored apart)."""
        head = self.heads[entry.head]
        head.val_metric = self.entry_metrics[entry.name]
        head._counts["val"] = self._entry_counts[entry.name]
        head._gold_views = self._entry_gold_views[entry.name]
        head._trainer = self._trainer

        def log(name: str, value, **settings) -> None:
            split, _, rest = name.partition("/")
            settings.setdefault("add_dataloader_idx", False)
            self.log(f"{split}/{entry.name}/{rest}", value, **settings)
            self._logged[f"{split}/{entry.name}/{rest}"] = float(value)
            if split == "val" and rest == "loss":  # the entry's dev loss over the epoch, weighted by batch size
                size = settings.get("batch_size", 1)
                total, count = self._dev_loss.get(entry.name, (0.0, 0))
                self._dev_loss[entry.name] = (total + float(value) * size, count + size)

        head.__dict__["log"] = log
        try:
            yield head
        finally:
            del head.__dict__["log"]

    # --- training ----------------------------------------------------------------------------------------
    def training_step(self, batch, batch_idx):
        entry = self.entry(batch["entry"])
        loss = self.heads[entry.head].training_loss(batch)
        size = batch["input_ids"].shape[0]
        self.log(f"train/{entry.name}/loss", loss, batch_size=size, on_step=False, on_epoch=True)  # its epoch mean
        weighted = entry.weight * loss
        self.log("train/loss", weighted, prog_bar=True, batch_size=size)
        return weighted

    def validation_step(self, batch, batch_idx, dataloader_idx: int = 0):
        recorder = self.validation_outputs
        with self.speaking_for(self.entries[dataloader_idx]) as head:
            recorder.keep(dataloader_idx, head._evaluate(batch, "val", record=recorder.recording))

    def on_validation_epoch_start(self) -> None:
        for counts in self._entry_counts.values():
            counts[:] = [0, 0, 0]
        self._logged, self._dev_loss = {}, {}
        self.validation_outputs.start()

    def on_validation_epoch_end(self) -> None:
        for entry in self.entries:
            with self.speaking_for(entry) as head:
                head._finish_epoch("val")
        f1 = {entry.name: self._logged.get(f"val/{entry.name}/f1") for entry in self.entries}
        if all(value is not None for value in f1.values()):
            self.log("val/f1", self.selection_score(f1), prog_bar=True)
        total, count = self._dev_loss.get(self.target, (0.0, 0))
        if count:  # under DDP: the mean of the processes' (equal) shares
            self.log("val/loss", total / count, sync_dist=True)

    def selection_score(self, f1: dict[str, float]) -> float:
        """``val/f1``: the target's F1, or the entries' F1 weighted by their loss weights."""
        if self.selection == "target":
            return f1[self.target]
        total = sum(entry.weight for entry in self.entries)
        return sum(entry.weight * f1[entry.name] for entry in self.entries) / total

    # --- optimisation ------------------------------------------------------------------------------------
    def target_head(self) -> FallacyModule:
        return self.heads[self.entry_named(self.target).head]

    def encoder_layer_groups(self) -> list[list[nn.Parameter]]:
        """The shared encoder's trainable parameters by layer, bottom to top (what gradual unfreezing opens)."""
        return self.target_head().encoder_layer_groups()

    def configure_callbacks(self):
        """The target head's training callbacks (its gradual unfreezing), run on this model: they act on the shared
        encoder, which every head trains."""
        return self.target_head().configure_callbacks()

    def configure_optimizers(self):
        target = self.target_head()
        param_groups, lrs = target.parameter_groups()  # the encoder's layers and the target head's parameters
        for name, head in self.heads.items():
            if head is target:
                continue
            param_groups.append({"params": head.heads_parameters(), "name": f"heads.{name}"})
            lrs.append(("absolute", head.head_lr) if head.head_lr is not None else ("factor", 1.0))
        return optimizer_with_schedule(target, param_groups, lrs, self)

    def entry_named(self, name: str) -> EntryHead:
        return next(entry for entry in self.entries if entry.name == name)

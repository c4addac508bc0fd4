"""LightningDataModule of a multi-task run: training batches of one entry each, a dev loader per entry.

Each entry keeps its own ``FainaDataModule`` over its features and its fold split (what its dev loader, the fit of
its decision rule and calibration, and its predictions use, exactly as in a single-task run). The training loader
concatenates the entries' training posts and lets ``common.entry_sampling.EntryBatchSampler`` choose which entry
each batch comes from; every batch carries ``entry`` (the entry's position), so the model sends it to that entry's
head.
"""

from __future__ import annotations

from collections.abc import Sequence

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader

from common.entry_sampling import EntryBatchSampler
from common.errors import UserError
from faina.data.datamodule import FainaDataModule
from faina.data.features import Collator


class EntryCollator:
    """Pads one entry's features (``Collator``) and adds the entry's position as ``entry``."""

    def __init__(self, pad_token_id: int | None):
        self.collate = Collator(pad_token_id)

    def __call__(self, items: list[tuple[int, dict]]) -> dict:
        entries = {entry for entry, _ in items}
        if len(entries) != 1:
            raise ValueError(f"a batch mixes entries {sorted(entries)}")
        batch = self.collate([feature for _, feature in items])
        batch["entry"] = torch.tensor(entries.pop())
        return batch


class MultiEntryDataModule(pl.LightningDataModule):
    """``entries``: one ``FainaDataModule`` per entry (in the run's entry order); ``sampling``: the strategy,
    ``alpha`` and ``auxiliary_epochs`` of ``EntryBatchSampler``; ``target``: the target entry's position."""

    def __init__(
        self,
        entries: Sequence[FainaDataModule],
        batch_size: int,
        seed: int,
        strategy: str = "proportional",
        alpha: float = 1.0,
        auxiliary_epochs: int = 1,
        target: int = 0,
        length_grouped: bool = True,
    ):
        super().__init__()
        self.entries = list(entries)
        self.batch_size = batch_size
        self.seed = seed
        self.sampling = {"strategy": strategy, "alpha": alpha, "auxiliary_epochs": auxiliary_epochs, "target": target}
        self.length_grouped = length_grouped

    def train_items(self) -> list[tuple[int, dict]]:
        return [(position, entry.features[i]) for position, entry in enumerate(self.entries) for i in entry.split.train]

    def sampler(self, epoch: int = 0) -> EntryBatchSampler:
        lengths = [[len(entry.features[i]["input_ids"]) for i in entry.split.train] for entry in self.entries]
        return EntryBatchSampler(
            lengths, self.batch_size, seed=self.seed, length_grouped=self.length_grouped, epoch=epoch, **self.sampling
        )

    def train_dataloader(self) -> DataLoader:
        trainer = getattr(self, "trainer", None)
        shards = trainer.distributed_sampler_kwargs if trainer is not None else None
        if shards and shards["num_replicas"] > 1:
            raise UserError(
                "a multi-task run trains on one device (its batches of one entry each are not sharded yet)",
                fix="run it with trainer=default (or trainer.devices=1)",
            )
        sampler = self.sampler(trainer.current_epoch if trainer is not None else 0)
        pad = self.entries[0].collate.pad_token_id
        return DataLoader(self.train_items(), batch_sampler=sampler, collate_fn=EntryCollator(pad))

    def val_dataloader(self) -> list[DataLoader]:
        return [entry.val_dataloader() for entry in self.entries]

"""LightningDataModule of a multi-task run: training batches of one entry each, a dev loader per entry.

Each entry keeps its own ``FainaDataModule`` over its features and its fold split (what its dev loader, the fit of
its decision rule and calibration, and its predictions use, exactly as in a single-task run). The training loader
concatenates the entries' training posts and lets ``common.entry_sampling.EntryBatchSampler`` choose which entry
each batch comes from; every batch carries ``entry`` (the entry's position), so the model sends it to that entry's
head.

Under DDP the recipe stays the one-process recipe, as for one entry (``faina.data.datamodule``): every process draws
the same plan (a function of seed and epoch), so all of them take a batch of the same entry at each step, and
process r takes positions r, r + W, ... of that batch; ``loader.batch_size`` stays the effective batch of one
optimiser step. A batch with fewer posts than processes is padded with its own first posts, so every process steps
the same number of times (the padding repeats a post in that one step, as Lightning's distributed sampler does).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, Sampler

from common.entry_sampling import EntryBatchSampler
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

    @property
    def rebuilt_each_epoch(self) -> bool:
        """Whether the number of batches changes between epochs (``sequential``), so the loader must be rebuilt."""
        return self.sampling["strategy"] == "sequential"

    def processes(self) -> tuple[int, int]:
        """``(world size, rank)`` of the distributed run this module feeds, ``(1, 0)`` outside one; each entry's
        module takes the trainer too, so its dev loader is sharded the same way."""
        trainer = getattr(self, "trainer", None)
        for entry in self.entries:
            entry.trainer = trainer
        return self.entries[0].processes()

    def train_dataloader(self) -> DataLoader:
        trainer = getattr(self, "trainer", None)
        world, rank = self.processes()
        sampler = self.sampler(trainer.current_epoch if trainer is not None else 0)
        if world > 1:
            sampler = ShardedBatches(sampler, world, rank)
        pad = self.entries[0].collate.pad_token_id
        return DataLoader(self.train_items(), batch_sampler=sampler, collate_fn=EntryCollator(pad))

    def val_dataloader(self) -> list[DataLoader]:
        self.processes()
        return [entry.val_dataloader() for entry in self.entries]


class ShardedBatches(Sampler[list[int]]):
    """Process ``rank``'s share of each batch of ``batches``: positions rank, rank + world, ... of it, the batch
    padded with its first items to a multiple of ``world`` (every process takes a share of every batch)."""

    def __init__(self, batches: EntryBatchSampler, world: int, rank: int):
        self.batches, self.world, self.rank = batches, world, rank

    def set_epoch(self, epoch: int) -> None:
        self.batches.set_epoch(epoch)

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.batches:
            padded = batch + batch[: (-len(batch)) % self.world]
            while len(padded) < self.world:  # fewer posts than processes: repeat them
                padded += batch
            yield padded[self.rank : len(padded) - len(padded) % self.world : self.world]

    def __len__(self) -> int:
        return len(self.batches)

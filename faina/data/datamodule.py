"""LightningDataModule over pre-encoded posts and one fold's split.

Encoding happens once per experiment (``faina.data.features``); each fold only chooses indices, so five folds
tokenise the corpus once. The test loader is the fold's held-out posts (k-fold) or the unlabelled file
(cv=official); predictions carry ``post_index`` back to the records they came from.

Padding is most of the cost of a random batch (sample posts run from 10 to 220 words), so by default the
training batches are length-grouped (``common.length_batches``: random, but of similar lengths, in an
order that depends only on the seed and the epoch) and the evaluation loaders take the posts shortest
first; neither changes what is computed per post, and predictions find their posts by ``post_index``.

Under DDP the recipe stays the one-process recipe: ``batch_size`` is the effective batch of one optimiser step,
so each of the W processes takes ``batch_size / W`` posts, and process r takes positions r, r + W, ... of the
one-process order. Each step's W shards together are exactly the one-process batch (the same posts, the same
number of steps per epoch, the same schedule); the loss is a mean over posts and DDP averages the processes'
gradients, so the step is the one-process step. Dev and test posts are split without repeats (Lightning's own
sampler would pad with copies), so the metrics' sums over processes count each post once.
"""

from __future__ import annotations

from collections.abc import Sequence

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader

from common.errors import UserError
from common.length_batches import LengthGroupedSampler
from common.sampling import EpochShuffle
from faina.data.features import Collator
from faina.data.folds import FoldSplit


class FainaDataModule(pl.LightningDataModule):
    def __init__(
        self,
        features: Sequence[dict],
        split: FoldSplit,
        pad_token_id: int,
        batch_size: int = 32,
        num_workers: int = 0,
        predict_features: Sequence[dict] | None = None,
        seed: int = 0,
        length_grouped: bool = True,
        pool_batches: int = 8,
    ):
        super().__init__()
        self.features = features
        self.split = split
        self.collate = Collator(pad_token_id)
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.predict_features = predict_features
        self.seed = seed
        self.length_grouped = length_grouped
        self.pool_batches = pool_batches

    def _loader(self, features: Sequence[dict], shuffle: bool, one_device: bool = False) -> DataLoader:
        # the training order is a function of (seed, epoch) only (exact resume); the generator only feeds the
        # loader's worker seeds, so iterating the training data never draws from the global RNG that dropout uses
        features = list(features)
        lengths = [len(f["input_ids"]) for f in features]
        if shuffle:
            sampler = (
                LengthGroupedSampler(lengths, self.batch_size, seed=self.seed, pool_batches=self.pool_batches)
                if self.length_grouped
                else EpochShuffle(len(features), self.seed)
            )
        else:
            sampler = sorted(range(len(features)), key=lambda i: lengths[i]) if self.length_grouped else None
        world, rank = (1, 0) if one_device else self.processes()
        if world > 1:
            sampler = sharded(sampler if sampler is not None else range(len(features)), world, rank, repeat=shuffle)
        generator = torch.Generator().manual_seed(self.seed) if shuffle else None
        return DataLoader(
            features,
            batch_size=self.batch_size // world,
            sampler=sampler,
            collate_fn=self.collate,
            num_workers=self.num_workers,
            generator=generator,
        )

    def processes(self) -> tuple[int, int]:
        """``(world size, rank)`` of the distributed run this module feeds, ``(1, 0)`` outside one."""
        trainer = getattr(self, "trainer", None)  # set by Lightning when fit/validate/predict starts
        shards = trainer.distributed_sampler_kwargs if trainer is not None else None
        if not shards or shards["num_replicas"] == 1:
            return 1, 0
        world = int(shards["num_replicas"])
        if self.batch_size % world:
            raise UserError(
                f"loader.batch_size={self.batch_size} is not a multiple of the {world} training processes "
                "(devices x nodes): each process takes an equal share of every batch",
                fix=f"set loader.batch_size to a multiple of {world}, e.g. {world * max(1, self.batch_size // world)}",
            )
        return world, int(shards["rank"])

    def _subset(self, indices: Sequence[int]) -> list[dict]:
        return [self.features[i] for i in indices]

    def train_dataloader(self) -> DataLoader:
        return self._loader(self._subset(self.split.train), shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self._subset(self.split.dev), shuffle=False)

    def whole_dev_dataloader(self) -> DataLoader:
        """Every dev post on this process (for fitting decision rules after training, on rank 0 alone)."""
        return self._loader(self._subset(self.split.dev), shuffle=False, one_device=True)

    def test_dataloader(self) -> DataLoader:
        return self._loader(self._subset(self.split.test), shuffle=False)

    def predict_dataloader(self) -> DataLoader:
        if self.predict_features is not None:
            return self._loader(self.predict_features, shuffle=False)
        return self.test_dataloader()


def sharded(sampler, world: int, rank: int, repeat: bool):
    """Process ``rank``'s share of ``sampler``'s order: positions rank, rank + world, ... Training (``repeat``) pads
    the order with its first items to a multiple of ``world`` so every process takes the same number of steps
    (Lightning's ``DistributedSamplerWrapper`` with shuffling off: the order stays the sampler's); evaluation
    takes every post once (``UnrepeatedDistributedSamplerWrapper``). Both are ``DistributedSampler``s, which
    Lightning leaves in place."""
    from lightning.fabric.utilities.distributed import DistributedSamplerWrapper
    from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSamplerWrapper

    wrapper = DistributedSamplerWrapper if repeat else UnrepeatedDistributedSamplerWrapper
    return wrapper(sampler, num_replicas=world, rank=rank, shuffle=False)

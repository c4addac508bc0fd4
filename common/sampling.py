"""Shuffling that is a pure function of (seed, epoch), so a resumed run sees the batches it would have seen.

A ``DataLoader(shuffle=True, generator=g)`` draws each epoch's order from one generator that advances
epoch after epoch; a run resumed at epoch 3 starts a fresh generator and replays epoch 0's order instead
(one of the two causes of resumed folds drifting from uninterrupted ones). ``EpochShuffle`` computes the
order of epoch ``e`` from ``(seed, e)`` alone; Lightning tells it the epoch through ``set_epoch`` (as it
does for ``DistributedSampler``), so nothing about the loader needs saving in a checkpoint. Any other
sampler (length buckets, …) keeps resume exact by following the same rule.

The orders are exactly those the plain shuffled ``DataLoader`` drew: epoch ``e`` replays the generator
draws of epochs ``0 … e-1`` (per epoch: the loader's worker base seed, the permutation, and the permutation
``RandomSampler`` draws when its iterator runs out). Runs made before this change keep their numbers.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch.utils.data import RandomSampler


def _epoch_draws(generator: torch.Generator, size: int) -> torch.Tensor:
    """What one epoch of ``DataLoader(shuffle=True, generator=g)`` takes from ``g``; returns the order."""
    torch.empty((), dtype=torch.int64).random_(generator=generator)  # the loader iterator's base seed
    order = torch.randperm(size, generator=generator)
    torch.randperm(size, generator=generator)  # RandomSampler's trailing, empty slice of a second permutation
    return order


def epoch_order(size: int, seed: int, epoch: int) -> list[int]:
    """The shuffled indices ``0 … size-1`` of ``epoch`` (a pure function of its arguments)."""
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epoch):
        _epoch_draws(generator, size)
    return _epoch_draws(generator, size).tolist()


class EpochShuffle(RandomSampler):
    """A random order per epoch, the same for the same ``(seed, epoch)`` in any process.

    A ``RandomSampler`` to Lightning: under DDP it is replaced by Lightning's ``DistributedSampler``
    (shuffled, its order also a function of seed and epoch), exactly as the plain shuffled loader was.
    """

    def __init__(self, size: int, seed: int):
        super().__init__(range(size))
        self.size = size
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        return iter(epoch_order(self.size, self.seed, self.epoch))

    def __len__(self) -> int:
        return self.size

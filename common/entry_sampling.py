"""Which dataset each training batch of a multi-dataset run comes from, one dataset per batch.

The datasets' items are concatenated (dataset ``d`` at offsets ``offsets[d]``); each batch holds items of one dataset
only, batched as that dataset alone would be (length-grouped or shuffled, ``common.length_batches``). What differs is
how many batches of each dataset an epoch holds and in which order:

- ``proportional`` with smoothing ``alpha`` (MaChAmp's ``sampling_smoothing``): an epoch holds as many batches as
  one pass over every dataset (``N = Σ n_d``), dataset ``d`` contributing ``round(N · p_d)`` with ``p_d ∝ size_d^α``;
  ``alpha=1`` is one pass over each, ``alpha=0`` the same number of batches from each. The batches of the datasets
  are interleaved in a random order. A dataset asked for more batches than one pass goes round again (new pass,
  new order), one asked for fewer contributes the first ones of its pass.
- ``round-robin``: the datasets take turns, one batch each, until the largest has made one pass (smaller ones go
  round again).
- ``sequential`` (intermediate-task training): the first ``auxiliary_epochs`` epochs hold the batches of the
  datasets other than ``target`` (proportionally, as above), every later epoch the target's alone; the number of
  batches changes between the two phases, so the loader is rebuilt each epoch.

Every order is a pure function of ``(seed, epoch)``, so a run resumed at epoch ``e`` sees the batches the
uninterrupted run saw (Lightning calls ``set_epoch``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from torch.utils.data import Sampler

from common.length_batches import length_grouped_order

STRATEGIES = ("proportional", "round-robin", "sequential")


def batch_counts(sizes: Sequence[int], batch_size: int, alpha: float) -> list[int]:
    """Batches of each dataset in one proportional epoch (every dataset at least one)."""
    passes = [-(-size // batch_size) for size in sizes]
    weights = np.asarray(sizes, dtype=np.float64) ** alpha
    shares = weights / weights.sum()
    return [max(1, int(round(sum(passes) * share))) for share in shares]


class EntryBatchSampler(Sampler[list[int]]):
    """Batches of item indices into the concatenation of the datasets, one dataset per batch (module docstring).

    ``lengths``: per dataset, its items' lengths (what length-grouping sorts by); ``target``: the dataset of the last
    phase of ``sequential``."""

    def __init__(
        self,
        lengths: Sequence[Sequence[int]],
        batch_size: int,
        seed: int = 0,
        strategy: str = "proportional",
        alpha: float = 1.0,
        auxiliary_epochs: int = 1,
        target: int = 0,
        length_grouped: bool = True,
        pool_batches: int = 8,
        epoch: int = 0,
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown sampling strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
        self.lengths = [list(item_lengths) for item_lengths in lengths]
        self.offsets = np.cumsum([0] + [len(item_lengths) for item_lengths in self.lengths]).tolist()
        self.batch_size = batch_size
        self.seed = seed
        self.strategy = strategy
        self.alpha = alpha
        self.auxiliary_epochs = auxiliary_epochs
        self.target = target
        self.length_grouped = length_grouped
        self.pool_batches = pool_batches
        self.epoch = epoch

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def active(self) -> list[int]:
        """The datasets this epoch draws from (all but in ``sequential``'s phases)."""
        everyone = [d for d in range(len(self.lengths)) if self.lengths[d]]
        if self.strategy != "sequential":
            return everyone
        auxiliary = [d for d in everyone if d != self.target]
        return auxiliary if self.epoch < self.auxiliary_epochs and auxiliary else [self.target]

    def plan(self) -> list[int]:
        """The dataset of each batch of this epoch, in order."""
        active = self.active()
        rng = np.random.default_rng([self.seed, self.epoch, 1])
        if self.strategy == "round-robin":
            turns = max(-(-len(self.lengths[d]) // self.batch_size) for d in active)
            return [d for _ in range(turns) for d in active]
        counts = batch_counts([len(self.lengths[d]) for d in active], self.batch_size, self.alpha)
        plan = np.repeat(active, counts)
        return [int(d) for d in plan[rng.permutation(len(plan))]]

    def batches_of(self, dataset: int, count: int) -> list[list[int]]:
        """The first ``count`` batches of ``dataset`` this epoch: passes over it, each in its own order."""
        batches: list[list[int]] = []
        lengths = self.lengths[dataset]
        round_ = 0
        while len(batches) < count:
            seed = self.seed * 1009 + dataset * 7919 + round_
            if self.length_grouped:
                order = length_grouped_order(lengths, self.batch_size, seed, self.epoch, self.pool_batches)
            else:
                order = np.random.default_rng([seed, self.epoch]).permutation(len(lengths)).tolist()
            start = self.offsets[dataset]
            batches += [
                [start + i for i in order[k : k + self.batch_size]] for k in range(0, len(order), self.batch_size)
            ]
            round_ += 1
        return batches[:count]

    def __iter__(self) -> Iterator[list[int]]:
        plan = self.plan()
        queues = {d: iter(self.batches_of(d, plan.count(d))) for d in set(plan)}
        for dataset in plan:
            yield next(queues[dataset])

    def __len__(self) -> int:
        return len(self.plan())

    def dataset_of(self, index: int) -> int:
        """The dataset of item ``index`` of the concatenation."""
        return int(np.searchsorted(self.offsets, index, side="right") - 1)

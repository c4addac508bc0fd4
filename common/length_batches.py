"""Length-grouped shuffling: batches of similar lengths, in an order derived only from (seed, epoch).

A batch costs as much as its longest item times its size, so a random batch of short posts with one long
post pays for padding everywhere. ``LengthGroupedSampler`` shuffles the items, cuts the shuffled list into
pools of ``pool_batches`` batches, sorts each pool by length (longest first) and cuts it into batches; the
order of the full batches is then shuffled, and a smaller last batch stays last, so a ``DataLoader`` that
takes ``batch_size`` consecutive indices at a time sees exactly these batches. Pools keep the batches
random (an item meets different neighbours every epoch) while most padding disappears.

The order is a pure function of ``(seed, epoch)``: no generator carries state from one epoch to the next,
so a run resumed at epoch ``e`` (Lightning calls ``set_epoch`` on the sampler, also through its DDP
wrapper) sees exactly the batches the uninterrupted run saw.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from torch.utils.data import Sampler


def length_grouped_order(
    lengths: Sequence[int], batch_size: int, seed: int, epoch: int, pool_batches: int = 8
) -> list[int]:
    """Item indices in training order for ``epoch``; consecutive runs of ``batch_size`` form the batches."""
    if batch_size < 1 or pool_batches < 1:
        raise ValueError(f"batch_size and pool_batches must be positive, got {batch_size} and {pool_batches}")
    rng = np.random.default_rng([seed, epoch])
    lengths = np.asarray(lengths, dtype=np.int64)
    order = rng.permutation(len(lengths))
    pool = batch_size * pool_batches
    sorted_order = []
    for start in range(0, len(order), pool):
        chunk = order[start : start + pool]
        # stable sort on -length: equal lengths keep their shuffled order
        sorted_order.append(chunk[np.argsort(-lengths[chunk], kind="stable")])
    flat = np.concatenate(sorted_order) if sorted_order else order
    batches = [flat[i : i + batch_size] for i in range(0, len(flat), batch_size)]
    full = [b for b in batches if len(b) == batch_size]
    partial = [b for b in batches if len(b) < batch_size]
    shuffled = [full[i] for i in rng.permutation(len(full))] + partial
    return [int(i) for batch in shuffled for i in batch]


class LengthGroupedSampler(Sampler[int]):
    """Shuffling sampler that groups items of similar length into the same batch (see module docstring).

    Use it with ``DataLoader(..., batch_size=batch_size, sampler=sampler, shuffle=False)`` and the same
    ``batch_size``.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int = 0, pool_batches: int = 8):
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.seed = seed
        self.pool_batches = pool_batches
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[int]:
        return iter(length_grouped_order(self.lengths, self.batch_size, self.seed, self.epoch, self.pool_batches))

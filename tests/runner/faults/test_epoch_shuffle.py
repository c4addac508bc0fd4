"""Batch orders are a function of (seed, epoch), and the very orders the plain shuffled DataLoader drew."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader

from common.sampling import EpochShuffle, epoch_order


def test_orders_are_those_of_the_shuffled_loader_so_old_numbers_stay():
    data = list(range(23))
    plain = DataLoader(data, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(7))
    sampler = EpochShuffle(len(data), seed=7)
    ours = DataLoader(data, batch_size=4, sampler=sampler, generator=torch.Generator().manual_seed(7))
    for epoch in range(4):
        sampler.set_epoch(epoch)
        assert [b.tolist() for b in ours] == [b.tolist() for b in plain], f"epoch {epoch}"


def test_an_epoch_order_needs_no_history():
    fresh = EpochShuffle(10, seed=3)
    fresh.set_epoch(2)  # a resumed run starts here, without having iterated epochs 0 and 1
    assert list(fresh) == epoch_order(10, 3, 2)
    assert epoch_order(10, 3, 2) != epoch_order(10, 3, 1) and sorted(epoch_order(10, 3, 2)) == list(range(10))
    assert epoch_order(10, 4, 2) != epoch_order(10, 3, 2)

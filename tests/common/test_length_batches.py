"""Length-grouped batches: a permutation per epoch, less padding, and an order fixed by (seed, epoch) alone."""

from __future__ import annotations

import random

import pytest
from torch.utils.data import DataLoader

from common.length_batches import LengthGroupedSampler, length_grouped_order
from faina.data.datamodule import FainaDataModule
from faina.data.folds import FoldSplit

_RNG = random.Random(7)
LENGTHS = [_RNG.randint(3, 200) for _ in range(203)]


def batches(order, size):
    return [order[i : i + size] for i in range(0, len(order), size)]


def padded_cost(order, size):
    return sum(len(batch) * max(LENGTHS[i] for i in batch) for batch in batches(order, size))


def test_every_item_once_and_only_the_last_batch_is_short():
    order = length_grouped_order(LENGTHS, 16, seed=1, epoch=0)
    assert sorted(order) == list(range(len(LENGTHS)))
    sizes = [len(b) for b in batches(order, 16)]
    assert sizes[:-1] == [16] * (len(sizes) - 1) and sizes[-1] == len(LENGTHS) % 16


def test_grouping_cuts_padding_against_plain_shuffling():
    shuffled = list(range(len(LENGTHS)))
    random.Random(0).shuffle(shuffled)
    grouped = length_grouped_order(LENGTHS, 16, seed=0, epoch=0)
    assert padded_cost(grouped, 16) < 0.75 * padded_cost(shuffled, 16)


def test_order_is_a_function_of_seed_and_epoch_only():
    sampler = LengthGroupedSampler(LENGTHS, 16, seed=3)
    sampler.set_epoch(2)
    first = list(sampler)
    # another sampler that never saw epochs 0 and 1 (a resumed run) gives the same order, twice
    resumed = LengthGroupedSampler(LENGTHS, 16, seed=3)
    resumed.set_epoch(2)
    assert list(resumed) == first == list(resumed)
    sampler.set_epoch(3)
    assert list(sampler) != first
    assert length_grouped_order(LENGTHS, 16, seed=4, epoch=2) != first


def test_batches_change_composition_between_epochs():
    one = {frozenset(b) for b in batches(length_grouped_order(LENGTHS, 16, 0, 0), 16)}
    two = {frozenset(b) for b in batches(length_grouped_order(LENGTHS, 16, 0, 1), 16)}
    assert len(one & two) < len(one) // 2


@pytest.mark.parametrize("size, pool", [(0, 8), (4, 0)])
def test_bad_sizes_are_refused(size, pool):
    with pytest.raises(ValueError):
        length_grouped_order(LENGTHS, size, 0, 0, pool_batches=pool)


def test_datamodule_batches_are_grouped_and_eval_covers_every_post():
    features = [{"input_ids": [5] * n, "word_starts": [0], "post_index": i} for i, n in enumerate(LENGTHS)]
    split = FoldSplit(fold=0, train=list(range(150)), dev=list(range(150, 203)), test=[])
    module = FainaDataModule(features, split, pad_token_id=0, batch_size=16, seed=5)
    loader = module.train_dataloader()
    loader.sampler.set_epoch(1)
    widths = [batch["input_ids"].shape[1] for batch in loader]
    assert sum(widths) * 16 < 0.75 * padded_cost(list(range(150)), 16)
    seen = [i for batch in module.val_dataloader() for i in batch["post_index"].tolist()]
    assert sorted(seen) == list(range(150, 203))
    plain = FainaDataModule(features, split, pad_token_id=0, batch_size=16, seed=5, length_grouped=False)
    assert isinstance(plain.train_dataloader(), DataLoader) and plain.train_dataloader().sampler is not None

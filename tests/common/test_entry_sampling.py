"""``EntryBatchSampler``: batches of one dataset each, in the amounts and orders each strategy promises."""

from __future__ import annotations

from collections import Counter

import pytest

from common.entry_sampling import EntryBatchSampler, batch_counts

SIZES = (40, 10)  # a large and a small dataset


def sampler(strategy="proportional", alpha=1.0, epoch=0, sizes=SIZES, **settings):
    lengths = [[5 + i % 7 for i in range(size)] for size in sizes]
    return EntryBatchSampler(lengths, 4, seed=3, strategy=strategy, alpha=alpha, epoch=epoch, **settings)


def datasets_of(batches, s):
    return [{s.dataset_of(i) for i in batch} for batch in batches]


def test_every_batch_holds_items_of_one_dataset_only():
    s = sampler()
    batches = list(s)
    assert all(len(owners) == 1 for owners in datasets_of(batches, s))
    assert len(batches) == len(s)


def test_alpha_one_is_one_pass_over_every_dataset():
    s = sampler(alpha=1.0)
    items = [i for batch in s for i in batch]
    assert sorted(items) == list(range(sum(SIZES)))  # each item once
    assert Counter(owner.pop() for owner in datasets_of(list(s), s)) == {0: 10, 1: 3}


def test_alpha_zero_draws_as_many_batches_from_each_dataset():
    s = sampler(alpha=0.0)
    counts = Counter(owner.pop() for owner in datasets_of(list(s), s))
    assert counts == {0: 6, 1: 6}  # one pass's 13 batches, shared equally (6.5 rounded to even)
    small = [i for batch in s for i in batch if s.dataset_of(i) == 1]
    assert len(small) > SIZES[1] and set(small) == set(range(40, 50))  # the small one goes round again


def test_smoothing_moves_the_shares_between_the_ends():
    assert batch_counts(SIZES, 4, 1.0) == [10, 3]
    assert batch_counts(SIZES, 4, 0.5) == [9, 4]  # 13 * sqrt(40) / (sqrt(40) + sqrt(10)) = 8.67
    assert batch_counts(SIZES, 4, 0.0) == [6, 6]


def test_round_robin_alternates_until_the_largest_made_one_pass():
    s = sampler("round-robin")
    owners = [owner.pop() for owner in datasets_of(list(s), s)]
    assert owners == [0, 1] * 10
    large = [i for batch in s for i in batch if s.dataset_of(i) == 0]
    assert sorted(large) == list(range(40))


def test_sequential_trains_the_auxiliary_datasets_first_then_the_target():
    for epoch, expected in ((0, {1}), (1, {1}), (2, {0}), (5, {0})):
        s = sampler("sequential", epoch=epoch, target=0, auxiliary_epochs=2)
        assert {owner.pop() for owner in datasets_of(list(s), s)} == expected, epoch
    assert len(sampler("sequential", epoch=0, target=0, auxiliary_epochs=2)) == 3
    assert len(sampler("sequential", epoch=2, target=0, auxiliary_epochs=2)) == 10


def test_the_order_is_a_function_of_seed_and_epoch_only():
    first = list(sampler(epoch=1))
    assert list(sampler(epoch=1)) == first
    resumed = sampler(epoch=0)
    resumed.set_epoch(1)
    assert list(resumed) == first
    assert list(sampler(epoch=2)) != first


def test_length_grouping_is_kept_within_each_dataset():
    lengths = [[i for i in range(64)], [100 + i for i in range(64)]]
    s = EntryBatchSampler(lengths, 8, seed=0, length_grouped=True, pool_batches=8)
    for batch in s:
        values = [lengths[s.dataset_of(i)][i - s.offsets[s.dataset_of(i)]] for i in batch]
        assert max(values) - min(values) == len(batch) - 1  # one pool, sorted: neighbours in length


def test_an_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown sampling strategy 'random'"):
        sampler("random")

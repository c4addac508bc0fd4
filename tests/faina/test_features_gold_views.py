"""Aggregated targets keep every view beside them: ``with_gold_views`` and the collator's ``gold_*`` keys."""

from __future__ import annotations

import pytest
import torch

from faina.data.features import Collator, with_gold_views


def _feature(index: int, ids: list[int], tags: list[list[int]], annotated=None) -> dict:
    feature = {"input_ids": ids, "word_starts": list(range(len(ids))), "post_index": index, "tags": torch.tensor(tags)}
    if annotated is not None:
        feature["annotated"] = annotated
    return feature


def test_gold_views_ride_beside_the_aggregate_and_collate_with_their_own_mask():
    union = [_feature(0, [5, 6], [[1, 2]]), _feature(1, [7], [[0]])]
    gold = [_feature(0, [5, 6], [[1, 2], [0, 0]], annotated=[True, False]), _feature(1, [7], [[1], [1]])]
    merged = with_gold_views(union, gold)
    assert "gold_tags" in merged[0] and "gold_annotated" not in merged[1] and "annotated" not in merged[0]
    batch = Collator(pad_token_id=0)(merged)
    assert batch["tags"].shape == (2, 1, 2) and batch["gold_tags"].shape == (2, 2, 2)
    assert batch["gold_tags"][1].tolist() == [[1, 0], [1, 0]]  # padded to the batch's words
    assert batch["gold_annotated"].tolist() == [[True, False], [True, True]]
    assert "annotated" not in batch  # the aggregate has no missing view


def test_gold_views_of_other_posts_are_refused():
    with pytest.raises(ValueError, match="differ in their text"):
        with_gold_views([_feature(0, [5, 6], [[1, 2]])], [_feature(0, [5, 9], [[1, 2], [0, 0]])])
    with pytest.raises(ValueError, match="not the same posts"):
        with_gold_views([_feature(0, [5], [[1]])], [])

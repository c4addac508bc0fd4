"""The Faina tallies skip a (post, view) pair whose gold view did not annotate the post (``None``): neither its
predicted nor its gold labels/spans count, so the scores are those of the data without that pair (by hand)."""

from __future__ import annotations

import pytest

from common.labels import LabelInventory
from common.records import Span
from metrics.faina_post_counts import PostMicroTally
from metrics.faina_span_sums import SpanOverlapTally

D, S = "Doubt", "Slogan"
INVENTORY = LabelInventory.from_dict({"fine": [D, S]})


def test_post_tally_skips_not_annotated_gold_pairs():
    tally = PostMicroTally(num_views=2, labels=[D, S], per_label=True)
    # post 1: a1 gold {D}, a2 not annotated; post 2: a1 gold {S}, a2 gold {D}; one prediction for both views
    tally.update([[(D, S)], [(S,)]], [[(D,), None], [(S,), (D,)]])
    assert tally.counts() == {"predicted": [3, 1], "gold": [2, 1]}
    scores = tally.compute()
    assert scores["a1"]["precision"] == pytest.approx(2 / 3) and scores["a1"]["recall"] == 1.0
    assert scores["a2"]["precision"] == 0.0 and scores["a2"]["recall"] == 0.0  # {S} vs {D} on post 2 only
    assert tally.compute_per_label()["a2"] == {
        S: {"precision": 0.0, "recall": 0.0, "f1": 0.0, "predicted": 1, "gold": 0},
        D: {"precision": 0.0, "recall": 0.0, "f1": 0.0, "predicted": 0, "gold": 1},
    }


def test_span_tally_with_a_missing_view_equals_the_tally_without_that_pair():
    masked = SpanOverlapTally(INVENTORY, num_views=2, mode="strict")
    masked.update([[(Span(1, 2, D),)], [(Span(1, 1, S),)]], [[(Span(1, 4, D),), None], [(), (Span(1, 1, S),)]])
    # a2 alone: post 2 only (predicted S 1-1 = gold S 1-1): P = R = 1; a1: D 1-2 vs 1-4 (P 1, R 1/2), S vs nothing
    assert masked.counts() == {"predicted": [2, 1], "gold": [1, 1]}
    scores = masked.compute()
    assert scores["a1"]["precision"] == 0.5 and scores["a1"]["recall"] == 0.5
    assert scores["a2"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    without = SpanOverlapTally(INVENTORY, num_views=1, mode="strict")
    without.update([[(Span(1, 1, S),)]], [[(Span(1, 1, S),)]])
    assert without.compute()["a1"] == scores["a2"]

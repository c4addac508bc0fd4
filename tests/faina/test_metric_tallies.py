"""One implementation of each Faina score: the torchmetrics Metrics training uses and the plain-Python tallies
the scoring CLI uses give the same figures bit for bit, for the same updates (float sums depend on how the
posts are grouped into updates, in both alike)."""

from __future__ import annotations

import warnings

from hypothesis import given, settings
from hypothesis import strategies as st

from faina.formats.labels import LabelInventory
from metrics.faina_post import PostMicroScore
from metrics.faina_post_counts import PostMicroTally
from metrics.faina_scores import ZeroDenominatorWarning
from metrics.faina_span import SpanOverlapScore
from metrics.faina_span_sums import SpanOverlapTally
from strategies import post_corpus_pairs, span_corpus_pairs

INV = LabelInventory.load()


def _results(metric):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroDenominatorWarning)
        return metric.compute(), metric.compute_per_label(), metric.counts()


@settings(max_examples=60, deadline=None)
@given(
    pair=span_corpus_pairs(), mode=st.sampled_from(("strict", "soft")), cut=st.integers(0, 6), one_pred=st.booleans()
)
def test_span_metric_equals_the_tally_update_for_update(pair, mode, cut, one_pred):
    gold, pred = pair
    golds = [post.spans for post in gold.posts]
    preds = [post.spans[:1] if one_pred else post.spans for post in pred.posts]
    metric = SpanOverlapScore(INV, num_views=2, mode=mode, per_label=True)
    metric.update(preds[:cut], golds[:cut])
    metric.update(preds[cut:], golds[cut:])
    tally = SpanOverlapTally(INV, num_views=2, mode=mode, per_label=True)
    tally.update(preds[:cut], golds[:cut])
    tally.update(preds[cut:], golds[cut:])
    assert _results(metric) == _results(tally)


@settings(max_examples=60, deadline=None)
@given(pair=post_corpus_pairs(), cut=st.integers(0, 6), one_pred=st.booleans())
def test_post_metric_equals_the_tally_update_for_update(pair, cut, one_pred):
    gold, pred = pair
    golds = [row.labels for row in gold.rows]
    preds = [row.labels[:1] if one_pred else row.labels for row in pred.rows]
    labels = INV.labels_of("fine")
    metric = PostMicroScore(num_views=2, labels=labels, per_label=True)
    metric.update(preds[:cut], golds[:cut])
    metric.update(preds[cut:], golds[cut:])
    tally = PostMicroTally(num_views=2, labels=labels, per_label=True)
    tally.update(preds[:cut], golds[:cut])
    tally.update(preds[cut:], golds[cut:])
    assert _results(metric) == _results(tally)


def test_the_metric_delegates_to_its_tally():
    """The Metric holds states only; its rules (labels, weights) are the tally's."""
    metric = SpanOverlapScore(INV, num_views=2, mode="soft")
    assert isinstance(metric.tally, SpanOverlapTally) and metric.labels == metric.tally.labels
    assert isinstance(PostMicroScore(num_views=1).tally, PostMicroTally)

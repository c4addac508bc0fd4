"""``data.targets``: aggregating annotator views on hand-made posts (``faina.data.targets``) and the clear errors."""

from __future__ import annotations

import pytest

from common.errors import UserError
from faina.data.targets import aggregate_corpus, aggregate_labels, aggregate_spans
from faina.data.task_data import load_task_data
from faina.formats.records import Post, PostCorpus, PostRow, Span, SpanCorpus

D, S = "Doubt", "Slogan"
A1 = [Span(2, 5, D)]
A2 = [Span(1, 2, S), Span(4, 7, D)]
A3 = [Span(5, 6, D)]


def test_union_and_intersection_of_two_views_token_per_label():
    assert aggregate_spans([A1, A2], "union") == (Span(1, 2, S), Span(2, 7, D))
    assert aggregate_spans([A1, A2], "intersection") == (Span(4, 5, D),)


def test_majority_of_three_views_needs_more_than_half():
    # Doubt per token: 2:1 3:1 4:2 5:3 6:2 7:1 -> tokens 4-6; Slogan is in one view of three
    assert aggregate_spans([A1, A2, A3], "majority") == (Span(4, 6, D),)
    assert aggregate_spans([A1, A2, A3], "intersection") == (Span(5, 5, D),)


def test_gaps_split_spans_and_touching_spans_merge():
    assert aggregate_spans([[Span(1, 2, D), Span(5, 5, D)], [Span(1, 1, D)]], "union") == (Span(1, 2, D), Span(5, 5, D))
    assert aggregate_spans([[Span(1, 2, D), Span(3, 4, D)], [Span(1, 4, D)]], "intersection") == (Span(1, 4, D),)


def test_post_labels():
    assert aggregate_labels([(D, S), (S,)], "union") == (D, S)
    assert aggregate_labels([(D, S), (S,)], "intersection") == (S,)
    assert aggregate_labels([(D,), (D, S), (S,)], "majority") == (D, S)
    assert aggregate_labels([(), ()], "union") == ()


def _span_corpus(views: int) -> SpanCorpus:
    post = Post(
        "1", "2021-06", "migration", "a b c d e f g", tuple("abcdefg"), tuple(tuple(v) for v in [A1, A2, A3][:views])
    )
    return SpanCorpus((post,), views)


def test_corpus_becomes_one_view_and_views_is_unchanged():
    corpus = _span_corpus(2)
    assert aggregate_corpus(corpus, "views") is corpus
    union = aggregate_corpus(corpus, "union")
    assert union.num_views == 1 and union.posts[0].spans == ((Span(1, 2, S), Span(2, 7, D)),)
    rows = PostCorpus((PostRow("1", "2021-06", "migration", "t", ((D,), (D, S))),), 2)
    assert aggregate_corpus(rows, "intersection").rows[0].labels == ((D,),)


def test_majority_with_two_views_and_unknown_target_are_clear_errors():
    with pytest.raises(UserError, match="majority needs three or more annotator views, the file has 2"):
        aggregate_corpus(_span_corpus(2), "majority")
    with pytest.raises(UserError, match="unknown training target data.targets='mean'.*views, union"):
        aggregate_corpus(_span_corpus(2), "mean")


def test_task_data_keeps_every_view_for_scoring(repo_root):
    sample = repo_root / "faina" / "sample_data" / "sample.conll"
    data = load_task_data(str(sample), None, "span", "fine", targets="intersection")
    assert data.num_views == 1 and data.gold_corpus.num_views == 2 and data.targets == "intersection"
    assert [p.post_id for p in data.labelled.posts] == [p.post_id for p in data.gold_corpus.posts]
    assert sum(len(p.spans[0]) for p in data.labelled.posts) < sum(len(p.spans[0]) for p in data.gold_corpus.posts)


def test_soft_target_keeps_the_views_and_gives_the_model_one():
    from faina.data.targets import TARGETS, model_views

    assert "soft" in TARGETS
    corpus = _span_corpus(2)
    assert aggregate_corpus(corpus, "soft") is corpus  # nothing aggregated: the loss sees every view
    assert model_views("soft", 6) == 1 and model_views("views", 6) == 6 and model_views("union", 1) == 1
    with pytest.raises(UserError, match="use one of views, union, intersection, majority, soft"):
        aggregate_corpus(corpus, "mean")

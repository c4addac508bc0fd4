"""What a model trains on when a corpus has several annotator views: ``data.targets``.

Faina keeps its annotators apart, and FadeIT 2026 lets participants "leverage disaggregated annotations
or aggregate them". This module is the one place that aggregates, at the data layer (after reading the
corpus, before features), so a model simply sees a corpus with one view:

- ``views`` (default, the paper): the corpus as it is, one head / decoder set per view;
- ``union``: a label holds where *any* view has it;
- ``intersection``: where *all* views have it;
- ``majority``: where *more than half* of the views have it (needs three or more views: with two it is
  the intersection, and the name would hide that);
- ``soft``: the corpus keeps every view (nothing is aggregated here), but the model gets *one* head (MVML) or
  one decoder set (MVMD) trained on all of them: MVML's BCE against the share of views giving each label, MVMD's
  sum of each view's CRF negative log-likelihood (``models/heads.py``), so one model predicts the distribution
  of the annotators rather than each annotator or one aggregate (``model_views``: 1).

Views that did not annotate a post (``None``, the files' ``?`` marker) take no part in its aggregation: the rules
run over the post's annotated views only, so ``majority`` means more than half of the views that annotated the post
(of 5 annotators of whom 2 skipped it: 2 of the 3 others), ``intersection`` all of them. A labelled post that no
view annotated stays labelled with an aggregated view that is ``None`` too (it is left out of training and scoring).

Post level: on each post's label sets. Span level: on tokens, per label: a token is in an aggregated
span of label X if the rule holds for the views that put it in an X span; maximal runs of consecutive
such tokens become the aggregated spans. Two spans of one label that touch end-to-end therefore become
one (a token-level definition cannot tell them apart). The gold files keep every view: an aggregated
model's single prediction is scored against every view (the evaluator's ``-O`` rule).
"""

from __future__ import annotations

from collections.abc import Sequence

from common.errors import UserError
from faina.formats.records import Post, PostCorpus, PostRow, Span, SpanCorpus, span_order

TARGETS = ("views", "union", "intersection", "majority", "soft")


def trains_on_shares(target: str | None) -> bool:
    """Whether a model of ``target`` learns the annotators' label shares (``soft``: one view trained on every view's
    labels, selected on its dev loss) instead of hard labels: the one place that decides it."""
    return target == "soft"


def model_views(target: str, num_views: int) -> int:
    """How many views of heads/decoders a model trained on ``target`` has: every view for ``views``, else one."""
    return num_views if target == "views" else 1


def check_target(target: str, num_views: int, path: str | None = None) -> None:
    """Refuse an unknown target, or ``majority`` on fewer than three views, with one clear message."""
    if target not in TARGETS:
        raise UserError(f"unknown training target data.targets={target!r}", fix=f"use one of {', '.join(TARGETS)}")
    if target == "majority" and num_views < 3:
        raise UserError(
            f"data.targets=majority needs three or more annotator views, the file has {num_views}",
            path=path,
            fix="use union or intersection (with two views, majority would be the "
            "intersection), or views to train one head per annotator",
        )


def _holds(count: int, num_views: int, target: str) -> bool:
    if target == "union":
        return count >= 1
    if target == "intersection":
        return count == num_views
    return 2 * count > num_views  # majority


def aggregate_spans(views: Sequence[Sequence[Span] | None], target: str) -> tuple[Span, ...] | None:
    """The aggregated spans of one post (token-per-label rule, then maximal runs), in file order.

    Views given as ``None`` (not annotated) are left out; with no annotated view the result is ``None``."""
    views = [view for view in views if view is not None]
    if not views:
        return None
    num_views = len(views)
    counts: dict[str, dict[int, int]] = {}
    for spans in views:
        covered: dict[str, set[int]] = {}
        for span in spans:
            covered.setdefault(span.label, set()).update(span.tokens())
        for label, tokens in covered.items():  # a view counts once per token, even if its spans touch
            per_token = counts.setdefault(label, {})
            for token in tokens:
                per_token[token] = per_token.get(token, 0) + 1
    result: list[Span] = []
    for label, per_token in counts.items():
        kept = sorted(token for token, count in per_token.items() if _holds(count, num_views, target))
        start = previous = None
        for token in kept:
            if start is None:
                start = previous = token
            elif token == previous + 1:
                previous = token
            else:
                result.append(Span(start, previous, label))
                start = previous = token
        if start is not None:
            result.append(Span(start, previous, label))
    return tuple(sorted(result, key=span_order))


def aggregate_labels(views: Sequence[Sequence[str] | None], target: str) -> tuple[str, ...] | None:
    """The aggregated label set of one post, sorted by name, over its annotated views (``None``: none annotated)."""
    sets = [set(label for label in view if label) for view in views if view is not None]
    if not sets:
        return None
    every = set().union(*sets) if sets else set()
    return tuple(sorted(label for label in every if _holds(sum(label in s for s in sets), len(sets), target)))


def aggregate_corpus(corpus: SpanCorpus | PostCorpus, target: str) -> SpanCorpus | PostCorpus:
    """The corpus with its views aggregated into one (``views``, ``soft``: unchanged). Unlabelled posts stay so."""
    check_target(target, corpus.num_views, corpus.path)
    if target in ("views", "soft"):
        return corpus
    if isinstance(corpus, SpanCorpus):
        posts = [_aggregate_post(post, target) for post in corpus.posts]
        return SpanCorpus(tuple(posts), 1, path=corpus.path, trailing_blank_line=corpus.trailing_blank_line)
    rows = tuple(
        PostRow(r.post_id, r.date, r.topic, r.text, (aggregate_labels(r.labels, target),), r.line) for r in corpus.rows
    )
    return PostCorpus(rows, 1, path=corpus.path)


def _aggregate_post(post: Post, target: str) -> Post:
    if post.spans is None:
        return post
    return post.with_spans([aggregate_spans(post.spans, target)])

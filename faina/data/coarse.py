"""Derived views of annotations: coarse spans and labels through the taxonomy.

A coarse span is a fine span relabelled with each of its macro-categories; within one view, coarse spans
of the same category that overlap (share a token) are merged into one (docs/faina-format.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from faina.formats.labels import LabelInventory
from faina.formats.records import Post, PostCorpus, PostRow, Span, SpanCorpus, span_order


def coarse_spans(spans: Iterable[Span], inventory: LabelInventory) -> tuple[Span, ...]:
    by_category: dict[str, list[tuple[int, int]]] = {}
    for span in spans:
        roots = (span.label,) if span.label in inventory.coarse else inventory.roots_of[span.label]
        for root in roots:
            by_category.setdefault(root, []).append((span.first, span.last))
    merged: list[Span] = []
    for category, ranges in by_category.items():
        ranges.sort()
        first, last = ranges[0]
        for start, end in ranges[1:]:
            if start <= last:  # shares at least one token
                last = max(last, end)
            else:
                merged.append(Span(first, last, category))
                first, last = start, end
        merged.append(Span(first, last, category))
    return tuple(sorted(merged, key=span_order))


def coarse_post(post: Post, inventory: LabelInventory) -> Post:
    if post.spans is None:
        return post
    return post.with_spans([None if view is None else coarse_spans(view, inventory) for view in post.spans])


def coarse_corpus(corpus: SpanCorpus, inventory: LabelInventory) -> SpanCorpus:
    return corpus.replace_posts([coarse_post(p, inventory) for p in corpus.posts])


def coarse_labels(labels: Iterable[str], inventory: LabelInventory) -> tuple[str, ...]:
    out: set[str] = set()
    for label in labels:
        out.update((label,) if label in inventory.coarse else inventory.roots_of[label])
    return tuple(sorted(out))


def coarse_rows(corpus: PostCorpus, inventory: LabelInventory) -> PostCorpus:
    rows = tuple(
        PostRow(
            r.post_id,
            r.date,
            r.topic,
            r.text,
            tuple(None if v is None else coarse_labels(v, inventory) for v in r.labels),
            r.line,
        )
        for r in corpus.rows
    )
    return PostCorpus(rows, corpus.num_views, path=corpus.path)


def coarse_of(corpus: SpanCorpus | PostCorpus, inventory: LabelInventory) -> SpanCorpus | PostCorpus:
    """The coarse view of a span or post corpus (``coarse_corpus`` / ``coarse_rows``)."""
    return coarse_corpus(corpus, inventory) if isinstance(corpus, SpanCorpus) else coarse_rows(corpus, inventory)

"""Typed records of a Faina-format corpus.

Readers produce these, writers consume them, the DataModule and the metrics work on them; nothing
downstream parses file text again. Token indices are the file's own: 1-based, inclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from common.records import Span, span_order

__all__ = ["Span", "span_order", "Post", "PostRow", "SpanCorpus", "PostCorpus"]


@dataclass(frozen=True)
class Post:
    """A post of the span-level (CoNLL) file.

    ``spans[v]`` holds view v's spans in file order (by first token, then label name), or ``None`` for
    every view when the post is unlabelled (empty label cells, as in a test file).
    """

    post_id: str
    date: str
    topic: str
    text: str
    tokens: tuple[str, ...]
    spans: tuple[tuple[Span, ...], ...] | None
    line: int = field(default=0, compare=False)

    @property
    def labelled(self) -> bool:
        return self.spans is not None

    def labels(self, view: int) -> tuple[str, ...]:
        """The post-level label set of a view: its span labels, sorted by name."""
        if self.spans is None:
            return ()
        return tuple(sorted({span.label for span in self.spans[view]}))

    def with_spans(self, spans: Sequence[Sequence[Span]]) -> Post:
        """A copy with new spans per view (e.g. predictions), sorted as the file layout orders them."""
        return replace(self, spans=tuple(tuple(sorted(view, key=span_order)) for view in spans))


@dataclass(frozen=True)
class PostRow:
    """A post of the post-level (TSV) file: labels per view exactly as listed in its cells."""

    post_id: str
    date: str
    topic: str
    text: str
    labels: tuple[tuple[str, ...], ...]
    line: int = field(default=0, compare=False)

    def label_set(self, view: int) -> frozenset[str]:
        return frozenset(label for label in self.labels[view] if label)


@dataclass(frozen=True)
class SpanCorpus:
    """A whole span-level file: its posts, number of views and the layout details writing needs."""

    posts: tuple[Post, ...]
    num_views: int
    path: str = "<memory>"
    trailing_blank_line: bool = True
    repairs: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def labelled(self) -> bool:
        return all(post.labelled for post in self.posts)

    def __len__(self) -> int:
        return len(self.posts)

    def replace_posts(self, posts: Sequence[Post]) -> SpanCorpus:
        return replace(self, posts=tuple(posts), repairs=(), warnings=())


@dataclass(frozen=True)
class PostCorpus:
    """A whole post-level file."""

    rows: tuple[PostRow, ...]
    num_views: int
    path: str = "<memory>"

    def __len__(self) -> int:
        return len(self.rows)

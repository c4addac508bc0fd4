"""Typed records of a Faina-format corpus.

Readers produce these, writers consume them, the DataModule and the metrics work on them; nothing
downstream parses file text again. Token indices are the file's own: 1-based, inclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from common.records import NOT_ANNOTATED, Span, span_order

__all__ = [
    "NOT_ANNOTATED",
    "Span",
    "span_order",
    "Post",
    "PostRow",
    "SpanCorpus",
    "PostCorpus",
    "labels_used",
    "annotated_mask",
    "has_not_annotated",
]


@dataclass(frozen=True)
class Post:
    """A post of the span-level (CoNLL) file.

    ``spans[v]`` holds view v's spans in file order (by first token, then label name); ``spans`` is ``None``
    when the post is unlabelled (empty label cells, as in a test file), and ``spans[v]`` is ``None`` when view v
    did not annotate this post (the ``NOT_ANNOTATED`` marker): a missing annotation, never "no spans".
    """

    post_id: str
    date: str
    topic: str
    text: str
    tokens: tuple[str, ...]
    spans: tuple[tuple[Span, ...] | None, ...] | None
    line: int = field(default=0, compare=False)

    @property
    def labelled(self) -> bool:
        return self.spans is not None

    def annotated(self, view: int) -> bool:
        """Whether view ``view`` annotated this labelled post (False for a ``NOT_ANNOTATED`` view)."""
        return self.spans is not None and self.spans[view] is not None

    def labels(self, view: int) -> tuple[str, ...] | None:
        """The post-level label set of a view: its span labels, sorted by name (``None``: not annotated)."""
        if self.spans is None:
            return ()
        if self.spans[view] is None:
            return None
        return tuple(sorted({span.label for span in self.spans[view]}))

    def with_spans(self, spans: Sequence[Sequence[Span] | None]) -> Post:
        """A copy with new spans per view (e.g. predictions), sorted as the file layout orders them; a view given
        as ``None`` stays not annotated."""
        return replace(
            self, spans=tuple(None if view is None else tuple(sorted(view, key=span_order)) for view in spans)
        )


@dataclass(frozen=True)
class PostRow:
    """A post of the post-level (TSV) file: labels per view exactly as listed in its cells.

    ``labels[v]`` is ``None`` when view v did not annotate the post (its cell holds ``NOT_ANNOTATED``).
    """

    post_id: str
    date: str
    topic: str
    text: str
    labels: tuple[tuple[str, ...] | None, ...]
    line: int = field(default=0, compare=False)

    def annotated(self, view: int) -> bool:
        return self.labels[view] is not None

    def label_set(self, view: int) -> frozenset[str] | None:
        """The view's labels; ``None`` when the view did not annotate the post (callers must not read it as empty)."""
        if self.labels[view] is None:
            return None
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

    @property
    def items(self) -> tuple[Post, ...]:
        """The posts, under the name ``PostCorpus`` gives its rows: what code serving both levels iterates."""
        return self.posts

    def replace_posts(self, posts: Sequence[Post]) -> SpanCorpus:
        return replace(self, posts=tuple(posts), repairs=(), warnings=())


@dataclass(frozen=True)
class PostCorpus:
    """A whole post-level file."""

    rows: tuple[PostRow, ...]
    num_views: int
    path: str = "<memory>"
    repairs: tuple[str, ...] = ()  # always empty (a TSV cell has no BIO tags to repair): both corpora answer alike

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def items(self) -> tuple[PostRow, ...]:
        """The rows, under the name ``SpanCorpus`` gives its posts."""
        return self.rows


def labels_used(corpus: SpanCorpus | PostCorpus) -> set[str]:
    """Every label the annotated views of the corpus carry (span labels, or the labels of post cells)."""
    if isinstance(corpus, SpanCorpus):
        return {s.label for post in corpus.posts for view in (post.spans or ()) for s in view or ()}
    return {label for row in corpus.rows for view in row.labels for label in view or ()}


def annotated_mask(corpus: SpanCorpus | PostCorpus) -> list[list[bool]]:
    """Per post, per view: whether the view annotated the post (all True for a file without the marker)."""
    if isinstance(corpus, SpanCorpus):
        return [[post.annotated(v) for v in range(corpus.num_views)] for post in corpus.posts]
    return [[row.annotated(v) for v in range(corpus.num_views)] for row in corpus.rows]


def refuse_not_annotated(corpus: SpanCorpus | PostCorpus, tool: str) -> None:
    """Stop a tool that has no rule for missing annotations (statistics, agreement, the HTML page) with one message,
    rather than reading the ``?`` views as "no label"."""
    if not has_not_annotated(corpus):
        return
    from common.errors import UserError

    first = next(item for item in corpus.items if not all(item.annotated(v) for v in range(corpus.num_views)))
    raise UserError(
        f"{tool} has no rule for views that did not annotate a post (the {NOT_ANNOTATED!r} marker, first on post "
        f"{first.post_id!r})",
        path=corpus.path,
        line=first.line,
        fix="give a file without the marker (e.g. the posts every view annotated); faina.validate, faina.evaluate "
        "and train.py handle it",
    )


def has_not_annotated(corpus: SpanCorpus | PostCorpus) -> bool:
    """Whether any view of any post carries the ``NOT_ANNOTATED`` marker."""
    if isinstance(corpus, SpanCorpus):
        return any(view is None for post in corpus.posts if post.spans is not None for view in post.spans)
    return any(view is None for row in corpus.rows for view in row.labels)

"""Records every layer shares: an annotated span of tokens.

It lives at the floor so that metrics (span overlap, exact match) and model parts (BIO tags) can use it without
knowing any dataset; ``faina.formats.records`` builds Faina's posts and corpora from it. Token indices are 1-based
and inclusive, as in Faina's files.
"""

from __future__ import annotations

from dataclasses import dataclass

NOT_ANNOTATED = "?"
"""The cell marker of a view that did not annotate a post (an annotator of a fixed pool who skipped the item).

A TSV label cell or a CoNLL view column of a whole post holds only this; the readers turn it into ``None`` for that
view (``Post.spans[v]`` / ``PostRow.labels[v]``), so no consumer can read it as "no label". It is refused as a
label name by the label inventory (``common.labels``)."""


@dataclass(frozen=True, order=True)
class Span:
    """One annotated span of one view: tokens ``first``..``last`` (1-based, inclusive) labelled ``label``."""

    first: int
    last: int
    label: str

    @property
    def length(self) -> int:
        return self.last - self.first + 1

    def tokens(self) -> range:
        return range(self.first, self.last + 1)


def span_order(span: Span) -> tuple[int, str]:
    """The file order of spans in a view: by first token, then label name (as cells list their tags)."""
    return span.first, span.label

"""Records every layer shares: an annotated span of tokens.

It lives at the floor so that metrics (span overlap, exact match) and model parts (BIO tags) can use it without
knowing any dataset; ``faina.formats.records`` builds Faina's posts and corpora from it. Token indices are 1-based
and inclusive, as in Faina's files.
"""

from __future__ import annotations

from dataclasses import dataclass


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

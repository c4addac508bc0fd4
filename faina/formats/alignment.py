"""Whether a prediction file is about the gold file's posts: the one check for span and post corpora alike.

Scores pair the i-th post of one file with the i-th of the other, so both must hold the same posts in the same
order, and, for span files, with the same tokens (a span is a range of token indices).
"""

from __future__ import annotations

from common.errors import UserError
from faina.formats.records import PostCorpus, SpanCorpus


def check_aligned(gold: SpanCorpus | PostCorpus, pred: SpanCorpus | PostCorpus) -> None:
    """Raise unless both files hold the same posts, in the same order (and span files the same tokens)."""
    gold_items, pred_items = gold.items, pred.items
    if len(gold_items) != len(pred_items):
        raise UserError(
            f"{len(pred_items)} posts, but the gold file {gold.path} has {len(gold_items)}",
            path=pred.path,
            fix="predict every post of the gold file, in its order",
        )
    for g, p in zip(gold_items, pred_items):
        if g.post_id != p.post_id:
            raise UserError(
                f"post {p.post_id!r} where the gold file has {g.post_id!r} (line {g.line})",
                path=pred.path,
                line=p.line,
                fix="keep the posts in the gold file's order",
            )
        tokens = getattr(g, "tokens", None)
        if tokens is not None and len(tokens) != len(p.tokens):
            raise UserError(
                f"post {p.post_id!r} has {len(p.tokens)} tokens, the gold file {len(tokens)}",
                path=pred.path,
                line=p.line,
                fix="keep the gold file's tokenisation",
            )

"""Exact-match span P/R/F1 with seqeval: the NER community's figure, beside Faina's official overlap scores.

Span-identification papers usually report exact match: a predicted span counts only if a gold span has the
same first token, last token and label. Faina's spans of different labels overlap, so one BIO sequence
cannot hold a view; but spans of one label in one view never overlap, so each (post, view, label) is one
valid IOB2 sequence. seqeval scores every such sequence of a view together (``mode="strict"``,
``scheme=IOB2``: a chunk is exactly a B-X followed by its I-X), which gives the micro P/R/F1 over all labels
of that view and the per-label figures. Views are averaged like the official scores (the plain mean of the
per-view figures, ``metrics.faina_scores.with_view_average``); with one predicted view (``-O``) it is
scored against every gold view. A zero denominator gives 0, as in the official scores.

Results: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}`` (the layout of ``strict``), and per
label ``{view: {label: {precision, recall, f1, predicted, gold}}}``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from common.records import Span
from metrics.faina_scores import view_name, with_view_average

PostSpans = Sequence[Sequence[Span]]


def bio_tags(spans: Sequence[Span], label: str, num_tokens: int) -> list[str]:
    """The IOB2 tags of one label's spans over a post of ``num_tokens`` tokens (1-based spans)."""
    tags = ["O"] * num_tokens
    for span in spans:
        if span.label != label:
            continue
        tags[span.first - 1] = f"B-{label}"
        for index in range(span.first, span.last):
            tags[index] = f"I-{label}"
    return tags


def _extents(*views: Sequence[Span]) -> dict[str, tuple[int, int]]:
    """Per label, the first and last token any of its spans in ``views`` covers (1-based)."""
    extents: dict[str, tuple[int, int]] = {}
    for view in views:
        for span in view:
            first, last = extents.get(span.label, (span.first, span.last))
            extents[span.label] = (min(first, span.first), max(last, span.last))
    return extents


def view_sequences(preds: Sequence[PostSpans], golds: Sequence[PostSpans], view: int, labels: Sequence[str]):
    """One (gold, predicted) pair of IOB2 sequences per (post, label) with a span in either, cut to the tokens
    that label's spans cover: outside them both sequences are O, so the cut removes no chunk and moves gold and
    predicted chunks alike, and seqeval's matches and counts are those of the whole post (its cost grows with the
    tokens it reads: a post's label covers a few of them)."""
    y_true, y_pred = [], []
    for pred_views, gold_views in zip(preds, golds, strict=True):
        gold = gold_views[view]
        if gold is None:  # the view did not annotate the post: the pair is not scored
            continue
        pred = pred_views[0] if len(pred_views) == 1 else pred_views[view]
        extents = _extents(pred, gold)
        for label in labels:
            if label in extents:  # an all-O sequence adds no chunk: skipping it changes nothing
                first, last = extents[label]
                y_true.append(bio_tags(gold, label, last)[first - 1 :])
                y_pred.append(bio_tags(pred, label, last)[first - 1 :])
    return y_true, y_pred


def exact_span_scores(
    preds: Sequence[PostSpans],
    golds: Sequence[PostSpans],
    labels: Sequence[str],
    num_views: int,
    per_label: bool = False,
) -> dict:
    """Exact-match scores per view and averaged; with ``per_label`` also ``{"per_label": {view: ...}}``.

    ``golds[i]`` holds ``num_views`` views of post i (``None``: the view did not annotate it, the pair is skipped);
    ``preds[i]`` as many, or one (scored against all).
    Labels outside ``labels`` are an error (the caller gives the task's label strings).
    """
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    known = set(labels)
    for post in (*preds, *golds):
        for spans in post:
            for span in spans or ():  # None: a gold view that did not annotate the post
                if span.label not in known:
                    raise ValueError(f"span label {span.label!r} is not one of the task's labels")
    per_view, breakdown = [], {}
    for view in range(num_views):
        y_true, y_pred = view_sequences(preds, golds, view, labels)
        with warnings.catch_warnings():  # seqeval warns on labels without predictions; 0 is the answer
            warnings.simplefilter("ignore")
            report = (
                classification_report(y_true, y_pred, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
                if y_true
                else {}
            )
        micro = report.get("micro avg", {"precision": 0.0, "recall": 0.0, "f1-score": 0.0})
        per_view.append(
            {"precision": float(micro["precision"]), "recall": float(micro["recall"]), "f1": float(micro["f1-score"])}
        )
        if per_label:
            rows = {}
            for label in labels:
                gold_n = sum(seq.count(f"B-{label}") for seq in y_true)
                pred_n = sum(seq.count(f"B-{label}") for seq in y_pred)
                if gold_n == 0 and pred_n == 0:
                    continue
                row = report.get(label, {"precision": 0.0, "recall": 0.0, "f1-score": 0.0})
                rows[label] = {
                    "precision": float(row["precision"]),
                    "recall": float(row["recall"]),
                    "f1": float(row["f1-score"]),
                    "predicted": pred_n,
                    "gold": gold_n,
                }
            breakdown[view_name(view)] = rows
    result = with_view_average(per_view)
    if per_label:
        return {"scores": result, "per_label": breakdown}
    return {"scores": result}

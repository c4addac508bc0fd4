"""Turning per-view sums into the P/R/F1 dictionaries both Faina metrics report.

The official scorers crash on a zero denominator (no predicted spans, no gold labels, P + R = 0); the
project reports 0 instead and says so with a ``ZeroDenominatorWarning``, so a model that has collapsed
to predicting nothing gets an honest 0 rather than a traceback. The arithmetic mirrors the official
scripts operation by operation (``(1 / n) * sum`` for span precision, ``2PR / (P + R)`` for F1, the
plain mean over views), so the figures agree to the last bits, not only to rounding.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence


class ZeroDenominatorWarning(UserWarning):
    """A score was reported as 0 because its denominator was 0 (the official scripts would crash)."""


def view_name(view: int) -> str:
    """The official name of view ``view`` (0-based): ``a1``, ``a2`` ..."""
    return f"a{view + 1}"


def _warn_zero(what: str, where: str) -> None:
    warnings.warn(
        f"{where}: {what} is 0, so it is reported as 0 (the official scorer would crash here)",
        ZeroDenominatorWarning,
        stacklevel=3,
    )


def ratio(numerator: float, denominator: float, what: str, where: str) -> float:
    """``numerator / denominator``, or 0 with a warning when the denominator is 0."""
    if denominator == 0:
        _warn_zero(what, where)
        return 0.0
    return numerator / denominator


def scaled_ratio(total: float, count: float, what: str, where: str) -> float:
    """``(1 / count) * total`` exactly as the official span scorer writes it (not ``total / count``)."""
    if count == 0:
        _warn_zero(what, where)
        return 0.0
    return (1 / count) * total


def f1_score(precision: float, recall: float, where: str) -> float:
    if precision + recall == 0:
        _warn_zero("precision + recall", where)
        return 0.0
    return (2 * precision * recall) / (precision + recall)


def prf(precision: float, recall: float, where: str) -> dict[str, float]:
    return {"precision": precision, "recall": recall, "f1": f1_score(precision, recall, where)}


def with_view_average(per_view: Sequence[dict[str, float]]) -> dict[str, dict[str, float]]:
    """``{"a1": ..., "a2": ..., "avg": ...}``; the average is the unweighted mean of each figure.

    F1 avg is the mean of the per-view F1s, not the F1 of the mean P and R (docs/faina-metrics.md).
    """
    result = {view_name(v): scores for v, scores in enumerate(per_view)}
    n = len(per_view)
    result["avg"] = {key: _mean([scores[key] for scores in per_view], n) for key in ("precision", "recall", "f1")}
    return result


def _mean(values: list[float], n: int) -> float:
    total = values[0]
    for value in values[1:]:  # left to right, as (a1 + a2) / 2 in the official scripts
        total = total + value
    return total / n


def label_row(precision: float, recall: float, predicted: float, gold: float) -> dict[str, float]:
    """One label's line of a per-label breakdown: P, R, F1 (0 when both are 0, without a warning: a label that is
    never predicted is expected, not a collapse) and the predicted and gold counts."""
    f1 = (2 * precision * recall) / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "predicted": int(predicted), "gold": int(gold)}

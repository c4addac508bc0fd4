"""Missci classification metrics over ranked predictions, as the official evaluation defines them.

One ``RankedRow`` per fallacious reasoning R_i: its argument, its interchangeable gold classes and the
model's predicted classes in rank order. All metrics look only at the top-k predicted classes:
- P@k: share of rows with a gold class among the top k;
- Arg@k: share of arguments with at least one such row;
- micro-F1 / per-class F1: multi-label rows (gold set vs. top-k set), label set = classes seen in gold, so a
  predicted class outside it (e.g. "Other") is ignored, exactly like the official MultiLabelBinarizer fit.
``MissciRankingMetric`` (``metrics.missci_ranking_metric``) is the torchmetrics face
of the same functions, for validation loops; this module itself imports no torch.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RankedRow:
    argument_id: str
    gold: tuple[str, ...]
    predicted: tuple[str, ...]

    def hit_at(self, k: int) -> bool:
        return bool(set(self.gold) & set(self.predicted[:k]))


def precision_at_k(rows: Sequence[RankedRow], k: int) -> float:
    return sum(row.hit_at(k) for row in rows) / len(rows) if rows else 0.0


def argument_at_k(rows: Sequence[RankedRow], k: int) -> float:
    hits: dict[str, bool] = defaultdict(bool)
    for row in rows:
        hits[row.argument_id] |= row.hit_at(k)
    return sum(hits.values()) / len(hits) if hits else 0.0


def _counts(rows: Sequence[RankedRow], k: int) -> dict[str, list[int]]:
    """Per gold-seen class: [true positives, false positives, false negatives] at top-k."""
    labels = sorted({c for row in rows for c in row.gold})
    counts = {label: [0, 0, 0] for label in labels}
    for row in rows:
        gold, predicted = set(row.gold), set(row.predicted[:k]) & counts.keys()
        for label in gold & predicted:
            counts[label][0] += 1
        for label in predicted - gold:
            counts[label][1] += 1
        for label in gold - predicted:
            counts[label][2] += 1
    return counts


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def micro_f1(rows: Sequence[RankedRow], k: int = 1) -> float:
    totals = [sum(c[i] for c in _counts(rows, k).values()) for i in range(3)]
    return _f1(*totals)


def per_class_f1(rows: Sequence[RankedRow], k: int = 1) -> dict[str, float]:
    return {label: _f1(*c) for label, c in _counts(rows, k).items()}


def ranking_metrics(rows: Sequence[RankedRow], max_k: int = 6) -> dict[str, float]:
    """Flat dict: ``p@k``/``arg@k`` for k = 1..max_k, ``f1_micro`` (top-1), ``f1_macro`` and ``f1/<class>``."""
    result: dict[str, float] = {}
    for k in range(1, max_k + 1):
        result[f"p@{k}"] = precision_at_k(rows, k)
        result[f"arg@{k}"] = argument_at_k(rows, k)
    result["f1_micro"] = micro_f1(rows, 1)
    per_class = per_class_f1(rows, 1)
    result["f1_macro"] = sum(per_class.values()) / len(per_class) if per_class else 0.0
    result.update({f"f1/{label}": value for label, value in per_class.items()})
    return result

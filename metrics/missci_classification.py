"""Single-label classification metrics for "classify the fallacy given the gold premise" (one row per
interchangeable fallacy): accuracy and macro-F1. Macro-F1 averages over every label that occurs in gold or
prediction ("Other" included when predicted), like scikit-learn's default.
"""
from __future__ import annotations

from typing import Sequence


def accuracy(gold: Sequence[str], predicted: Sequence[str]) -> float:
    return sum(g == p for g, p in zip(gold, predicted)) / len(gold) if gold else 0.0


def macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
    labels = sorted(set(gold) | set(predicted))
    scores = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(gold, predicted))
        fp = sum(g != label and p == label for g, p in zip(gold, predicted))
        fn = sum(g == label and p != label for g, p in zip(gold, predicted))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores) if scores else 0.0


def classification_metrics(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    return {"accuracy": accuracy(gold, predicted), "f1_macro": macro_f1(gold, predicted)}

"""Single-label classification metrics for "classify the fallacy given the gold premise" (one row per
interchangeable fallacy): accuracy and macro-F1. Macro-F1 averages over every label that occurs in gold or
prediction ("Other" included when predicted), like scikit-learn's default.
"""

from __future__ import annotations

from collections.abc import Sequence


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


def per_class_scores(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and gold support of every label (default: those in gold or prediction),
    computed by scikit-learn; a label never predicted has precision 0 (not a warning)."""
    from sklearn.metrics import precision_recall_fscore_support

    labels = list(labels) if labels is not None else sorted(set(gold) | set(predicted))
    precision, recall, f1, support = precision_recall_fscore_support(gold, predicted, labels=labels, zero_division=0)
    return {
        label: {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(s)}
        for label, p, r, f, s in zip(labels, precision, recall, f1, support)
    }


def confusion(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str] | None = None) -> dict:
    """``{"labels": [...], "matrix": rows = gold label, columns = predicted label}`` (scikit-learn)."""
    from sklearn.metrics import confusion_matrix

    labels = list(labels) if labels is not None else sorted(set(gold) | set(predicted))
    return {"labels": labels, "matrix": confusion_matrix(gold, predicted, labels=labels).tolist()}


def classification_report(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> dict:
    """Everything a metrics JSON shows about a single-label run: accuracy, macro-F1, per-class
    precision/recall/F1/support over ``labels`` and the confusion matrix (rows gold, columns predicted)."""
    labels = list(labels) + sorted((set(gold) | set(predicted)) - set(labels))  # never drop an unexpected label
    return {
        **classification_metrics(gold, predicted),
        "per_class": per_class_scores(gold, predicted, labels),
        "confusion": confusion(gold, predicted, labels),
    }

"""Post-level Faina score: micro P/R/F1 of label sets per view, with the official empty-post quirk.

Per view, over all posts: TP += |P ∩ G|, FP += |P \\ G|, FN += |G \\ P|. The official scorers split an
empty labels cell into the single label ``""``, so a post without labels carries one pseudo-label
"no fallacy" (``NO_LABEL``): an empty prediction on an empty gold post is one TP, an empty prediction on a
labelled post is one FP plus |G| FN, labels predicted on an empty gold post are |P| FP plus one FN. The
project reproduces that so its figures equal the published ones (docs/faina-metrics.md).

States are float64 counts per view (exact for any realistic count), reduced with ``sum`` under DDP.
``compute()`` returns python floats: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
"""
from __future__ import annotations

from typing import Collection, Sequence

import torch
from torchmetrics import Metric

from metrics.faina_scores import prf, ratio, view_name, with_view_average

NO_LABEL = ""  # the pseudo-label of an empty labels cell, as the official scripts read it

# One post: its label collection per view. ``preds`` may hold a single view (one-prediction mode).
PostLabels = Sequence[Collection[str]]


def official_label_set(labels: Collection[str]) -> frozenset[str]:
    """The label set as the official reader sees it: an empty collection becomes ``{""}``."""
    found = frozenset(label for label in labels if label != NO_LABEL)
    return found or frozenset((NO_LABEL,))


class PostMicroScore(Metric):
    """Faina post-level micro P/R/F1 per view and their unweighted average.

    ``update(preds, golds)``: sequences over posts of sequences over views of label collections.
    ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` or one (then scored against
    every gold view, the official ``-O`` mode). ``labels`` (the task's label strings) is needed only
    for ``per_label=True``; the breakdown also has a row for the pseudo-label ``NO_LABEL``.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, num_views: int = 2, labels: Sequence[str] | None = None, per_label: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        if num_views < 1:
            raise ValueError("num_views must be at least 1")
        if per_label and labels is None:
            raise ValueError("per_label=True needs the task's labels")
        self.num_views = num_views
        self.per_label = per_label
        self.labels: tuple[str, ...] = (*sorted(set(labels) - {NO_LABEL}), NO_LABEL) if labels is not None else ()
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        for name in ("true_positives", "false_positives", "false_negatives"):
            self.add_state(name, default=torch.zeros(num_views, dtype=torch.float64), dist_reduce_fx="sum")
        if per_label:
            for name in ("label_true_positives", "label_false_positives", "label_false_negatives"):
                self.add_state(name, default=torch.zeros(num_views, len(self.labels), dtype=torch.float64),
                               dist_reduce_fx="sum")

    def update(self, preds: Sequence[PostLabels], golds: Sequence[PostLabels]) -> None:
        if len(preds) != len(golds):
            raise ValueError(f"{len(preds)} predicted posts but {len(golds)} gold posts")
        tp, fp, fn = ([0.0] * self.num_views for _ in range(3))
        size = len(self.labels)
        label_counts = [[[0.0] * size for _ in range(self.num_views)] for _ in range(3)] if self.per_label else None
        for i, (pred_views, gold_views) in enumerate(zip(preds, golds)):
            if len(gold_views) != self.num_views:
                raise ValueError(f"gold post {i} has {len(gold_views)} views, the metric expects {self.num_views}")
            if len(pred_views) not in (1, self.num_views):
                raise ValueError(f"predicted post {i} has {len(pred_views)} views; give 1 (one prediction "
                                 f"scored against every view) or {self.num_views}")
            for view in range(self.num_views):
                predicted = official_label_set(pred_views[0] if len(pred_views) == 1 else pred_views[view])
                gold = official_label_set(gold_views[view])
                common = predicted & gold
                tp[view] += len(common)
                fp[view] += len(predicted - common)
                fn[view] += len(gold - common)
                if label_counts is not None:
                    for kind, labels in enumerate((common, predicted - common, gold - common)):
                        for label in labels:
                            index = self._label_index.get(label)
                            if index is None:
                                raise ValueError(f"label {label!r} is not one of the metric's labels")
                            label_counts[kind][view][index] += 1.0
        device = self.true_positives.device
        self.true_positives += torch.tensor(tp, dtype=torch.float64, device=device)
        self.false_positives += torch.tensor(fp, dtype=torch.float64, device=device)
        self.false_negatives += torch.tensor(fn, dtype=torch.float64, device=device)
        if label_counts is not None:
            self.label_true_positives += torch.tensor(label_counts[0], dtype=torch.float64, device=device)
            self.label_false_positives += torch.tensor(label_counts[1], dtype=torch.float64, device=device)
            self.label_false_negatives += torch.tensor(label_counts[2], dtype=torch.float64, device=device)

    def compute(self) -> dict[str, dict[str, float]]:
        """Per-view and averaged P/R/F1 as python floats; a zero denominator gives 0 and a warning."""
        tp, fp, fn = (state.tolist() for state in (self.true_positives, self.false_positives, self.false_negatives))
        per_view = []
        for v in range(self.num_views):
            where = f"post-level score, view {view_name(v)}"
            precision = ratio(tp[v], tp[v] + fp[v], "TP + FP", where)
            recall = ratio(tp[v], tp[v] + fn[v], "TP + FN", where)
            per_view.append(prf(precision, recall, where))
        return with_view_average(per_view)

    def counts(self) -> dict[str, list[int]]:
        """Predicted (TP + FP) and gold (TP + FN) label counts per view, pseudo-label included."""
        tp, fp, fn = (state.tolist() for state in (self.true_positives, self.false_positives, self.false_negatives))
        return {"predicted": [int(a + b) for a, b in zip(tp, fp)], "gold": [int(a + b) for a, b in zip(tp, fn)]}

    def compute_per_label(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` for labels seen in that view.

        The pseudo-label of empty posts appears under the key ``""`` (``NO_LABEL``). Zero denominators
        give 0 without a warning: a label that is never predicted is expected, not a collapse.
        """
        if not self.per_label:
            raise RuntimeError("construct the metric with per_label=True to get a per-label breakdown")
        tp, fp, fn = (state.tolist() for state in
                      (self.label_true_positives, self.label_false_positives, self.label_false_negatives))
        result: dict[str, dict[str, dict[str, float]]] = {}
        for v in range(self.num_views):
            rows = {}
            for i, label in enumerate(self.labels):
                predicted, gold = tp[v][i] + fp[v][i], tp[v][i] + fn[v][i]
                if predicted == 0 and gold == 0:
                    continue
                precision = tp[v][i] / predicted if predicted else 0.0
                recall = tp[v][i] / gold if gold else 0.0
                f1 = (2 * precision * recall) / (precision + recall) if precision + recall else 0.0
                rows[label] = {"precision": precision, "recall": recall, "f1": f1,
                               "predicted": int(predicted), "gold": int(gold)}
            result[view_name(v)] = rows
        return result

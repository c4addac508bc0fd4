"""The post-level Faina score in plain Python: micro P/R/F1 of label sets per view, the one implementation.

Per view, over all posts: TP += |P ∩ G|, FP += |P \\ G|, FN += |G \\ P|. The official scorers split an empty
labels cell into the single label ``""``, so a post without labels carries one pseudo-label "no fallacy"
(``NO_LABEL``): an empty prediction on an empty gold post is one TP, an empty prediction on a labelled post is
one FP plus |G| FN, labels predicted on an empty gold post are |P| FP plus one FN. The project reproduces that
so its figures equal the published ones (docs/faina-metrics.md).

Why a module of its own: the scoring CLI must not import torch (seconds of start-up). ``PostMicroTally``
counts a batch (``increments``) and turns totals into figures (``scores``); it accumulates on its own for
``python -m faina.evaluate``, and ``metrics.faina_post.PostMicroScore`` (the torchmetrics ``Metric``) keeps
the same counts as DDP-reducible tensor states and calls the same methods.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar

from metrics.faina_scores import label_row, prf, ratio, view_name, with_view_average
from metrics.view_tally import ViewSums, ViewTally

NO_LABEL = ""  # the pseudo-label of an empty labels cell, as the official scripts read it

# One post: its label collection per view. ``preds`` may hold a single view (one-prediction mode).
PostLabels = Sequence[Collection[str]]


def official_label_set(labels: Collection[str]) -> frozenset[str]:
    """The label set as the official reader sees it: an empty collection becomes ``{""}``."""
    found = frozenset(label for label in labels if label != NO_LABEL)
    return found or frozenset((NO_LABEL,))


@dataclass
class PostCounts(ViewSums):
    """TP/FP/FN per view (floats, as the tensor states hold them) and, with ``per_label``, per view and label."""

    VIEW_FIELDS: ClassVar[tuple[str, ...]] = ("true_positives", "false_positives", "false_negatives")
    LABEL_FIELDS: ClassVar[tuple[str, ...]] = ("label_true_positives", "label_false_positives", "label_false_negatives")

    true_positives: list[float]
    false_positives: list[float]
    false_negatives: list[float]
    label_true_positives: list[list[float]] | None = None
    label_false_positives: list[list[float]] | None = None
    label_false_negatives: list[list[float]] | None = None


class PostMicroTally(ViewTally):
    """Faina post-level micro P/R/F1 per view and their unweighted average, without torch.

    ``update(preds, golds)``: sequences over posts of sequences over views of label collections. ``golds[i]``
    has ``num_views`` views; ``preds[i]`` has ``num_views`` or one (then scored against every gold view, the
    official ``-O`` mode). A gold view given as ``None`` did not annotate the post (the files' ``?`` marker): that
    (post, view) pair is skipped, its predicted and gold labels alike. ``labels`` (the task's label strings) is
    needed only for ``per_label=True``; the breakdown also has a row for the pseudo-label ``NO_LABEL``.
    """

    sums_type = PostCounts

    def __init__(self, num_views: int = 2, labels: Sequence[str] | None = None, per_label: bool = False):
        in_order = (*sorted(set(labels) - {NO_LABEL}), NO_LABEL) if labels is not None else ()
        super().__init__(num_views, in_order, per_label)
        if per_label and labels is None:
            raise ValueError("per_label=True needs the task's labels")

    def increments(self, preds: Sequence[PostLabels], golds: Sequence[PostLabels]) -> PostCounts:
        """The counts of these posts alone (what ``update`` adds); bad shapes or labels raise ``ValueError``."""
        self.check_shapes(preds, golds)
        counts = self.zeros()
        tp, fp, fn = counts.true_positives, counts.false_positives, counts.false_negatives
        tables = (
            (counts.label_true_positives, counts.label_false_positives, counts.label_false_negatives)
            if self.per_label
            else None
        )
        for pred_views, gold_views in zip(preds, golds):
            for view in range(self.num_views):
                if gold_views[view] is None:  # the view did not annotate the post: no counts either side
                    continue
                predicted = official_label_set(pred_views[0] if len(pred_views) == 1 else pred_views[view])
                gold = official_label_set(gold_views[view])
                common = predicted & gold
                tp[view] += len(common)
                fp[view] += len(predicted - common)
                fn[view] += len(gold - common)
                if tables is not None:
                    for table, labels in zip(tables, (common, predicted - common, gold - common)):
                        for label in labels:
                            index = self._label_index.get(label)
                            if index is None:
                                raise ValueError(f"label {label!r} is not one of the metric's labels")
                            table[view][index] += 1.0
        return counts

    def scores(self, counts: PostCounts) -> dict[str, dict[str, float]]:
        """Per-view and averaged P/R/F1 of ``counts``; a zero denominator gives 0 and a warning."""
        tp, fp, fn = counts.true_positives, counts.false_positives, counts.false_negatives
        per_view = []
        for v in range(self.num_views):
            where = f"post-level score, view {view_name(v)}"
            precision = ratio(tp[v], tp[v] + fp[v], "TP + FP", where)
            recall = ratio(tp[v], tp[v] + fn[v], "TP + FN", where)
            per_view.append(prf(precision, recall, where))
        return with_view_average(per_view)

    def predicted_and_gold(self, counts: PostCounts) -> dict[str, list[int]]:
        """Predicted (TP + FP) and gold (TP + FN) label counts per view, pseudo-label included."""
        tp, fp, fn = counts.true_positives, counts.false_positives, counts.false_negatives
        return {"predicted": [int(a + b) for a, b in zip(tp, fp)], "gold": [int(a + b) for a, b in zip(tp, fn)]}

    def label_scores(self, counts: PostCounts) -> dict[str, dict[str, dict[str, float]]]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` for labels seen in that view.

        The pseudo-label of empty posts appears under the key ``""`` (``NO_LABEL``). Zero denominators give 0
        without a warning: a label that is never predicted is expected, not a collapse.
        """
        self.require_per_label(counts)
        tp, fp, fn = counts.label_true_positives, counts.label_false_positives, counts.label_false_negatives
        result: dict[str, dict[str, dict[str, float]]] = {}
        for v in range(self.num_views):
            rows = {}
            for i, label in enumerate(self.labels):
                predicted, gold = tp[v][i] + fp[v][i], tp[v][i] + fn[v][i]
                if predicted == 0 and gold == 0:
                    continue
                precision = tp[v][i] / predicted if predicted else 0.0
                recall = tp[v][i] / gold if gold else 0.0
                rows[label] = label_row(precision, recall, predicted, gold)
            result[view_name(v)] = rows
        return result

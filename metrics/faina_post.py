"""Post-level Faina score as a torchmetrics ``Metric``: micro P/R/F1 of label sets per view.

The score itself (the counts, the official empty-post quirk, P, R and F1) is defined once, in plain Python,
in ``metrics.faina_post_counts``; this class only keeps its counts as float64 tensor states (exact for any
realistic count) reduced with ``sum`` under DDP. The scoring CLI uses ``PostMicroTally`` directly and never
imports torch. ``compute()`` returns python floats: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics import Metric

from metrics.faina_post_counts import NO_LABEL, PostCounts, PostLabels, PostMicroTally, official_label_set

__all__ = ["NO_LABEL", "PostLabels", "PostMicroScore", "official_label_set"]

_STATES = ("true_positives", "false_positives", "false_negatives")
_LABEL_STATES = ("label_true_positives", "label_false_positives", "label_false_negatives")


class PostMicroScore(Metric):
    """Faina post-level micro P/R/F1 per view and their unweighted average (``PostMicroTally``'s rules).

    ``update(preds, golds)``: sequences over posts of sequences over views of label collections.
    ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` or one (then scored against
    every gold view, the official ``-O`` mode). ``labels`` (the task's label strings) is needed only
    for ``per_label=True``; the breakdown also has a row for the pseudo-label ``NO_LABEL``.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, num_views: int = 2, labels: Sequence[str] | None = None, per_label: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.tally = PostMicroTally(num_views=num_views, labels=labels, per_label=per_label)
        self.num_views = num_views
        self.per_label = per_label
        self.labels = self.tally.labels
        for name in _STATES:
            self.add_state(name, default=torch.zeros(num_views, dtype=torch.float64), dist_reduce_fx="sum")
        if per_label:
            for name in _LABEL_STATES:
                self.add_state(
                    name, default=torch.zeros(num_views, len(self.labels), dtype=torch.float64), dist_reduce_fx="sum"
                )

    def update(self, preds: Sequence[PostLabels], golds: Sequence[PostLabels]) -> None:
        counts = self.tally.increments(preds, golds)
        values = (counts.true_positives, counts.false_positives, counts.false_negatives)
        if self.per_label:
            values += (counts.label_true_positives, counts.label_false_positives, counts.label_false_negatives)
        for name, value in zip(_STATES + _LABEL_STATES, values):
            state = getattr(self, name)
            state += torch.tensor(value, dtype=torch.float64, device=state.device)

    def _counts(self) -> PostCounts:
        names = _STATES + (_LABEL_STATES if self.per_label else ())
        return PostCounts(*(getattr(self, name).tolist() for name in names))

    def compute(self) -> dict[str, dict[str, float]]:
        """Per-view and averaged P/R/F1 as python floats; a zero denominator gives 0 and a warning."""
        return self.tally.scores(self._counts())

    def counts(self) -> dict[str, list[int]]:
        """Predicted (TP + FP) and gold (TP + FN) label counts per view, pseudo-label included."""
        return self.tally.label_counts(self._counts())

    def compute_per_label(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` (see ``PostMicroTally.label_scores``)."""
        if not self.per_label:
            raise RuntimeError("construct the metric with per_label=True to get a per-label breakdown")
        return self.tally.label_scores(self._counts())

"""Span-level Faina score as a torchmetrics ``Metric``: the token-overlap P/R of Da San Martino et al. (2019).

The score itself (what C is, how P, R and F1 follow, strict and soft weights) is defined once, in plain
Python, in ``metrics.faina_span_sums``; this class only keeps its additive sums as float64 tensor states
reduced with ``sum``, so training gets the same figures however the evaluation set is split over batches or
DDP processes, and the scoring CLI (which uses ``SpanOverlapTally`` directly) never imports torch.
``compute()`` returns python floats: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics import Metric

from common.labels import LabelInventory
from metrics.faina_span_sums import SPAN_MODES, PostSpans, SpanOverlapTally, SpanSums

__all__ = ["SPAN_MODES", "PostSpans", "SpanOverlapScore"]

_STATES = ("sum_c_precision", "sum_c_recall", "num_pred_spans", "num_gold_spans")
_LABEL_STATES = ("label_sum_c_precision", "label_sum_c_recall", "label_num_pred", "label_num_gold")


class SpanOverlapScore(Metric):
    """Faina span P/R/F1 per view and their unweighted average, strict or soft (``SpanOverlapTally``'s rules).

    ``update(preds, golds)``: both are sequences over posts of sequences over views of ``Span``s of
    the same posts. ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` views, or one
    view which is then scored against every gold view (the official ``-O`` mode, where the predicted
    span count of that single column is the precision denominator of every view).
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(
        self, inventory: LabelInventory, num_views: int = 2, mode: str = "strict", per_label: bool = False, **kwargs
    ):
        super().__init__(**kwargs)
        self.tally = SpanOverlapTally(inventory, num_views=num_views, mode=mode, per_label=per_label)
        self.inventory = inventory
        self.num_views = num_views
        self.mode = mode
        self.per_label = per_label
        self.labels = self.tally.labels
        for name in _STATES:
            self.add_state(name, default=torch.zeros(num_views, dtype=torch.float64), dist_reduce_fx="sum")
        if per_label:
            for name in _LABEL_STATES:
                self.add_state(
                    name, default=torch.zeros(num_views, len(self.labels), dtype=torch.float64), dist_reduce_fx="sum"
                )

    def update(self, preds: Sequence[PostSpans], golds: Sequence[PostSpans]) -> None:
        sums = self.tally.increments(preds, golds)
        values = (sums.precision, sums.recall, sums.predicted, sums.gold)
        if self.per_label:
            values += (sums.label_precision, sums.label_recall, sums.label_predicted, sums.label_gold)
        for name, value in zip(_STATES + _LABEL_STATES, values):
            state = getattr(self, name)
            state += torch.tensor(value, dtype=torch.float64, device=state.device)

    def _sums(self) -> SpanSums:
        names = _STATES + (_LABEL_STATES if self.per_label else ())
        return SpanSums(*(getattr(self, name).tolist() for name in names))

    def compute(self) -> dict[str, dict[str, float]]:
        """Per-view and averaged P/R/F1 as python floats; a zero denominator gives 0 and a warning."""
        return self.tally.scores(self._sums())

    def counts(self) -> dict[str, list[int]]:
        """Predicted and gold span counts per view, e.g. to warn when predictions collapse to nothing."""
        return self.tally.span_counts(self._sums())

    def compute_per_label(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` (see ``SpanOverlapTally.label_scores``)."""
        if not self.per_label:
            raise RuntimeError("construct the metric with per_label=True to get a per-label breakdown")
        return self.tally.label_scores(self._sums())

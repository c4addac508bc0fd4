"""Span-level Faina score as a torchmetrics ``Metric``: the token-overlap P/R of Da San Martino et al. (2019).

The score itself (what C is, how P, R and F1 follow, strict and soft weights) is defined once, in plain
Python, in ``metrics.faina_span_sums``; this class only keeps its additive sums as float64 tensor states
reduced with ``sum`` (``metrics.view_tally_metric``), so training gets the same figures however the evaluation
set is split over batches or DDP processes, and the scoring CLI (which uses ``SpanOverlapTally`` directly) never
imports torch. ``compute()`` returns python floats: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
"""

from __future__ import annotations

from common.labels import LabelInventory
from metrics.faina_span_sums import SPAN_MODES, PostSpans, SpanOverlapTally
from metrics.view_tally_metric import ViewTallyMetric

__all__ = ["SPAN_MODES", "PostSpans", "SpanOverlapScore"]


class SpanOverlapScore(ViewTallyMetric):
    """Faina span P/R/F1 per view and their unweighted average, strict or soft (``SpanOverlapTally``'s rules).

    ``update(preds, golds)``: both are sequences over posts of sequences over views of ``Span``s of
    the same posts. ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` views, or one
    view which is then scored against every gold view (the official ``-O`` mode, where the predicted
    span count of that single column is the precision denominator of every view).
    """

    STATES = ("sum_c_precision", "sum_c_recall", "num_pred_spans", "num_gold_spans")
    LABEL_STATES = ("label_sum_c_precision", "label_sum_c_recall", "label_num_pred", "label_num_gold")

    def __init__(
        self, inventory: LabelInventory, num_views: int = 2, mode: str = "strict", per_label: bool = False, **kwargs
    ):
        super().__init__(SpanOverlapTally(inventory, num_views=num_views, mode=mode, per_label=per_label), **kwargs)
        self.inventory = inventory
        self.mode = mode

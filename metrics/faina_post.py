"""Post-level Faina score as a torchmetrics ``Metric``: micro P/R/F1 of label sets per view.

The score itself (the counts, the official empty-post quirk, P, R and F1) is defined once, in plain Python,
in ``metrics.faina_post_counts``; this class only keeps its counts as float64 tensor states (exact for any
realistic count) reduced with ``sum`` under DDP (``metrics.view_tally_metric``). The scoring CLI uses
``PostMicroTally`` directly and never imports torch. ``compute()`` returns python floats:
``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
"""

from __future__ import annotations

from collections.abc import Sequence

from metrics.faina_post_counts import NO_LABEL, PostLabels, PostMicroTally, official_label_set
from metrics.view_tally_metric import ViewTallyMetric

__all__ = ["NO_LABEL", "PostLabels", "PostMicroScore", "official_label_set"]


class PostMicroScore(ViewTallyMetric):
    """Faina post-level micro P/R/F1 per view and their unweighted average (``PostMicroTally``'s rules).

    ``update(preds, golds)``: sequences over posts of sequences over views of label collections.
    ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` or one (then scored against
    every gold view, the official ``-O`` mode). ``labels`` (the task's label strings) is needed only
    for ``per_label=True``; the breakdown also has a row for the pseudo-label ``NO_LABEL``.
    """

    STATES = ("true_positives", "false_positives", "false_negatives")
    LABEL_STATES = ("label_true_positives", "label_false_positives", "label_false_negatives")

    def __init__(self, num_views: int = 2, labels: Sequence[str] | None = None, per_label: bool = False, **kwargs):
        super().__init__(PostMicroTally(num_views=num_views, labels=labels, per_label=per_label), **kwargs)

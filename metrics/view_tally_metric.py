"""A torchmetrics ``Metric`` around a plain-Python ``ViewTally``: the tally's sums as float64 tensor states.

The score's rules (what a sum is, how P/R/F1 follow) live in the tally (``metrics.view_tally``); this class only
keeps the tally's ``ViewSums`` fields as tensor states reduced with ``sum`` under DDP (float64: exact for any
realistic count), so training gets the figures the scoring CLI gets, however the set is split over batches or
processes. ``metrics.faina_span.SpanOverlapScore`` and ``metrics.faina_post.PostMicroScore`` are its two uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import torch
from torchmetrics import Metric

from metrics.view_tally import ScoreTable, ViewSums, ViewTally


class ViewTallyMetric(Metric):
    """The Metric of a tally: ``update`` adds ``tally.increments``; ``compute``, ``counts`` and ``compute_per_label``
    hand the summed states back to the tally. ``STATES`` / ``LABEL_STATES`` name the tensor state of each of the
    tally's ``VIEW_FIELDS`` / ``LABEL_FIELDS``, in their order."""

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    STATES: ClassVar[tuple[str, ...]] = ()
    LABEL_STATES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tally: ViewTally, **kwargs):
        super().__init__(**kwargs)
        self.tally = tally
        self.num_views = tally.num_views
        self.per_label = tally.per_label
        self.labels = tally.labels
        self._fields = tally.sums_type.VIEW_FIELDS + (tally.sums_type.LABEL_FIELDS if self.per_label else ())
        self._states = self.STATES + (self.LABEL_STATES if self.per_label else ())
        for name in self.STATES:
            self.add_state(name, default=torch.zeros(self.num_views, dtype=torch.float64), dist_reduce_fx="sum")
        if self.per_label:
            for name in self.LABEL_STATES:
                self.add_state(
                    name,
                    default=torch.zeros(self.num_views, len(self.labels), dtype=torch.float64),
                    dist_reduce_fx="sum",
                )

    def update(self, preds: Sequence[Sequence], golds: Sequence[Sequence]) -> None:
        sums = self.tally.increments(preds, golds)
        for name, field in zip(self._states, self._fields):
            state = getattr(self, name)
            state += torch.tensor(getattr(sums, field), dtype=torch.float64, device=state.device)

    def _sums(self) -> ViewSums:
        return self.tally.sums_type(
            **{field: getattr(self, name).tolist() for name, field in zip(self._states, self._fields)}
        )

    def compute(self) -> ScoreTable:
        """Per-view and averaged P/R/F1 as python floats; a zero denominator gives 0 and a warning."""
        return self.tally.scores(self._sums())

    def counts(self) -> dict[str, list[int]]:
        """Predicted and gold counts per view (``ViewTally.counts``), e.g. to warn when predictions collapse."""
        return self.tally.predicted_and_gold(self._sums())

    def compute_per_label(self) -> dict[str, ScoreTable]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` (the tally's ``label_scores``)."""
        if not self.per_label:
            raise RuntimeError("construct the metric with per_label=True to get a per-label breakdown")
        return self.tally.label_scores(self._sums())

"""What the plain-Python Faina tallies share: additive per-view sums, the shape checks and accumulating on their own.

A Faina score is a handful of sums per annotator view (and, for a per-label breakdown, per view and label) that
add up over posts, then a rule that turns the totals into P/R/F1. ``ViewSums`` is the sums (zeros, adding two),
``ViewTally`` the accumulation around a subclass's ``increments`` (the sums of one batch) and ``scores`` (totals ->
figures). ``metrics.faina_span_sums`` and ``metrics.faina_post_counts`` hold the two rules; the torchmetrics side
keeps the same sums as tensor states (``metrics.view_tally_metric``). No torch here: the scoring CLI imports it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

ScoreTable = dict[str, dict[str, float]]


@dataclass
class ViewSums:
    """Base of a score's additive state: the ``VIEW_FIELDS`` are lists over views, the ``LABEL_FIELDS`` tables over
    views and labels (``None`` without a per-label breakdown). Adding two gives the sums of the union of their posts,
    element by element in the order a tensor ``+=`` adds in, so batches and processes can be scored apart."""

    VIEW_FIELDS: ClassVar[tuple[str, ...]] = ()
    LABEL_FIELDS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def zeros(cls, num_views: int, num_labels: int | None = None):
        views = {name: [0.0] * num_views for name in cls.VIEW_FIELDS}
        tables = {
            name: None if num_labels is None else [[0.0] * num_labels for _ in range(num_views)]
            for name in cls.LABEL_FIELDS
        }
        return cls(**views, **tables)

    def add(self, other: ViewSums) -> None:
        for name in self.VIEW_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            for v, value in enumerate(theirs):
                mine[v] += value
        for name in self.LABEL_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is None or theirs is None:
                continue
            for row, other_row in zip(mine, theirs):
                for i, value in enumerate(other_row):
                    row[i] += value


class ViewTally(ABC):
    """A Faina score per view over posts, accumulated on its own (``update`` / ``compute``) or, through
    ``increments`` and ``scores``, by a Metric that keeps the sums itself.

    Subclasses set ``sums_type`` and define ``increments(preds, golds)`` (the sums of these posts alone),
    ``scores(sums)``, ``label_scores(sums)`` and ``predicted_and_gold(sums)``. ``preds[i]`` holds ``num_views``
    views or one (scored against every gold view, the official ``-O`` mode).
    """

    sums_type: ClassVar[type[ViewSums]] = ViewSums

    def __init__(self, num_views: int, labels: Sequence[str], per_label: bool):
        if num_views < 1:
            raise ValueError("num_views must be at least 1")
        self.num_views = num_views
        self.per_label = per_label
        self.labels: tuple[str, ...] = tuple(labels)
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        self.total = self.zeros()

    def zeros(self) -> Any:
        return self.sums_type.zeros(self.num_views, len(self.labels) if self.per_label else None)

    def check_shapes(self, preds: Sequence[Sequence], golds: Sequence[Sequence]) -> None:
        """``ValueError`` unless there are as many predicted as gold posts, each gold post has ``num_views`` views and
        each predicted one ``num_views`` or one."""
        if len(preds) != len(golds):
            raise ValueError(f"{len(preds)} predicted posts but {len(golds)} gold posts")
        for i, (pred_views, gold_views) in enumerate(zip(preds, golds)):
            if len(gold_views) != self.num_views:
                raise ValueError(f"gold post {i} has {len(gold_views)} views, the metric expects {self.num_views}")
            if len(pred_views) not in (1, self.num_views):
                raise ValueError(
                    f"predicted post {i} has {len(pred_views)} views; give 1 (one prediction "
                    f"scored against every view) or {self.num_views}"
                )

    @abstractmethod
    def increments(self, preds: Sequence[Sequence], golds: Sequence[Sequence]) -> Any:
        """The sums of these posts alone (what ``update`` adds); bad shapes or labels raise ``ValueError``."""

    @abstractmethod
    def scores(self, sums: Any) -> ScoreTable:
        """Per-view and averaged P/R/F1 of ``sums``; a zero denominator gives 0 and a warning."""

    @abstractmethod
    def label_scores(self, sums: Any) -> dict[str, ScoreTable]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` for the labels seen in that view."""

    @abstractmethod
    def predicted_and_gold(self, sums: Any) -> dict[str, list[int]]:
        """``{"predicted": [...], "gold": [...]}``: the counts per view the scores divide by."""

    def require_per_label(self, sums: ViewSums) -> None:
        if not self.per_label or getattr(sums, sums.LABEL_FIELDS[0]) is None:
            raise RuntimeError("construct the metric with per_label=True to get a per-label breakdown")

    # --- accumulating on its own (the scoring CLI) -----------------------------------------------
    def update(self, preds: Sequence[Sequence], golds: Sequence[Sequence]) -> None:
        self.total.add(self.increments(preds, golds))

    def compute(self) -> ScoreTable:
        return self.scores(self.total)

    def counts(self) -> dict[str, list[int]]:
        """Predicted and gold counts per view (spans, or labels with the empty-post pseudo-label)."""
        return self.predicted_and_gold(self.total)

    def compute_per_label(self) -> dict[str, ScoreTable]:
        return self.label_scores(self.total)

"""The span-level Faina score in plain Python: the one implementation, used with or without torch.

Da San Martino et al. (2019), as the official Faina and FadeIT scorers compute it (docs/faina-metrics.md): for one
view, with S the predicted and T the gold spans of a post and d a label weight, ``C(s, t, h) = |s ∩ t| / h ·
d(label(s), label(t))``; precision sums ``C(s, t, |s|)`` over every (predicted, gold) pair of every post and
divides by the number of predicted spans of the view in the whole set, recall sums ``C(s, t, |t|)`` and divides
by the number of gold spans. Nothing is capped. ``strict`` weighs a pair 1 when the labels are equal and 0
otherwise; ``soft`` also gives 0.5 when the predicted label is a *direct* parent of the gold one.

Why a module of its own: ``python -m faina.evaluate`` must start in a fraction of a second, and importing
torch/torchmetrics costs seconds. ``SpanOverlapTally`` computes the additive sums of a batch
(``increments``) and turns totals into figures (``scores``); it accumulates on its own for the scoring CLI,
and ``metrics.faina_span.SpanOverlapScore`` (the torchmetrics ``Metric`` training uses) keeps the same sums
as DDP-reducible tensor states and calls the same methods. The arithmetic follows the official script
operation by operation (``(|s ∩ t| / h) * d``, sums left to right in (post, predicted, gold) order), so the
figures agree to the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from metrics.faina_scores import label_row, prf, scaled_ratio, view_name, with_view_average
from metrics.view_tally import ViewSums, ViewTally

if TYPE_CHECKING:
    from common.labels import LabelInventory
    from common.records import Span

SPAN_MODES = ("strict", "soft")

# One post: its spans per view. ``preds`` may hold a single view (one-prediction mode).
PostSpans = Sequence[Sequence["Span"]]


@dataclass
class SpanSums(ViewSums):
    """The additive state of the score: per view, and with ``per_label`` per view and label, float sums.

    ``precision``/``recall``: the sums of C over all pairs; ``predicted``/``gold``: the span counts.
    """

    VIEW_FIELDS: ClassVar[tuple[str, ...]] = ("precision", "recall", "predicted", "gold")
    LABEL_FIELDS: ClassVar[tuple[str, ...]] = ("label_precision", "label_recall", "label_predicted", "label_gold")

    precision: list[float]
    recall: list[float]
    predicted: list[float]
    gold: list[float]
    label_precision: list[list[float]] | None = None
    label_recall: list[list[float]] | None = None
    label_predicted: list[list[float]] | None = None
    label_gold: list[list[float]] | None = None


class SpanOverlapTally(ViewTally):
    """Faina span P/R/F1 per view and their unweighted average, strict or soft, without torch.

    ``update(preds, golds)``: both are sequences over posts of sequences over views of ``Span``s of the same
    posts. ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` views, or one view which is then
    scored against every gold view (the official ``-O`` mode, where the predicted span count of that single
    column is the precision denominator of every view). A gold view given as ``None`` did not annotate the post
    (the files' ``?`` marker): that (post, view) pair is skipped, predicted and gold spans alike. ``compute()``
    returns python floats: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
    """

    sums_type = SpanSums

    def __init__(self, inventory: LabelInventory, num_views: int = 2, mode: str = "strict", per_label: bool = False):
        if mode not in SPAN_MODES:
            raise ValueError(f"mode must be one of {SPAN_MODES}, not {mode!r}")
        super().__init__(num_views, tuple(inventory.fine) + tuple(inventory.coarse), per_label)
        self.inventory = inventory
        self.mode = mode
        if mode == "strict":
            self._weights = [[1.0 if p == g else 0.0 for g in self.labels] for p in self.labels]
        else:
            self._weights = [[inventory.soft_weight(p, g) for g in self.labels] for p in self.labels]

    # --- one batch -------------------------------------------------------------------------------
    def _indexed(self, spans: Sequence[Span]) -> list[tuple[int, int, int]]:
        """(first, last, label index) of each span of one post's view, checked."""
        out = []
        for span in spans:
            index = self._label_index.get(span.label)
            if index is None:
                raise ValueError(f"span label {span.label!r} is not in the inventory {self.inventory.name!r}")
            if span.last < span.first:
                raise ValueError(f"span {span} ends before it starts")
            out.append((span.first, span.last, index))
        return out

    def increments(self, preds: Sequence[PostSpans], golds: Sequence[PostSpans]) -> SpanSums:
        """The sums of these posts alone (what ``update`` adds); bad shapes or labels raise ``ValueError``."""
        self.check_shapes(preds, golds)
        sums = self.zeros()
        weights = self._weights
        for view in range(self.num_views):
            label_p = sums.label_precision[view] if self.per_label else None
            label_r = sums.label_recall[view] if self.per_label else None
            sum_p = sum_r = 0.0
            n_pred = n_gold = 0
            for p, g in zip(preds, golds):
                if g[view] is None:  # the view did not annotate the post: neither its predicted nor gold spans count
                    continue
                predicted = self._indexed(p[0] if len(p) == 1 else p[view])
                gold = self._indexed(g[view])
                n_pred += len(predicted)
                n_gold += len(gold)
                if self.per_label:
                    for _, _, label in predicted:
                        sums.label_predicted[view][label] += 1.0
                    for _, _, label in gold:
                        sums.label_gold[view][label] += 1.0
                for p_first, p_last, p_label in predicted:
                    row = weights[p_label]
                    for g_first, g_last, g_label in gold:
                        overlap = min(p_last, g_last) - max(p_first, g_first) + 1
                        if overlap < 0:
                            overlap = 0
                        weight = row[g_label]
                        # (|s ∩ t| / h) * d, in this order, as the official scorer computes it; summed left to
                        # right in the official (post, predicted, gold) order
                        c_precision = overlap / (p_last - p_first + 1) * weight
                        c_recall = overlap / (g_last - g_first + 1) * weight
                        sum_p += c_precision
                        sum_r += c_recall
                        if label_p is not None:
                            label_p[p_label] += c_precision
                            label_r[g_label] += c_recall
            sums.precision[view] = sum_p
            sums.recall[view] = sum_r
            sums.predicted[view] = float(n_pred)
            sums.gold[view] = float(n_gold)
        return sums

    # --- totals -> figures -----------------------------------------------------------------------
    def scores(self, sums: SpanSums) -> dict[str, dict[str, float]]:
        """Per-view and averaged P/R/F1 of ``sums``; a zero denominator gives 0 and a warning."""
        per_view = []
        for v in range(self.num_views):
            where = f"span {self.mode} score, view {view_name(v)}"
            precision = scaled_ratio(sums.precision[v], sums.predicted[v], "the number of predicted spans", where)
            recall = scaled_ratio(sums.recall[v], sums.gold[v], "the number of gold spans", where)
            per_view.append(prf(precision, recall, where))
        return with_view_average(per_view)

    def predicted_and_gold(self, sums: SpanSums) -> dict[str, list[int]]:
        """Predicted and gold span counts per view, e.g. to warn when predictions collapse to nothing."""
        return {"predicted": [int(x) for x in sums.predicted], "gold": [int(x) for x in sums.gold]}

    def label_scores(self, sums: SpanSums) -> dict[str, dict[str, dict[str, float]]]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` for labels seen in that view.

        A label's precision sums C over the predicted spans *with that label* divided by their number; its
        recall sums C over the gold spans with that label divided by theirs. In soft mode the 0.5 credit of a
        parent prediction goes to the parent's precision and to the child's recall. Labels absent from one
        side get 0 without a warning (that is expected, not a collapse).
        """
        self.require_per_label(sums)
        result: dict[str, dict[str, dict[str, float]]] = {}
        for v in range(self.num_views):
            sums_p, sums_r = sums.label_precision[v], sums.label_recall[v]
            n_pred, n_gold = sums.label_predicted[v], sums.label_gold[v]
            rows = {}
            for i, label in enumerate(self.labels):
                if n_pred[i] == 0 and n_gold[i] == 0:
                    continue
                precision = (1 / n_pred[i]) * sums_p[i] if n_pred[i] else 0.0
                recall = (1 / n_gold[i]) * sums_r[i] if n_gold[i] else 0.0
                rows[label] = label_row(precision, recall, n_pred[i], n_gold[i])
            result[view_name(v)] = rows
        return result

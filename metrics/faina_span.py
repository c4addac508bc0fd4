"""Span-level Faina score: the token-overlap precision/recall of Da San Martino et al. (2019).

For one view, with S the predicted and T the gold spans of a post and d a label weight,
``C(s, t, h) = |s ∩ t| / h · d(label(s), label(t))``; precision sums ``C(s, t, |s|)`` over every
(predicted, gold) pair of every post and divides by the number of predicted spans of the view in the
whole evaluation set, recall sums ``C(s, t, |t|)`` and divides by the number of gold spans. Nothing is
capped (P or R may exceed 1 when spans overlap several others), exactly like the official Faina and
FadeIT scorers (docs/faina-metrics.md). ``strict`` mode weighs a pair 1 when the labels are equal and 0
otherwise; ``soft`` mode also gives 0.5 when the predicted label is a *direct* parent of the gold one
(``LabelInventory.soft_weight``).

The states are the four additive sums per view, float64, reduced with ``sum``, so the metric gives the
same figures however the evaluation set is split over batches or DDP processes. ``compute()`` returns
python floats: ``{"a1": {"precision", "recall", "f1"}, ..., "avg": {...}}``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torchmetrics import Metric

from common.labels import LabelInventory
from common.records import Span
from metrics.faina_scores import prf, scaled_ratio, view_name, with_view_average

SPAN_MODES = ("strict", "soft")

# One post: its spans per view. ``preds`` may hold a single view (one-prediction mode).
PostSpans = Sequence[Sequence[Span]]


class SpanOverlapScore(Metric):
    """Faina span P/R/F1 per view and their unweighted average, strict or soft.

    ``update(preds, golds)``: both are sequences over posts of sequences over views of ``Span``s of
    the same posts. ``golds[i]`` has ``num_views`` views; ``preds[i]`` has ``num_views`` views, or one
    view which is then scored against every gold view (the official ``-O`` mode, where the predicted
    span count of that single column is the precision denominator of every view).
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False

    def __init__(self, inventory: LabelInventory, num_views: int = 2, mode: str = "strict",
                 per_label: bool = False, **kwargs):
        super().__init__(**kwargs)
        if mode not in SPAN_MODES:
            raise ValueError(f"mode must be one of {SPAN_MODES}, not {mode!r}")
        if num_views < 1:
            raise ValueError("num_views must be at least 1")
        self.inventory = inventory
        self.num_views = num_views
        self.mode = mode
        self.per_label = per_label
        self.labels: tuple[str, ...] = tuple(inventory.fine) + tuple(inventory.coarse)
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        size = len(self.labels)
        weights = np.zeros((size, size), dtype=np.float64)
        for p, predicted in enumerate(self.labels):
            for g, gold in enumerate(self.labels):
                if mode == "strict":
                    weights[p, g] = 1.0 if predicted == gold else 0.0
                else:
                    weights[p, g] = inventory.soft_weight(predicted, gold)
        self._weights = weights
        for name in ("sum_c_precision", "sum_c_recall", "num_pred_spans", "num_gold_spans"):
            self.add_state(name, default=torch.zeros(num_views, dtype=torch.float64), dist_reduce_fx="sum")
        if per_label:
            for name in ("label_sum_c_precision", "label_sum_c_recall", "label_num_pred", "label_num_gold"):
                self.add_state(name, default=torch.zeros(num_views, size, dtype=torch.float64),
                               dist_reduce_fx="sum")

    # --- update ----------------------------------------------------------------------------------
    def _arrays(self, spans_per_post: Sequence[Sequence[Span]]) -> tuple[np.ndarray, ...]:
        """Post index, first token, last token and label index of every span of one view, in order."""
        post_ids, firsts, lasts, labels = [], [], [], []
        for i, spans in enumerate(spans_per_post):
            for span in spans:
                index = self._label_index.get(span.label)
                if index is None:
                    raise ValueError(f"span label {span.label!r} is not in the inventory {self.inventory.name!r}")
                if span.last < span.first:
                    raise ValueError(f"span {span} ends before it starts")
                post_ids.append(i)
                firsts.append(span.first)
                lasts.append(span.last)
                labels.append(index)
        return (np.asarray(post_ids, dtype=np.int64), np.asarray(firsts, dtype=np.int64),
                np.asarray(lasts, dtype=np.int64), np.asarray(labels, dtype=np.int64))

    def update(self, preds: Sequence[PostSpans], golds: Sequence[PostSpans]) -> None:
        if len(preds) != len(golds):
            raise ValueError(f"{len(preds)} predicted posts but {len(golds)} gold posts")
        for i, (p, g) in enumerate(zip(preds, golds)):
            if len(g) != self.num_views:
                raise ValueError(f"gold post {i} has {len(g)} views, the metric expects {self.num_views}")
            if len(p) not in (1, self.num_views):
                raise ValueError(f"predicted post {i} has {len(p)} views; give 1 (one prediction scored "
                                 f"against every view) or {self.num_views}")
        sums_p, sums_r, n_pred, n_gold = ([0.0] * self.num_views for _ in range(4))
        for view in range(self.num_views):
            p_post, p_first, p_last, p_label = self._arrays([p[0] if len(p) == 1 else p[view] for p in preds])
            g_post, g_first, g_last, g_label = self._arrays([g[view] for g in golds])
            pair_p, pair_g = _pairs_within_posts(p_post, g_post, len(golds))
            first = np.maximum(p_first[pair_p], g_first[pair_g])
            last = np.minimum(p_last[pair_p], g_last[pair_g])
            overlap = np.clip(last - first + 1, 0, None).astype(np.float64)
            weight = self._weights[p_label[pair_p], g_label[pair_g]]
            # (|s ∩ t| / h) * d, in this order, as the official scorer computes it
            c_precision = overlap / (p_last - p_first + 1)[pair_p] * weight
            c_recall = overlap / (g_last - g_first + 1)[pair_g] * weight
            # python's sum adds left to right in the official (post, predicted, gold) order
            sums_p[view] = sum(c_precision.tolist(), 0.0)
            sums_r[view] = sum(c_recall.tolist(), 0.0)
            n_pred[view] = float(len(p_post))
            n_gold[view] = float(len(g_post))
            if self.per_label:
                size = len(self.labels)
                self.label_sum_c_precision[view] += self._tensor(
                    np.bincount(p_label[pair_p], weights=c_precision, minlength=size))
                self.label_sum_c_recall[view] += self._tensor(
                    np.bincount(g_label[pair_g], weights=c_recall, minlength=size))
                self.label_num_pred[view] += self._tensor(np.bincount(p_label, minlength=size).astype(np.float64))
                self.label_num_gold[view] += self._tensor(np.bincount(g_label, minlength=size).astype(np.float64))
        self.sum_c_precision += self._tensor(sums_p)
        self.sum_c_recall += self._tensor(sums_r)
        self.num_pred_spans += self._tensor(n_pred)
        self.num_gold_spans += self._tensor(n_gold)

    def _tensor(self, values) -> torch.Tensor:
        return torch.as_tensor(np.asarray(values, dtype=np.float64), device=self.sum_c_precision.device)

    # --- results ---------------------------------------------------------------------------------
    def compute(self) -> dict[str, dict[str, float]]:
        """Per-view and averaged P/R/F1 as python floats; a zero denominator gives 0 and a warning."""
        sums_p = self.sum_c_precision.tolist()
        sums_r = self.sum_c_recall.tolist()
        n_pred = self.num_pred_spans.tolist()
        n_gold = self.num_gold_spans.tolist()
        per_view = []
        for v in range(self.num_views):
            where = f"span {self.mode} score, view {view_name(v)}"
            precision = scaled_ratio(sums_p[v], n_pred[v], "the number of predicted spans", where)
            recall = scaled_ratio(sums_r[v], n_gold[v], "the number of gold spans", where)
            per_view.append(prf(precision, recall, where))
        return with_view_average(per_view)

    def counts(self) -> dict[str, list[int]]:
        """Predicted and gold span counts per view, e.g. to warn when predictions collapse to nothing."""
        return {"predicted": [int(x) for x in self.num_pred_spans.tolist()],
                "gold": [int(x) for x in self.num_gold_spans.tolist()]}

    def compute_per_label(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{view: {label: {precision, recall, f1, predicted, gold}}}`` for labels seen in that view.

        A label's precision sums C over the predicted spans *with that label* divided by their number;
        its recall sums C over the gold spans with that label divided by theirs. In soft mode the 0.5
        credit of a parent prediction goes to the parent's precision and to the child's recall. Labels
        absent from one side get 0 without a warning (that is expected, not a collapse).
        """
        if not self.per_label:
            raise RuntimeError("construct the metric with per_label=True to get a per-label breakdown")
        result: dict[str, dict[str, dict[str, float]]] = {}
        sums_p = self.label_sum_c_precision.tolist()
        sums_r = self.label_sum_c_recall.tolist()
        n_pred = self.label_num_pred.tolist()
        n_gold = self.label_num_gold.tolist()
        for v in range(self.num_views):
            rows = {}
            for i, label in enumerate(self.labels):
                if n_pred[v][i] == 0 and n_gold[v][i] == 0:
                    continue
                precision = (1 / n_pred[v][i]) * sums_p[v][i] if n_pred[v][i] else 0.0
                recall = (1 / n_gold[v][i]) * sums_r[v][i] if n_gold[v][i] else 0.0
                f1 = (2 * precision * recall) / (precision + recall) if precision + recall else 0.0
                rows[label] = {"precision": precision, "recall": recall, "f1": f1,
                               "predicted": int(n_pred[v][i]), "gold": int(n_gold[v][i])}
            result[view_name(v)] = rows
        return result


def _pairs_within_posts(pred_post: np.ndarray, gold_post: np.ndarray, num_posts: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (predicted, gold) of every two spans of the same post, predicted-major.

    Both arrays list spans grouped by post in increasing post order (as ``_arrays`` builds them).
    """
    gold_count = np.bincount(gold_post, minlength=num_posts)
    gold_start = np.concatenate(([0], np.cumsum(gold_count)[:-1])) if num_posts else np.zeros(0, np.int64)
    per_pred = gold_count[pred_post] if len(pred_post) else np.zeros(0, np.int64)
    total = int(per_pred.sum())
    pair_pred = np.repeat(np.arange(len(pred_post)), per_pred)
    offsets = np.arange(total) - np.repeat(np.cumsum(per_pred) - per_pred, per_pred)
    pair_gold = np.repeat(gold_start[pred_post] if len(pred_post) else np.zeros(0, np.int64), per_pred) + offsets
    return pair_pred.astype(np.int64), pair_gold.astype(np.int64)

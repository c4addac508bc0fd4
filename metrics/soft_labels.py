"""Soft-label and perspectivist metrics of the Learning With Disagreements (LeWiDi) shared tasks, for multi-label items.

Pure numpy on arrays, so the CLIs, the training runner and the tests share one implementation and nothing here
needs torch. An *item* is what carries a label decision: a post (post level) or one token of a post (span level,
"inside a span of label X"). Every label of an item is its own binary question, as in LeWiDi's multi-label
VariErrNLI; arrays are ``[N items, C labels]`` (``[N, V views, C]`` for per-view votes).

- **Gold soft label** ``t``: the share of the annotators (views) that give the item the label
  (``soft_labels``; SemEval-2023 Task 11 released "soft_label" as "the proportion of annotators" per class).
- **Cross-entropy** (SemEval-2023 Task 11, LeWiDi 2nd edition, the soft metric of its ranking): per item and label
  ``-(t log p + (1 - t) log(1 - p))``, i.e. ``-Σ t_k log p_k`` over both classes, averaged over items;
  ``p`` and ``1 - p`` are clipped at ``1e-12`` so a confident mistake costs 27.6 nats, not infinity.
- **Manhattan distance** (LeWiDi 2025, 3rd edition, its soft metric for the binary MP and the multi-label
  VariErrNLI data): per item and label ``Σ_k |p_k - t_k|`` over both classes, ``= 2 |p - t|`` (0 to 2),
  averaged over items; averaged over labels it is the edition's "multilabel average Manhattan distance".
- **Expected calibration error**: 10 equal-width bins of the predicted probability, ``[0, 0.1), …, [0.9, 1.0]``
  (1.0 falls in the last); ``Σ_b (n_b / N) · |mean p in b - mean t in b|`` per label. The observed frequency of a
  bin is the mean *soft* label of its items, so a perfectly calibrated model of the annotator population scores 0.
- **Reference points**: the *prior* predicts every item the train mean soft label of each label; the *oracle*
  predicts the gold soft label itself. The oracle's cross-entropy is the entropy of the gold soft labels
  (``entropy``), the lowest cross-entropy any prediction can reach (model minus oracle is the mean KL divergence);
  its Manhattan distance and calibration error are 0.
- **Perspectivist error rate** (LeWiDi 2025 Task B, "average error rate" / "multilabel error rate"): each view's
  hard prediction against that annotator's labels, the share of its (item, label) decisions that differ
  (``error_rates``); their mean over views equals LeWiDi's per-item average when every view annotates every item.

Items whose gold soft label is NaN (no annotator labelled them: ``soft_labels`` with an ``annotated`` mask) are left
out of every average, so views with missing annotations need no other change here.

Sources: Leonardelli et al. 2023, "SemEval-2023 Task 11: Learning With Disagreements (LeWiDi)",
https://aclanthology.org/2023.semeval-1.314/ and the data description
https://github.com/Le-Wi-Di/le-wi-di.github.io/blob/main/LeWiDi_2-2023/readme.md ; Leonardelli et al. 2025,
"LeWiDi-2025 at NLPerspectives: The Third Edition of the Learning with Disagreements Shared Task",
https://arxiv.org/abs/2510.08460 and its metric notebook
https://github.com/Le-Wi-Di/le-wi-di.github.io/blob/main/LeWiDi_3-2025/Evaluation_LeWiDi_2025_Metrics.ipynb ;
Rizzi et al. 2024, "Soft metrics for evaluation with disagreements: an assessment",
https://aclanthology.org/2024.nlperspectives-1.9/ (why the 2025 edition moved from cross-entropy to Manhattan).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EPSILON = 1e-12
ECE_BINS = 10
MEASURES = ("cross_entropy", "manhattan", "ece")


def soft_labels(votes: np.ndarray, annotated: np.ndarray | None = None) -> np.ndarray:
    """``[N, C]``: the share of views giving each item each label, from 0/1 votes ``[N, V, C]``.

    ``annotated`` ``[N, V]`` (bool) marks the views that labelled the item; the share is over those, and NaN
    where none did. Without it every view counts.
    """
    votes = np.asarray(votes, dtype=np.float64)
    if annotated is None:
        return votes.mean(axis=1)
    weight = np.asarray(annotated, dtype=np.float64)[:, :, None]
    count = weight.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (votes * weight).sum(axis=1) / count, np.nan)


def _pair(predicted, gold) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p, t = np.asarray(predicted, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if p.shape != t.shape or p.ndim != 2:
        raise ValueError(f"predicted {p.shape} and gold {t.shape} must both be [items, labels]")
    valid = ~np.isnan(t)
    return p, np.where(valid, t, 0.0), valid


def _mean_over_items(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.where(valid, values, 0.0).sum(axis=0) / count, np.nan)


def item_cross_entropy(predicted, gold, epsilon: float = EPSILON) -> np.ndarray:
    """``[N, C]``: each item's ``-(t log p + (1 - t) log(1 - p))`` per label, ``p``/``1 - p`` clipped at ε; NaN where
    the gold is NaN (no annotator labelled the item)."""
    p, t, valid = _pair(predicted, gold)
    positive, negative = np.maximum(p, epsilon), np.maximum(1.0 - p, epsilon)
    return np.where(valid, -(t * np.log(positive) + (1.0 - t) * np.log(negative)), np.nan)


def cross_entropy(predicted, gold, epsilon: float = EPSILON) -> np.ndarray:
    """Per label ``[C]``: mean over items of ``item_cross_entropy``."""
    _, _, valid = _pair(predicted, gold)
    return _mean_over_items(item_cross_entropy(predicted, gold, epsilon), valid)


def entropy(gold) -> np.ndarray:
    """Per label ``[C]``: mean binary entropy of the gold soft labels (``0 log 0 = 0``): the cross-entropy floor."""
    _, t, valid = _pair(gold, gold)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = -(np.where(t > 0, t * np.log(t), 0.0) + np.where(t < 1, (1.0 - t) * np.log(1.0 - t), 0.0))
    return _mean_over_items(terms, valid)


def manhattan_distance(predicted, gold) -> np.ndarray:
    """Per label ``[C]``: mean over items of ``|p - t| + |(1 - p) - (1 - t)| = 2 |p - t|``."""
    p, t, valid = _pair(predicted, gold)
    return _mean_over_items(2.0 * np.abs(p - t), valid)


def reliability_bins(predicted, gold, bins: int = ECE_BINS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per label and bin ``[C, bins]``: the items in the bin, their summed predicted ``p`` and summed gold soft label
    ``t`` (the points of a reliability diagram: ``Σp / n`` against ``Σt / n``), over ``bins`` equal-width bins of
    ``p`` (1.0 in the last)."""
    p, t, valid = _pair(predicted, gold)
    index = np.clip(np.floor(p * bins).astype(int), 0, bins - 1)
    counts, sums_p, sums_t = (np.zeros((p.shape[1], bins)) for _ in range(3))
    for c in range(p.shape[1]):
        keep = valid[:, c]
        which = index[keep, c]
        counts[c] = np.bincount(which, minlength=bins)
        sums_p[c] = np.bincount(which, p[keep, c], minlength=bins)
        sums_t[c] = np.bincount(which, t[keep, c], minlength=bins)
    return counts, sums_p, sums_t


def expected_calibration_error(predicted, gold, bins: int = ECE_BINS) -> np.ndarray:
    """Per label ``[C]``: ``Σ_b (n_b / N) |mean p - mean t|`` over ``bins`` equal-width bins of ``p``."""
    return binned_calibration_error(*reliability_bins(predicted, gold, bins))


def binned_calibration_error(counts, sums_p, sums_t) -> np.ndarray:
    """Per label ``[C]``: the expected calibration error of ``reliability_bins``' sums ``[C, bins]``, so sums added
    over several sets of items (the folds of a run) give the error over all of them."""
    counts, sums_p, sums_t = (np.asarray(a, dtype=np.float64) for a in (counts, sums_p, sums_t))
    total = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Σ_b n_b/N · |Σp/n_b - Σt/n_b| = Σ_b |Σp - Σt| / N
        return np.where(total > 0, np.abs(sums_p - sums_t).sum(axis=1) / total, np.nan)


def prior(train_gold) -> np.ndarray:
    """``[C]``: each label's mean soft label over the training items, the prediction of the prior reference."""
    _, t, valid = _pair(train_gold, train_gold)
    return _mean_over_items(t, valid)


def error_rates(predicted_votes, gold_votes, annotated: np.ndarray | None = None) -> np.ndarray:
    """Per view ``[V]``: the share of its (item, label) decisions that differ from that annotator's.

    ``predicted_votes`` and ``gold_votes`` are 0/1 ``[N, V, C]``; ``annotated`` ``[N, V]`` leaves out the items a
    view did not label.
    """
    predicted, gold = np.asarray(predicted_votes, dtype=bool), np.asarray(gold_votes, dtype=bool)
    if predicted.shape != gold.shape or predicted.ndim != 3:
        raise ValueError(f"predicted {predicted.shape} and gold {gold.shape} votes must both be [items, views, labels]")
    weight = np.ones(gold.shape[:2]) if annotated is None else np.asarray(annotated, dtype=np.float64)
    wrong = ((predicted != gold).mean(axis=2) * weight).sum(axis=0)
    count = weight.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, wrong / count, np.nan)


def _measures(predicted: np.ndarray, gold: np.ndarray, bins: int) -> dict[str, np.ndarray]:
    return {
        "cross_entropy": cross_entropy(predicted, gold),
        "manhattan": manhattan_distance(predicted, gold),
        "ece": expected_calibration_error(predicted, gold, bins),
    }


def _clean(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 6)


def soft_label_report(predicted, gold, train_prior, labels: Sequence[str], bins: int = ECE_BINS) -> dict:
    """Every measure for the model, the prior and the oracle: per label and averaged over labels (macro).

    ``predicted`` and ``gold`` ``[N, C]``, ``train_prior`` ``[C]``. Returns ``{"model": {measure: avg}, "prior":
    ..., "oracle": ..., "per_label": {label: {"model": {...}, "prior": {...}, "oracle": {...}}}}`` (6 decimals;
    ``None`` for a label without items).
    """
    predicted, gold = np.asarray(predicted, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    reference = np.broadcast_to(np.asarray(train_prior, dtype=np.float64), gold.shape)
    oracle = np.where(np.isnan(gold), 0.0, gold)
    scored = {
        "model": _measures(predicted, gold, bins),
        "prior": _measures(reference, gold, bins),
        "oracle": _measures(oracle, gold, bins),
    }
    scored["oracle"]["cross_entropy"] = entropy(gold)  # the same value, computed without clipping at ε
    report: dict = {
        name: {
            measure: _clean(np.nanmean(values)) if not np.isnan(values).all() else None
            for measure, values in measures.items()
        }
        for name, measures in scored.items()
    }
    report["per_label"] = {
        label: {
            name: {measure: _clean(values[c]) for measure, values in measures.items()}
            for name, measures in scored.items()
        }
        for c, label in enumerate(labels)
    }
    return report

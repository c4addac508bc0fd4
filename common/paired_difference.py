"""The paired difference of two predictions of the same items and its standard error, items grouped or not.

Two calibrations (or models) scored on one set of items differ item by item; whether the set can tell them apart
depends on the spread of those differences, not of the two scores. Tokens of one post are not independent
observations, so the error counts whole posts (clusters). Used where the test set judges two calibrations
(``faina/benchmarks/calibration_scores.py``) and where dev decides whether a calibration moves at all
(``models/prior_fallback.py``).
"""

from __future__ import annotations

import numpy as np


def paired_difference(first, second, groups=None) -> tuple[np.ndarray, np.ndarray]:
    """Per label ``[C]``: the mean over items of ``first - second`` (per-item scores ``[N, C]`` of two predictions of
    the same items, e.g. ``item_cross_entropy``; NaN items left out) and its standard error.

    Items of one group (``groups`` ``[N]``: the post of each token at span level) are not independent, so the error
    is the cluster-robust one of a ratio of sums: with ``D_g`` and ``n_g`` the difference summed and the items counted
    in group ``g``, ``mean = ΣD_g / Σn_g`` and ``se = sqrt(G / (G - 1) · Σ (D_g - mean · n_g)²) / Σn_g`` over the
    ``G`` groups with items. Every item its own group (``groups=None``) gives the usual ``std / sqrt(N)``. How far
    apart two calibrations of one test set can be before the test set tells them apart: docs/soft-labels.md."""
    difference = np.asarray(first, dtype=np.float64) - np.asarray(second, dtype=np.float64)
    valid = ~np.isnan(difference)
    groups = np.arange(difference.shape[0]) if groups is None else np.asarray(groups)
    _, group = np.unique(groups, return_inverse=True)
    sums = np.zeros((group.max(initial=-1) + 1, difference.shape[1]))
    counts = np.zeros_like(sums)
    np.add.at(sums, group, np.where(valid, difference, 0.0))
    np.add.at(counts, group, valid.astype(np.float64))
    total, present = counts.sum(axis=0), (counts > 0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=0) / total
        spread = ((sums - mean * counts) ** 2).sum(axis=0)
        error = np.sqrt(present / (present - 1) * spread) / total
    return mean, np.where(present > 1, error, np.nan)

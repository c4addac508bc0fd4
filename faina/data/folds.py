"""Deterministic, label-stratified folds over posts (paper: 5 folds, 20% dev of each training portion).

Posts carry several labels per annotator, so plain stratification does not apply; multi-label iterative
stratification (Sechidis et al., 2011; the ``iterative-stratification`` package) balances every label
across folds. The label matrix is the union of all views' post labels, so rare labels reach every fold.
The package (and scikit-learn and pandas under it, about 0.5 s of imports) is imported by the functions that
split, not by the many modules that only pass a ``FoldSplit`` on (prediction, serving).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from common.errors import UserError


@dataclass(frozen=True)
class FoldSplit:
    """Indices into the corpus of one fold's train, dev and test posts (test is empty with cv=official)."""

    fold: int
    train: tuple[int, ...]
    dev: tuple[int, ...]
    test: tuple[int, ...]


def label_matrix(label_sets: Sequence[Sequence[str]], labels: Sequence[str]) -> np.ndarray:
    """Multi-hot matrix (posts × labels) of post label sets."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(label_sets), len(labels)), dtype=np.int64)
    for row, post_labels in enumerate(label_sets):
        for label in post_labels:
            matrix[row, index[label]] = 1
    return matrix


def _train_dev(
    indices: np.ndarray, matrix: np.ndarray, dev_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < dev_fraction < 1:
        raise UserError(
            f"cv.dev_fraction={dev_fraction} must lie strictly between 0 and 1", fix="e.g. cv.dev_fraction=0.2"
        )
    from iterstrat.ml_stratifiers import MultilabelStratifiedShuffleSplit

    splitter = MultilabelStratifiedShuffleSplit(n_splits=1, test_size=dev_fraction, random_state=seed)
    train, dev = next(splitter.split(indices.reshape(-1, 1), matrix[indices]))
    return np.sort(indices[train]), np.sort(indices[dev])


def kfold_splits(matrix: np.ndarray, num_folds: int, dev_fraction: float, seed: int) -> list[FoldSplit]:
    """``num_folds`` test folds covering every post once; each training portion split into train/dev."""
    n = len(matrix)
    if num_folds < 2 or num_folds > n:
        raise UserError(f"cv.num_folds={num_folds} needs 2 <= folds <= {n} posts", fix="e.g. cv.num_folds=5")
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold

    splitter = MultilabelStratifiedKFold(n_splits=num_folds, shuffle=True, random_state=seed)
    all_indices = np.arange(n)
    splits = []
    for fold, (rest, test) in enumerate(splitter.split(all_indices.reshape(-1, 1), matrix)):
        train, dev = _train_dev(rest, matrix, dev_fraction, seed + fold)
        splits.append(FoldSplit(fold, tuple(train.tolist()), tuple(dev.tolist()), tuple(np.sort(test).tolist())))
    return splits


def official_split(matrix: np.ndarray, dev_fraction: float, seed: int, count: int = 1) -> list[FoldSplit]:
    """``count`` splits of the labelled file into train/dev (split ``k`` drawn with seed ``seed + k``, so the
    first is the single model's split); the test posts come from another (unlabelled) file.

    ``count > 1`` (``cv.ensemble``) trains one model per split for an ensemble submission.
    """
    if count < 1:
        raise UserError(f"cv.ensemble={count} must be at least 1", fix="e.g. cv.ensemble=3")
    splits = []
    for k in range(count):
        train, dev = _train_dev(np.arange(len(matrix)), matrix, dev_fraction, seed + k)
        splits.append(FoldSplit(k, tuple(train.tolist()), tuple(dev.tolist()), ()))
    return splits

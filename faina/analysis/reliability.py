"""Reliability diagrams of a model's probabilities against the annotators' shares: ``reliability.png`` of a fold.

One panel per label: the predicted soft label ``p`` (the mean over the probability file's views) binned into the
ECE's equal-width bins, each bin's mean ``p`` against its mean gold soft label (the share of the annotated views),
for the reported (calibrated) probabilities and, when given, the uncalibrated ones; the diagonal is perfect
calibration, the dashed line the prior. Each panel's title has the label's ECE of both and its item count. The
arrays are those of the soft-label scores (``faina.scoring.soft_scores``), the bins ``metrics.soft_labels``'s.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from faina.formats.probability_file import ProbabilityFile
from faina.scoring.soft_scores import annotated_items, in_label_order, predicted_soft_labels, votes
from metrics.soft_labels import ECE_BINS, expected_calibration_error, reliability_bins, soft_labels

FILE_NAME = "reliability.png"


def reliability_points(predicted: np.ndarray, gold: np.ndarray, bins: int = ECE_BINS):
    """Per label ``[C]`` lists of ``(mean p, mean t, items)`` for the bins that hold items."""
    counts, sums_p, sums_t = reliability_bins(predicted, gold, bins)
    return [
        [
            (sums_p[c, b] / counts[c, b], sums_t[c, b] / counts[c, b], int(counts[c, b]))
            for b in range(bins)
            if counts[c, b]
        ]
        for c in range(counts.shape[0])
    ]


def write_reliability_plot(
    gold_corpus,
    probabilities: ProbabilityFile,
    labels,
    path: str | Path,
    uncalibrated: ProbabilityFile | None = None,
    prior: np.ndarray | None = None,
) -> Path:
    """Draw the diagrams of ``probabilities`` (and ``uncalibrated``) against ``gold_corpus`` into ``path`` (PNG).
    Both files must already match the gold file (``soft_scores.check_probabilities_match``) in ``labels``' order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(labels)
    gold = soft_labels(votes(gold_corpus, labels), annotated_items(gold_corpus))
    curves = [("calibrated" if uncalibrated is not None else "model", probabilities, "#4c72b0")]
    if uncalibrated is not None:
        curves.append(("uncalibrated", uncalibrated, "#dd8452"))
    columns = min(len(labels), 4)
    rows = math.ceil(len(labels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.2 * rows), squeeze=False)
    for c, label in enumerate(labels):
        axis = axes[c // columns][c % columns]
        axis.plot([0, 1], [0, 1], color="#999999", linewidth=0.8)
        if prior is not None and not np.isnan(prior[c]):
            axis.axhline(prior[c], color="#999999", linestyle="--", linewidth=0.8)
        titles = []
        for name, file, colour in curves:
            predicted = predicted_soft_labels(in_label_order(file, labels))
            points = reliability_points(predicted, gold)[c]
            if points:
                xs, ys, ns = zip(*points)
                axis.plot(xs, ys, marker="o", color=colour, label=name, linewidth=1.2, markersize=3)
            titles.append(f"{name} {expected_calibration_error(predicted, gold)[c]:.3f}")
        items = int((~np.isnan(gold[:, c])).sum())
        axis.set_title(f"{label}\nECE {'; '.join(titles)} ({items} items)", fontsize=7)
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.tick_params(labelsize=6)
        axis.set_xlabel("predicted share (bin mean)", fontsize=6)
        axis.set_ylabel("annotators' share (bin mean)", fontsize=6)
        if c == 0:
            axis.legend(fontsize=6, loc="upper left")
    for c in range(len(labels), rows * columns):
        axes[c // columns][c % columns].axis("off")
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path

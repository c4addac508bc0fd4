"""The data of a reliability diagram: ``reliability.json`` of a fold, and the same data pooled over a run's folds.

Per label, the predicted soft label ``p`` (the mean over the probability file's views) is binned into the ECE's
equal-width bins; each bin keeps its raw sums (items, ``Σp``, ``Σ gold``: the gold soft label is the share of the
annotated views), from which its point (mean ``p`` against mean gold) and the label's ECE follow. The sums make
pooling exact: the folds' sums added bin by bin are the sums over all their test items, so an experiment's diagram
is over every test post, not an average of the folds' diagrams. The arrays are those of the soft-label scores
(``faina.scoring.soft_scores``), the bins and the ECE ``metrics.soft_labels``'s, so a fold's ECE here is the one of
its ``metrics.json``. Drawing is ``faina.analysis.reliability_plot``'s; nothing here imports matplotlib, so every
fold can afford to write its data.

Layout: ``{"level", "bins", "folds", "labels": {label: {"items", "prior", "reported": curve, "uncalibrated": curve}}}``
with ``curve = {"ece", "counts", "sum_p", "sum_gold", "points": [[mean p, mean gold, items], ...]}`` (points of the
bins that hold items); ``reported`` is what the probability file holds (calibrated when the model is),
``uncalibrated`` is present for a calibrated model only; ``prior`` is the train part's mean soft label (over pooled
folds: the mean of their priors), ``null`` when unknown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from common.errors import UserError
from common.io import atomic_write_json
from faina.formats.probability_file import ProbabilityFile
from faina.scoring.soft_scores import annotated_items, in_label_order, predicted_soft_labels, votes
from metrics.soft_labels import ECE_BINS, binned_calibration_error, reliability_bins, soft_labels

FILE_NAME = "reliability.json"
CURVES = ("reported", "uncalibrated")
DECIMALS = 6  # the ECE as metrics.json rounds it; the sums stay unrounded, so pooling is exact


def reliability_data(
    gold_corpus,
    probabilities: ProbabilityFile,
    labels: Sequence[str],
    uncalibrated: ProbabilityFile | None = None,
    prior: np.ndarray | None = None,
    bins: int = ECE_BINS,
) -> dict:
    """The diagram data (module docstring) of ``probabilities`` (and ``uncalibrated``) against ``gold_corpus``; both
    files must already match the gold file (``soft_scores.check_probabilities_match``)."""
    labels = list(labels)
    gold = soft_labels(votes(gold_corpus, labels), annotated_items(gold_corpus))
    sums = {"reported": reliability_bins(predicted_soft_labels(in_label_order(probabilities, labels)), gold, bins)}
    if uncalibrated is not None:
        sums["uncalibrated"] = reliability_bins(predicted_soft_labels(in_label_order(uncalibrated, labels)), gold, bins)
    table = {}
    for c, label in enumerate(labels):
        row: dict = {"items": int((~np.isnan(gold[:, c])).sum()), "prior": _number(None if prior is None else prior[c])}
        for name, (counts, sums_p, sums_t) in sums.items():
            row[name] = curve(counts[c], sums_p[c], sums_t[c])
        table[label] = row
    return {"level": probabilities.level, "bins": bins, "folds": 1, "labels": table}


def curve(counts, sums_p, sums_t) -> dict:
    """One label's curve from its bins' sums ``[bins]``: the ECE, the sums and the points of the bins with items."""
    counts, sums_p, sums_t = (np.asarray(a, dtype=np.float64) for a in (counts, sums_p, sums_t))
    ece = binned_calibration_error(counts[None], sums_p[None], sums_t[None])[0]
    points = [
        [round(sums_p[b] / counts[b], DECIMALS), round(sums_t[b] / counts[b], DECIMALS), int(counts[b])]
        for b in range(len(counts))
        if counts[b]
    ]
    return {
        "ece": _number(ece),
        "counts": [int(n) for n in counts],
        "sum_p": [float(x) for x in sums_p],
        "sum_gold": [float(x) for x in sums_t],
        "points": points,
    }


def pool_reliability(folds: Sequence[dict]) -> dict:
    """The diagram data over several folds' data: bin sums added, points and ECE computed from the totals, the prior
    the mean of the folds' priors."""
    first = folds[0]
    for other in folds[1:]:
        if (other["level"], other["bins"], list(other["labels"])) != (
            first["level"],
            first["bins"],
            list(first["labels"]),
        ):
            raise ValueError("the folds' reliability data differ in level, bins or labels")
    table = {}
    for label in first["labels"]:
        rows = [fold["labels"][label] for fold in folds]
        priors = [r["prior"] for r in rows if r["prior"] is not None]
        pooled: dict = {
            "items": sum(r["items"] for r in rows),
            "prior": _number(sum(priors) / len(priors) if priors else None),
        }
        for name in CURVES:
            if all(name in r for r in rows):
                pooled[name] = curve(*(np.sum([r[name][key] for r in rows], axis=0) for key in _SUMS))
        table[label] = pooled
    folds_pooled = sum(fold.get("folds", 1) for fold in folds)
    return {"level": first["level"], "bins": first["bins"], "folds": folds_pooled, "labels": table}


_SUMS = ("counts", "sum_p", "sum_gold")


def write_reliability_data(data: dict, folder: str | Path) -> Path:
    return atomic_write_json(Path(folder) / FILE_NAME, data)


def read_reliability_data(path: str | Path) -> dict:
    """A ``reliability.json`` as written; an unreadable one is a ``UserError`` naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(
            f"cannot read the reliability data ({err})",
            path=str(path),
            fix="rerun the fold (delete its folder first), or set outputs.reliability_plot=none",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("labels"), dict):
        raise UserError(
            "not the reliability data of a fold (no labels)",
            path=str(path),
            fix="rerun the fold (delete its folder first), or set outputs.reliability_plot=none",
        )
    return data


def _number(value) -> float | None:
    """A JSON number of ``DECIMALS`` decimals, ``None`` for an unknown (NaN) one."""
    if value is None or math.isnan(float(value)):
        return None
    return round(float(value), DECIMALS)

"""The quality benchmark's calibration scores: one trained model's test probabilities before and after calibration.

A run's probabilities do not depend on its decision rule, so one prediction pass over the run's own dev split and
one over test are enough: every calibration of ``CALIBRATIONS`` is fitted on the dev outputs by the model's
``fit_calibration`` (``models/calibration.py``, the function ``train.py`` fits ``model.module.calibration`` with),
applied to the same test outputs (``apply_calibration``), and the test probabilities are scored against the
annotators' shares (``faina.scoring.soft_scores``: cross-entropy, Manhattan, ECE, per label, with the prior of the
run's train-dev file and the oracle). The ``+prior`` calibrations add the prior fallback
(``models/prior_fallback.py``) with that same prior; ``+margin`` moves a head only on ``MARGIN`` standard errors of
dev evidence (``calibration.fallback_margin``). ``uncalibrated`` is the model's raw
probabilities, whatever calibration it was saved with. A ``views`` model is scored pooled over its views (the mean of
the per-view probabilities), a one-view model (``soft``, ``majority``) as it is. Each calibration's per-label
cross-entropy is also paired, item by item, with the prior's and with today's default calibration (``paired``:
the difference and its standard error, the posts as independent units), which says whether the test set can tell
two calibrations apart at all. Saved per run as ``benchmark-calibration.json`` (reused).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

from common.paired_difference import paired_difference
from faina.benchmarks.quality_runs import TASKS, dev_corpus_of, model_dir
from models.calibration import CalibrationSettings, PostCalibrationSettings, SpanCalibrationSettings

MARGIN = 1.0  # the +margin rows' fallback_margin: one standard error of dev evidence before a label moves
CALIBRATIONS: dict[str, dict[str, CalibrationSettings | None]] = {
    "post": {
        "uncalibrated": None,
        "temperature": PostCalibrationSettings(method="temperature", scope="own"),
        "temperature-shared": PostCalibrationSettings(method="temperature", scope="shared"),
        "platt": PostCalibrationSettings(method="platt", scope="own"),
        "temperature+prior": PostCalibrationSettings(method="temperature", scope="own", fallback="prior"),
        "platt+prior": PostCalibrationSettings(method="platt", scope="own", fallback="prior"),
        "temperature+prior+margin": PostCalibrationSettings(
            method="temperature", scope="own", fallback="prior", fallback_margin=MARGIN
        ),
    },
    "span": {
        "uncalibrated": None,
        "temperature": SpanCalibrationSettings(method="temperature", scope="own"),
        "temperature-shared": SpanCalibrationSettings(method="temperature", scope="shared"),
        "temperature+prior": SpanCalibrationSettings(method="temperature", scope="own", fallback="prior"),
        "temperature+prior+margin": SpanCalibrationSettings(
            method="temperature", scope="own", fallback="prior", fallback_margin=MARGIN
        ),
    },
}
REFERENCE = "temperature"  # today's default calibration, what every other one is also paired against
CALIBRATION_FILE = "benchmark-calibration.json"
CALIBRATION_VERSION = 7  # bump when what the file holds changes: older files are recomputed


def calibration_scores(model, meta, level, gold_test, dev_corpus, test_corpus, prior_corpus) -> dict:
    """Test probability scores of ``model`` under every calibration of its level, fitted on ``dev_corpus``."""
    import torch

    from faina.scoring.soft_scores import item_losses, item_posts, model_prior, soft_scores
    from faina.serving.prediction import corpus_indices, predict_outputs
    from faina.serving.probabilities import probabilities_from_outputs

    labels, num_views = meta["labels"], meta["num_views"]
    test = predict_outputs(model, meta, test_corpus, raw=True)
    dev = predict_outputs(model, meta, dev_corpus, raw=True)
    indices = corpus_indices(test_corpus)
    prior = torch.as_tensor(model_prior(prior_corpus, labels, num_views))  # what the `+prior` rows mix in
    scores, losses = {}, {}
    for name, settings in CALIBRATIONS[level].items():
        if settings is None:
            outputs, info = test, {}
            probabilities = probabilities_from_outputs(test_corpus, indices, outputs, labels, num_views, raw=True)
        else:
            started = time.perf_counter()
            values, info = model.fit_calibration(dev, settings, prior)
            info = {**info, "fit_seconds": round(time.perf_counter() - started, 2)}  # what the fit costs a fold
            outputs = model.apply_calibration(test, values)
            probabilities = probabilities_from_outputs(test_corpus, indices, outputs, labels, num_views)
        block = soft_scores(gold_test, probabilities, labels, None, prior_corpus)
        scores[name] = {key: block[key] for key in ("model", "prior", "oracle", "per_label")}
        scores[name]["fit"] = info
        losses[name] = item_losses(gold_test, probabilities, labels, prior_corpus)
    groups = item_posts(gold_test)
    for name, loss in losses.items():
        scores[name]["paired"] = {
            "vs_" + other: paired_table(loss["model"], reference, groups, labels)
            for other, reference in (("prior", loss["prior"]), (REFERENCE, losses[REFERENCE]["model"]))
        }
    return scores


def paired_table(losses, reference, groups, labels) -> dict:
    """Per label, the test cross-entropy's difference to ``reference``'s on the same items and its standard error
    (posts as the independent units: ``common.paired_difference``)."""
    difference, error = paired_difference(losses, reference, groups)
    return {
        label: {"difference": round(float(d), 6), "se": None if math.isnan(e) else round(float(e), 6)}
        for label, d, e in zip(labels, difference, error)
    }


def evaluate_calibration(task, recipe, seed, folder: Path, files, log: Callable[[str], None]) -> dict:
    """One run's calibration scores (``benchmark-calibration.json`` in its folder, reused when of this version)."""
    saved_file = folder / CALIBRATION_FILE
    if saved_file.is_file():
        saved = json.loads(saved_file.read_text())
        if saved.get("version") == CALIBRATION_VERSION:
            return saved
    from faina.data.task_data import read_level
    from faina.formats.labels import LabelInventory
    from faina.serving.fold_model import load_exported

    log(f"calibrating {folder.name}")
    model, meta = load_exported(model_dir(folder, task, recipe))
    dev, data = dev_corpus_of(task, files, recipe, seed)
    level, _, ext = TASKS[task]
    inventory = LabelInventory.load(files["labels"])
    gold_test = read_level(files[f"test.{ext}"], level, "fine", inventory)
    result = {
        "version": CALIBRATION_VERSION,
        "task": task,
        "recipe": recipe,
        "seed": seed,
        "scores": calibration_scores(model, meta, level, gold_test, dev, gold_test, data.gold_corpus),
    }
    saved_file.write_text(json.dumps(result, indent=2))
    return result

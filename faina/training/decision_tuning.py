"""Fitting a model's decision rule and its calibration on its fold's dev set, on the device the run predicts with.

Models decide themselves what they tune (``FallacyModule.tune_decisions``, by their ``decision`` settings: MVML
thresholds, MVMD O biases; nothing with a fixed rule; the fit is the model's ``fit_decision``, which the quality
benchmark calls for its rules too) and how they calibrate their probabilities (``FallacyModule.calibrate``, by
their ``calibration`` settings, ``models/calibration.py``); these runner-side helpers only move the model to the
prediction device (after ``fit`` Lightning hands the model back on the CPU) and hand it the dev batches.
"""

from __future__ import annotations

import torch


def prediction_device(accelerator: str) -> torch.device:
    """The one device a fold's model is tuned, calibrated and predicts on for ``trainer.accelerator``."""
    if accelerator in {"gpu", "cuda", "auto"} and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def tune_on_dev(accelerator: str, model, dev_batches) -> dict | None:
    """What the model tuned on ``dev_batches`` (``None`` for a fixed rule); the model returns to its device."""
    if getattr(model, "tuned", False) is not True:
        return None
    return _on_prediction_device(accelerator, model, lambda: model.tune_decisions(dev_batches))


def calibrate_on_dev(accelerator: str, model, dev_batches) -> dict | None:
    """What the model's calibration fitted on ``dev_batches`` (``None`` with ``calibration.method: none``)."""
    calibration = getattr(model, "calibration", None)
    if calibration is None or not calibration.fits:
        return None
    return _on_prediction_device(accelerator, model, lambda: model.calibrate(dev_batches))


def _on_prediction_device(accelerator: str, model, fit):
    before = next(model.parameters()).device
    model.to(prediction_device(accelerator))
    try:
        return fit()
    finally:
        model.to(before)

"""Fitting a model's decision rule and its calibration on its fold's dev set, on the device the run predicts with.

Models decide themselves what they tune (``FallacyModule.fit_on_dev``, by their ``decision`` settings: MVML
thresholds, MVMD O biases; nothing with a fixed rule; the fit is the model's ``fit_decision``, which the quality
benchmark calls for its rules too) and how they calibrate their probabilities (by their ``calibration`` settings,
``models/calibration.py``). Both are fitted on one dev pass: the validation pass of the chosen epoch when the fold
kept it (``common.validation_outputs``; the same outputs a new pass would give), else a new pass. These runner-side
helpers only move the model to the prediction device (after ``fit`` Lightning hands the model back on the CPU),
make that pass when needed, and time each step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from common.phase_timing import PhaseClock


def prediction_device(accelerator: str) -> torch.device:
    """The one device a fold's model is tuned, calibrated and predicts on for ``trainer.accelerator``."""
    if accelerator in {"gpu", "cuda", "auto"} and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def fits_on_dev(model) -> bool:
    """Whether the model fits anything on dev after training: a tuned decision rule or a calibration."""
    calibration = getattr(model, "calibration", None)
    return getattr(model, "tuned", False) is True or (calibration is not None and calibration.fits)


def fit_on_dev(
    accelerator: str,
    model,
    kept_outputs: list[dict] | None,
    dev_batches: Callable[[], Iterable],
    clock: PhaseClock,
    prior: torch.Tensor | None = None,
) -> dict:
    """What the model fitted on dev (``tuned_on_dev``, ``calibrated_on_dev``): on ``kept_outputs`` (the chosen
    epoch's validation outputs) or, without them, on a new pass over ``dev_batches()``; ``prior``: each label's
    share in the fold's training part, per model view, for a calibration's prior fallback. The seconds go to
    ``clock``: ``dev_pass`` (the new pass), ``tuning``, ``calibration``; and which pass served, as its note
    ``dev_pass`` (``validation`` or ``new``). The model returns to its device."""
    if not fits_on_dev(model):
        return {}
    before = next(model.parameters()).device
    model.to(prediction_device(accelerator))
    try:
        with clock.phase("dev_pass"):
            outputs = kept_outputs if kept_outputs else model.dev_pass(dev_batches())
        with clock.phase("tuning"):
            tuned = model.fit_decision_on(outputs)
        with clock.phase("calibration"):
            calibrated = model.fit_calibration_on(outputs, prior)
    finally:
        model.to(before)
    clock.note("dev_pass", "validation" if kept_outputs else "new")  # which pass served: part of the fold's cost
    fitted = {"tuned_on_dev": tuned, "calibrated_on_dev": calibrated}
    return {key: value for key, value in fitted.items() if value}

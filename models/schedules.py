"""Learning-rate schedules, built through Hydra as ``_partial_`` and completed with the step count.

``configure_optimizers`` calls the partial as ``schedule(optimizer, total_steps=...)`` with
``trainer.estimated_stepping_batches``, so a config never has to know the data size.
"""

from __future__ import annotations

import math

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR


def slanted_triangular_factor(step: int, total_steps: int, cut_frac: float = 0.3, ratio: float = 32.0) -> float:
    """ULMFiT's slanted triangular multiplier (Howard & Ruder 2018), as MaChAmp uses it.

    A short linear warm-up over the first ``cut_frac`` of the steps from ``1/ratio`` to 1, then a long
    linear decay back to ``1/ratio``: fast adaptation to the task, then careful refinement.
    """
    cut = max(1, math.floor(total_steps * cut_frac))
    if step < cut:
        progress = step / cut
    else:
        progress = max(0.0, 1.0 - (step - cut) / max(1, total_steps - cut))
    return (1.0 + progress * (ratio - 1.0)) / ratio


def slanted_triangular(optimizer: Optimizer, total_steps: int, cut_frac: float = 0.3, ratio: float = 32.0) -> LambdaLR:
    """A ``LambdaLR`` following ``slanted_triangular_factor`` (stepped once per optimisation step)."""
    if total_steps < 1:
        raise ValueError(f"total_steps must be positive, got {total_steps}")
    return LambdaLR(optimizer, lambda step: slanted_triangular_factor(step, total_steps, cut_frac, ratio))


def constant(optimizer: Optimizer, total_steps: int) -> LambdaLR:
    """The base learning rate throughout (a baseline for sweeps)."""
    return LambdaLR(optimizer, lambda step: 1.0)

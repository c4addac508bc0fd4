"""Mean ± std over folds, seeds or runs: one definition for every table the project prints.

The std is the population standard deviation (numpy's default, ddof=0), as the Faina paper's tables over five
folds use it; a single value has std 0.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def mean_std(values: Iterable[float]) -> dict[str, float]:
    """``{"mean": ..., "std": ...}`` of ``values`` (at least one)."""
    array = np.asarray(list(values), dtype=np.float64)
    if array.size == 0:
        raise ValueError("mean_std of no values")
    return {"mean": float(array.mean()), "std": float(array.std())}

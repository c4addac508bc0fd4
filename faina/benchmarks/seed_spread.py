"""The benchmarks' rule for a difference over seeds: mean ± std of each row, and a verdict that calls a difference
a gain or a loss only when it exceeds the larger of the two rows' seed std (docs/benchmark-quality.md, "The rule
before anything is recommended").

A row of one seed has no spread to judge against, so a comparison where neither row has two seeds gets no verdict
rather than a gain for any difference: one model a session is how a base-size encoder is measured on a CPU machine,
and its report must not read as a verdict before the other seeds are in.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

ONE_SEED = "one seed: no spread"


def mean_std(values: Iterable[float]) -> tuple[float, float]:
    """Mean and sample std over seeds (std 0.0 for one value)."""
    values = list(values)
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def spread_verdict(
    row: tuple[float, float], reference: tuple[float, float], seeds: int, lower_is_better: bool = False
) -> str:
    """``gain`` / ``loss`` when ``row``'s mean differs from ``reference``'s (each a (mean, std) over seeds) by more
    than the larger of the two stds, either way, else ``within spread``; ``lower_is_better`` for a loss such as
    cross-entropy. ``seeds`` is the larger seed count of the two rows, and under two there is no verdict."""
    if seeds < 2:
        return ONE_SEED
    (mean, std), (base_mean, base_std) = row, reference
    gain = base_mean - mean if lower_is_better else mean - base_mean
    spread = max(std, base_std)
    return "gain" if gain > spread else "loss" if gain < -spread else "within spread"

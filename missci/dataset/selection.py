"""Which arguments a run uses: all of a split, or the first few (quick runs), shared by zero-shot and LoRA."""

from __future__ import annotations

import dataclasses

from missci.dataset.reader import Argument


def select(
    arguments: list[Argument], max_arguments: int | None = None, max_fallacies: int | None = None
) -> list[Argument]:
    """The first ``max_arguments`` arguments, keeping at most ``max_fallacies`` R_i overall (quick runs)."""
    chosen, budget = [], max_fallacies
    for argument in arguments[:max_arguments] if max_arguments else arguments:
        fallacies = argument.fallacies if budget is None else argument.fallacies[:budget]
        if not fallacies:
            break
        chosen.append(dataclasses.replace(argument, fallacies=tuple(fallacies)))
        if budget is not None:
            budget -= len(fallacies)
    return chosen

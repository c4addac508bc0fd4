"""Cross-validation folds over Missci arguments, without leakage between training and test.

The Missci paper only has dev/test; fine-tuning needs k-fold cross-validation. Splitting by R_i would put
sibling fallacies of one argument in train and test (they share the claim and p0), and splitting by argument
still lets a claim that recurs in several arguments (15 claims recur across 33 of the 184 arguments) be
trained on and tested on. ``grouped_folds`` keeps every group (a claim, by default) inside one fold.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from common.errors import UserError
from missci.dataset.reader import Argument


@dataclass(frozen=True)
class Fold:
    index: int
    train: list[Argument]
    test: list[Argument]


def claim_key(argument: Argument) -> str:
    """Arguments whose claims are equal up to case and white space belong to one claim group."""
    return " ".join(argument.claim.casefold().split())


def argument_key(argument: Argument) -> str:
    return argument.id


# cv.group_by values: what must never be split across folds
GROUP_KEYS: dict[str, Callable[[Argument], str]] = {"claim": claim_key, "argument": argument_key}


def _check_num_folds(num_folds: int, num_units: int, unit: str) -> None:
    if num_folds < 2 or num_folds > num_units:
        raise UserError(
            f"num_folds={num_folds} is invalid for {num_units} {unit}.",
            fix=f"choose 2 <= num_folds <= number of {unit}.",
        )


def _folds_from_buckets(arguments: list[Argument], buckets: list[list[Argument]]) -> list[Fold]:
    folds = []
    for index, bucket in enumerate(buckets):
        test_ids = {a.id for a in bucket}
        folds.append(
            Fold(
                index=index,
                train=[a for a in arguments if a.id not in test_ids],
                test=[a for a in arguments if a.id in test_ids],
            )
        )
    return folds


def argument_folds(arguments: list[Argument], num_folds: int, seed: int = 0) -> list[Fold]:
    """Shuffle the arguments with ``seed`` and deal them round-robin into ``num_folds`` folds
    (``cv.group_by=argument``: the folds of the first LoRA runs, kept unchanged so their numbers stay reproducible).

    Round-robin over fallacy-count-sorted arguments keeps the number of R_i per fold balanced.
    """
    _check_num_folds(num_folds, len(arguments), "arguments")
    order = list(arguments)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda a: -len(a.fallacies))  # stable: ties keep the shuffled order
    buckets: list[list[Argument]] = [[] for _ in range(num_folds)]
    for position, argument in enumerate(order):
        cycle, offset = divmod(position, num_folds)
        buckets[offset if cycle % 2 == 0 else num_folds - 1 - offset].append(argument)
    return _folds_from_buckets(arguments, buckets)


def grouped_folds(arguments: list[Argument], num_folds: int, seed: int = 0, group_by: str = "claim") -> list[Fold]:
    """Folds in which every group of arguments (same claim, by default) is on one side only.

    Groups are ordered by their key (so the folds do not depend on the input order), shuffled with ``seed``,
    sorted by size (largest first, stable) and each placed in the fold with the fewest R_i so far (ties: fewest
    arguments, then the lowest index). This greedy placement keeps fold sizes within one group of each other.
    ``group_by="argument"`` returns :func:`argument_folds` (today's argument-level folds).
    """
    if group_by not in GROUP_KEYS:
        raise UserError(f"unknown cv.group_by={group_by!r}.", fix=f"use one of {', '.join(GROUP_KEYS)}.")
    if group_by == "argument":
        return argument_folds(arguments, num_folds, seed)
    key = GROUP_KEYS[group_by]
    groups: dict[str, list[Argument]] = {}
    for argument in arguments:
        groups.setdefault(key(argument), []).append(argument)
    _check_num_folds(num_folds, len(groups), f"{group_by} groups")
    order = [groups[k] for k in sorted(groups)]
    random.Random(seed).shuffle(order)
    order.sort(key=lambda group: -sum(len(a.fallacies) for a in group))
    buckets: list[list[Argument]] = [[] for _ in range(num_folds)]
    for group in order:
        target = min(range(num_folds), key=lambda i: (sum(len(a.fallacies) for a in buckets[i]), len(buckets[i]), i))
        buckets[target].extend(group)
    return _folds_from_buckets(arguments, buckets)


def argument_fold(
    arguments: list[Argument], fold: int, num_folds: int, seed: int = 0, group_by: str = "argument"
) -> Fold:
    if not 0 <= fold < num_folds:
        raise UserError(f"fold={fold} is outside 0..{num_folds - 1}.", fix="pick a fold index below num_folds.")
    return grouped_folds(arguments, num_folds, seed, group_by)[fold]

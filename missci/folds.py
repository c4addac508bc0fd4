"""Argument-level folds: all fallacies of an argument land in the same fold, so no argument leaks.

The Missci paper only has dev/test; fine-tuning (a later LoRA issue) needs k-fold cross-validation over
arguments. Splitting by R_i would put sibling fallacies of one argument in train and test, which share the
claim and p0 and would inflate scores.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from common.errors import UserError
from missci.data import Argument


@dataclass(frozen=True)
class Fold:
    index: int
    train: list[Argument]
    test: list[Argument]


def argument_folds(arguments: list[Argument], num_folds: int, seed: int = 0) -> list[Fold]:
    """Shuffle the arguments with ``seed`` and deal them round-robin into ``num_folds`` folds.

    Round-robin over fallacy-count-sorted arguments keeps the number of R_i per fold balanced.
    """
    if num_folds < 2 or num_folds > len(arguments):
        raise UserError(f"num_folds={num_folds} is invalid for {len(arguments)} arguments.",
                        fix="choose 2 <= num_folds <= number of arguments.")
    order = list(arguments)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda a: -len(a.fallacies))  # stable: ties keep the shuffled order
    buckets: list[list[Argument]] = [[] for _ in range(num_folds)]
    for position, argument in enumerate(order):
        cycle, offset = divmod(position, num_folds)
        buckets[offset if cycle % 2 == 0 else num_folds - 1 - offset].append(argument)
    folds = []
    for index in range(num_folds):
        test_ids = {a.id for a in buckets[index]}
        folds.append(Fold(index=index, train=[a for a in arguments if a.id not in test_ids],
                          test=[a for a in arguments if a.id in test_ids]))
    return folds


def argument_fold(arguments: list[Argument], fold: int, num_folds: int, seed: int = 0) -> Fold:
    if not 0 <= fold < num_folds:
        raise UserError(f"fold={fold} is outside 0..{num_folds - 1}.", fix="pick a fold index below num_folds.")
    return argument_folds(arguments, num_folds, seed)[fold]

"""The Missci paper's random baselines (a class drawn uniformly per R_i) and a majority-class baseline; the premise is the claim or p0."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from common.spread import mean_std
from metrics.missci_premise import PremiseMetricConfig
from missci.analysis.evaluation import evaluate
from missci.dataset.classes import CLASS_NAMES
from missci.dataset.prediction_file import FallacyPrediction, RankedPremise
from missci.dataset.reader import Argument

REPORTED = ("p@1", "arg@1", "f1_micro", "meteor", "bertscore", "nli_a", "nli_s")


def premise_text(argument: Argument, premise: str) -> str:
    """The premise a baseline predicts: the argument's claim or its accurate premise p0."""
    return argument.claim if premise == "claim" else argument.accurate_premise


def argument_counts(arguments: list[Argument]) -> dict[str, int]:
    return {"arguments": len(arguments), "fallacies": sum(len(a.fallacies) for a in arguments)}


def random_predictions(arguments: list[Argument], premise: str, seed: int) -> list[FallacyPrediction]:
    rng = random.Random(seed)  # same sequence as random.seed(seed) + random.choice
    result = []
    for argument in arguments:
        text = premise_text(argument, premise)
        for fallacy in argument.fallacies:
            result.append(FallacyPrediction(argument.id, fallacy.id, [RankedPremise(rng.choice(CLASS_NAMES), text)]))
    return result


def majority_class(arguments: list[Argument]) -> str:
    """The class of the most interchangeable fallacies in ``arguments`` (ties: alphabetically first)."""
    counts = Counter(alt.fallacy_class for a in arguments for f in a.fallacies for alt in f.interchangeable)
    return min(counts, key=lambda name: (-counts[name], name))


def majority_predictions(arguments: list[Argument], premise: str, fallacy_class: str) -> list[FallacyPrediction]:
    return [
        FallacyPrediction(a.id, f.id, [RankedPremise(fallacy_class, premise_text(a, premise))])
        for a in arguments
        for f in a.fallacies
    ]


def run_majority_baseline(
    arguments: list[Argument], premise: str, fallacy_class: str, source: str, premises: PremiseMetricConfig | None
) -> dict:
    result = evaluate(arguments, majority_predictions(arguments, premise, fallacy_class), 1, premises)
    metrics = {k: v for k, v in result["metrics"].items() if k in REPORTED}
    return {
        "kind": "majority",
        "majority_class": fallacy_class,
        "majority_from": source,
        "seeds": {},
        "mean": metrics,
        "std": {k: 0.0 for k in metrics},
        "models": result["models"],
        "unavailable": result["unavailable"],
        "premise": premise,
        "counts": argument_counts(arguments),
    }


def run_random_baseline(
    arguments: list[Argument], premise: str, seeds: Sequence[int], premises: PremiseMetricConfig | None
) -> dict:
    per_seed: dict[str, dict[str, float]] = {}
    models: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    for seed in seeds:
        result = evaluate(arguments, random_predictions(arguments, premise, seed), 1, premises)
        per_seed[str(seed)] = {k: v for k, v in result["metrics"].items() if k in REPORTED}
        models, unavailable = result["models"], result["unavailable"]
    keys = list(next(iter(per_seed.values())))
    spread = {k: mean_std(m[k] for m in per_seed.values()) for k in keys}
    mean, std = {k: v["mean"] for k, v in spread.items()}, {k: v["std"] for k, v in spread.items()}
    return {
        "kind": "random",
        "seeds": per_seed,
        "mean": mean,
        "std": std,
        "models": models,
        "unavailable": unavailable,
        "premise": premise,
        "counts": argument_counts(arguments),
    }

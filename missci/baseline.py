"""The paper's random baselines (a class drawn uniformly per R_i), and a majority-class baseline; the premise
is the claim or p0.

Usage: ``python -m missci.baseline {random,majority} --premise {claim,p0} [--seeds 1 2 3 4 5] [--split test]
[--majority-from dev] [--json] [--max-fallacies N] [--out FILE]``
``random`` reproduces the official draws: ``random.seed(seed)`` once per run, ``random.choice`` over the 9 class
names in alphabetical order, arguments and fallacies in file order. ``majority`` predicts for every R_i the class
most frequent among the interchangeable fallacies of another split (``--majority-from``, default dev: the
training data of ``cv=official``; ties go to the alphabetically first class). It is the bar a fine-tuned model
must clear to show it learned more than the class prior.
"""
from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter
from typing import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from common.io import atomic_write_json
from metrics.missci_premise import PremiseMetricConfig
from missci.classes import CLASS_NAMES
from missci.cli_options import add_data_options, add_premise_options, premise_config, print_result
from missci.data import Argument, load_split
from missci.evaluate import evaluate
from missci.zero_shot import select
from missci.predictions import FallacyPrediction, RankedPremise

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
            result.append(FallacyPrediction(argument.id, fallacy.id,
                                            [RankedPremise(rng.choice(CLASS_NAMES), text)]))
    return result


def majority_class(arguments: list[Argument]) -> str:
    """The class of the most interchangeable fallacies in ``arguments`` (ties: alphabetically first)."""
    counts = Counter(alt.fallacy_class for a in arguments for f in a.fallacies for alt in f.interchangeable)
    return min(counts, key=lambda name: (-counts[name], name))


def majority_predictions(arguments: list[Argument], premise: str, fallacy_class: str) -> list[FallacyPrediction]:
    return [FallacyPrediction(a.id, f.id, [RankedPremise(fallacy_class, premise_text(a, premise))])
            for a in arguments for f in a.fallacies]


def run_majority_baseline(arguments: list[Argument], premise: str, fallacy_class: str, source: str,
                          premises: PremiseMetricConfig | None) -> dict:
    result = evaluate(arguments, majority_predictions(arguments, premise, fallacy_class), 1, premises)
    metrics = {k: v for k, v in result["metrics"].items() if k in REPORTED}
    return {"kind": "majority", "majority_class": fallacy_class, "majority_from": source, "seeds": {},
            "mean": metrics, "std": {k: 0.0 for k in metrics}, "models": result["models"],
            "unavailable": result["unavailable"], "premise": premise, "counts": argument_counts(arguments)}


def run_random_baseline(arguments: list[Argument], premise: str, seeds: Sequence[int],
                        premises: PremiseMetricConfig | None) -> dict:
    per_seed: dict[str, dict[str, float]] = {}
    models: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    for seed in seeds:
        result = evaluate(arguments, random_predictions(arguments, premise, seed), 1, premises)
        per_seed[str(seed)] = {k: v for k, v in result["metrics"].items() if k in REPORTED}
        models, unavailable = result["models"], result["unavailable"]
    keys = list(next(iter(per_seed.values())))
    mean = {k: statistics.fmean(m[k] for m in per_seed.values()) for k in keys}
    std = {k: statistics.pstdev([m[k] for m in per_seed.values()]) if len(per_seed) > 1 else 0.0 for k in keys}
    return {"kind": "random", "seeds": per_seed, "mean": mean, "std": std, "models": models,
            "unavailable": unavailable, "premise": premise, "counts": argument_counts(arguments)}


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("missci.baseline", __doc__.splitlines()[0])
    parser.add_argument("kind", choices=["random", "majority"],
                        help="random (the paper's: a uniform class per R_i) or majority (the most frequent class "
                             "of --majority-from for every R_i)")
    parser.add_argument("--premise", choices=["claim", "p0"], default="claim",
                        help="premise of every prediction: the claim or the accurate premise p0")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5],
                        help="one run per seed; mean and std over them (random)")
    parser.add_argument("--majority-from", choices=["dev", "test"], default="dev",
                        help="split whose most frequent class the majority baseline predicts")
    parser.add_argument("--max-arguments", type=int, default=None, help="only the first N arguments")
    parser.add_argument("--max-fallacies", type=int, default=None,
                        help="only the first N R_i (the subset a reduced run with task.max_fallacies=N predicts)")
    parser.add_argument("--out", default=None, help="also write the result as JSON to this file "
                                                    "(e.g. results/<name>/baseline-test.json for missci.report)")
    add_data_options(parser)
    add_premise_options(parser)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    arguments = select(load_split(args.split, args.data), args.max_arguments, args.max_fallacies)
    if args.kind == "majority":
        chosen = majority_class(load_split(args.majority_from, args.data))
        result = run_majority_baseline(arguments, args.premise, chosen, args.majority_from, premise_config(args))
    else:
        result = run_random_baseline(arguments, args.premise, args.seeds, premise_config(args))
    result["split"] = args.split
    if args.out:
        atomic_write_json(args.out, result)
    if args.json:
        print_result(result, True)
    else:
        if args.kind == "majority":
            print(f"majority class ({result['majority_class']!r}, most frequent in {args.majority_from}) + "
                  f"{args.premise} on {args.split}")
        else:
            print(f"random + {args.premise} on {args.split}, seeds {' '.join(map(str, args.seeds))}")
        for key in result["mean"]:
            print(f"  {key:<10} {result['mean'][key]:.4f} ± {result['std'][key]:.4f}")
        for key, model in result["models"].items():
            print(f"  model for {key}: {model}")
        for key, reason in result["unavailable"].items():
            print(f"  {key}: unavailable ({reason})")
    return result


if __name__ == "__main__":
    main()

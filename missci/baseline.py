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
from collections.abc import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from common.io import atomic_write_json
from missci.analysis.baselines import (  # noqa: F401  (re-exported: the library API of this command)
    REPORTED,
    argument_counts,
    majority_class,
    majority_predictions,
    premise_text,
    random_predictions,
    run_majority_baseline,
    run_random_baseline,
)
from missci.cli_options import (
    add_shared_options,
    add_subset_options,
    chosen_arguments,
    premise_metrics_from_args,
    print_result,
)
from missci.dataset.reader import load_split


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("missci.baseline", __doc__.splitlines()[0])
    parser.add_argument(
        "kind",
        choices=["random", "majority"],
        help="random (the paper's: a uniform class per R_i) or majority (the most frequent class "
        "of --majority-from for every R_i)",
    )
    parser.add_argument(
        "--premise",
        choices=["claim", "p0"],
        default="claim",
        help="premise of every prediction: the claim or the accurate premise p0",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[1, 2, 3, 4, 5],
        help="one run per seed; mean and std over them (random)",
    )
    parser.add_argument(
        "--majority-from",
        choices=["dev", "test"],
        default="dev",
        help="split whose most frequent class the majority baseline predicts",
    )
    add_subset_options(parser)
    parser.add_argument(
        "--out",
        default=None,
        help="also write the result as JSON to this file (e.g. results/<name>/baseline-test.json for missci.report)",
    )
    add_shared_options(parser)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    arguments = chosen_arguments(args)
    if args.kind == "majority":
        chosen = majority_class(load_split(args.majority_from, args.data))
        result = run_majority_baseline(
            arguments, args.premise, chosen, args.majority_from, premise_metrics_from_args(args)
        )
    else:
        result = run_random_baseline(arguments, args.premise, args.seeds, premise_metrics_from_args(args))
    result["split"] = args.split
    if args.out:
        atomic_write_json(args.out, result)
    if args.json:
        print_result(result, True)
    else:
        if args.kind == "majority":
            print(
                f"majority class ({result['majority_class']!r}, most frequent in {args.majority_from}) + "
                f"{args.premise} on {args.split}"
            )
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

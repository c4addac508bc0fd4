"""Evaluate a Missci prediction file: P@k, Arg@k, micro-F1, per-class F1, premise metrics, consistency.

Usage: ``python -m missci.evaluate PRED [--split test] [--k K] [--json] [--data DIR] [premise options]``
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from missci.analysis.evaluation import (  # noqa: F401  (re-exported: the library API of this command)
    consistency,
    evaluate,
)
from missci.cli_options import add_shared_options, premise_metrics_from_args, print_result
from missci.dataset.prediction_file import read_predictions
from missci.dataset.reader import load_split


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("missci.evaluate", __doc__.splitlines()[0])
    parser.add_argument(
        "predictions", metavar="PRED", help="prediction JSONL (format: missci/dataset/prediction_file.py)"
    )
    parser.add_argument("--k", type=int, default=6, help="largest k for P@k and Arg@k")
    parser.add_argument(
        "--only-predicted", action="store_true", help="evaluate only the arguments that have predictions"
    )
    add_shared_options(parser)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    arguments = load_split(args.split, args.data)
    result = evaluate(
        arguments,
        read_predictions(args.predictions),
        args.k,
        premise_metrics_from_args(args),
        args.predictions,
        args.only_predicted,
    )
    result["split"] = args.split
    print_result(result, args.json)
    return result


if __name__ == "__main__":
    main()

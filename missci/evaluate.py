"""Evaluate a Missci prediction file: P@k, Arg@k, micro-F1, per-class F1, premise metrics, consistency.

Usage: ``python -m missci.evaluate PRED [--split test] [--k K] [--json] [--data DIR] [premise options]``
"""
from __future__ import annotations

import argparse
from typing import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from metrics.missci_premise import PremiseMetricConfig, premise_metrics
from metrics.missci_ranking import ranking_metrics
from missci.cli_options import add_data_options, add_premise_options, premise_config, print_result
from missci.data import Argument, load_split
from missci.predictions import FallacyPrediction, align_with_gold, ranked_rows, read_predictions


def consistency(pairs) -> float | None:
    """Share of R_i whose re-classified own premise keeps the model's top-1 class (None if not recorded)."""
    recorded = [(pred.predictions[0].fallacy_class, pred.reclassified[0])
                for _, _, pred in pairs if pred.reclassified and pred.predictions]
    return sum(a == b for a, b in recorded) / len(recorded) if recorded else None


def evaluate(arguments: list[Argument], predictions: list[FallacyPrediction], max_k: int = 6,
             premises: PremiseMetricConfig | None = PremiseMetricConfig(), source: str = "<predictions>",
             only_predicted: bool = False) -> dict:
    """``{"metrics": flat floats, "models": {...}, "unavailable": {...}, "counts": {...}}``."""
    pairs = align_with_gold(arguments, predictions, source, only_predicted)
    metrics = ranking_metrics(ranked_rows(pairs), max_k)
    models: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    if premises is not None:
        items = [([(g.fallacy_class, g.premise) for g in fallacy.interchangeable],
                  [(p.fallacy_class, p.premise) for p in pred.predictions]) for _, fallacy, pred in pairs]
        premise_scores, models, unavailable = premise_metrics(items, premises)
        metrics.update(premise_scores)
    value = consistency(pairs)
    if value is not None:
        metrics["consistency"] = value
    counts = {"arguments": len({a.id for a, _, _ in pairs}), "fallacies": len(pairs),
              "unparsed_lines": sum(p.unparsed_lines for _, _, p in pairs)}
    return {"metrics": metrics, "models": models, "unavailable": unavailable, "counts": counts}


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("missci.evaluate", __doc__.splitlines()[0])
    parser.add_argument("predictions", metavar="PRED", help="prediction JSONL (format: missci/predictions.py)")
    parser.add_argument("--k", type=int, default=6, help="largest k for P@k and Arg@k")
    parser.add_argument("--only-predicted", action="store_true",
                        help="evaluate only the arguments that have predictions")
    add_data_options(parser)
    add_premise_options(parser)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    arguments = load_split(args.split, args.data)
    result = evaluate(arguments, read_predictions(args.predictions), args.k, premise_config(args),
                      args.predictions, args.only_predicted)
    result["split"] = args.split
    print_result(result, args.json)
    return result


if __name__ == "__main__":
    main()

"""Command-line options shared by the Missci CLIs (data folder, split, subset, premise-metric models)."""

from __future__ import annotations

import argparse
import json

from metrics.missci_premise import PAPER_MODELS, PremiseMetricConfig
from missci.dataset.reader import Argument, load_split
from missci.dataset.selection import select


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """The data, split, ``--json`` and premise-metric options every Missci scoring command has."""
    add_data_options(parser)
    add_premise_options(parser)


def add_subset_options(parser: argparse.ArgumentParser) -> None:
    """``--max-arguments`` / ``--max-fallacies``: the subset ``chosen_arguments`` keeps."""
    parser.add_argument("--max-arguments", type=int, default=None, help="only the first N arguments")
    parser.add_argument(
        "--max-fallacies",
        type=int,
        default=None,
        help="only the first N R_i (the subset a reduced run with task.max_fallacies=N predicts)",
    )


def chosen_arguments(args: argparse.Namespace) -> list[Argument]:
    """The arguments of ``--split`` in ``--data``, cut to ``--max-arguments`` / ``--max-fallacies``."""
    return select(load_split(args.split, args.data), args.max_arguments, args.max_fallacies)


def add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        default=None,
        help="folder with {dev,test}.missci.jsonl, or `sample` for the synthetic sample "
        "(default: $MISSCI_DATA, else data/missci)",
    )
    parser.add_argument("--split", default="test", choices=["dev", "test"], help="Missci split")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def add_premise_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("premise metrics")
    group.add_argument("--no-premise-metrics", action="store_true", help="only the classification metrics")
    group.add_argument(
        "--paper-models", action="store_true", help="use the paper's models: " + ", ".join(PAPER_MODELS.values())
    )
    group.add_argument("--no-meteor", action="store_true", help="skip METEOR")
    group.add_argument("--sbert-model", default=None, help="SBERT for premise matching (default: minilm)")
    group.add_argument("--bertscore-model", default=None, help="BERTScore model (default: minilm; 'none' skips)")
    group.add_argument(
        "--bertscore-layers",
        type=int,
        default=None,
        help="BERTScore layer (default: bert-score's layer for the model, else its last)",
    )
    group.add_argument(
        "--nli-model", default=None, help=f"T5 NLI model (default: {PAPER_MODELS['nli_model']}; 'none' skips)"
    )


def premise_metrics_from_args(args: argparse.Namespace) -> PremiseMetricConfig | None:
    if args.no_premise_metrics:
        return None
    base = PremiseMetricConfig.paper() if args.paper_models else PremiseMetricConfig()

    def choose(value, default):
        if value is None:
            return default
        return None if value.lower() == "none" else value

    return PremiseMetricConfig(
        meteor=not args.no_meteor,
        bertscore_model=choose(args.bertscore_model, base.bertscore_model),
        bertscore_layers=args.bertscore_layers,
        nli_model=choose(args.nli_model, base.nli_model),
        sbert_model=args.sbert_model or base.sbert_model,
    )


def print_result(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return
    for key, value in result.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for inner, number in value.items():
                shown = f"{number:.4f}" if isinstance(number, float) else number
                print(f"  {inner:<40} {shown}")
        else:
            print(f"{key:<42} {value}")

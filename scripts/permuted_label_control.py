"""The permuted-label control of the calibration's prior fallback: one model on a corpus with one label unlearnable.

    python scripts/permuted_label_control.py --label Insult --out /tmp/permuted [--corpus DIR] [--task post-f]
        [--recipe views|soft|majority|joint] [--seed 1] [--epochs N] [--override KEY=VALUE ...] [--permutation-seed 0]

Writes a copy of the corpus (``train-dev.conll``, ``test.conll``, ``labels.yaml``) with ``--label``'s annotations
moved to other posts (``faina.benchmarks.permuted_label``) under ``--out/permuted``, trains one run on it exactly as
the quality benchmark does (``train.py ... data=custom cv=official``, ``--out/runs``; a finished run is reused), and
scores its test probabilities under every calibration fitted on its own dev split, with and without the prior
fallback (``faina.benchmarks.calibration_scores``). Prints per label the test cross-entropy of each calibration and
of the prior, and whether the permuted label's comes out at the prior's (within ``TOLERANCE``), then each
calibration's difference, item by item, to the prior (the permuted label) or to today's ``temperature`` (the real
labels) with its paired standard error: how much of a gap the test set can resolve at all. The same as JSON in
``--out/control.json`` (``gap_to_prior_se``, ``real_labels_worse_than_temperature``, ``paired``). ``--recipe
joint`` trains ``task=multi`` (the corpus's span and post entries in one run) and scores the task's entry, the
multi-task model's own calibration; its entries read their own model blocks, so the fallback is
``--override task.entries.span_f.model.module.calibration.fallback=prior`` (and ``post_f``). What was measured:
docs/soft-labels.md#the-prior-fallback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.benchmarks.quality_runs import DEFAULT_CORPUS, TASKS, Length, default_epochs

TOLERANCE = 0.002  # the criterion: the permuted label's test cross-entropy within this of the prior's


def build_parser():
    parser = command_parser("scripts.permuted_label_control", __doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="the fine label to permute across posts")
    parser.add_argument(
        "--out", type=Path, required=True, help="output folder, one per label (the corpus copy, the run, the table)"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="Faina-format corpus folder")
    parser.add_argument("--task", default="post-f", choices=sorted(TASKS))
    parser.add_argument(
        "--recipe",
        default="views",
        choices=["views", "soft", "majority", "joint"],
        help="joint: task=multi, span and post entries in one run; the task's entry is scored",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=None, help="trainer.max_epochs (default: the task's own)")
    parser.add_argument("--override", action="append", default=[], help="extra train.py override (repeatable)")
    parser.add_argument("--permutation-seed", type=int, default=0)
    return parser


def control_table(scores: dict, label: str, reference: str) -> dict:
    """Per label and calibration the test cross-entropy, the prior's, and the permuted label's distance to it; every
    real label a calibration makes worse than ``reference`` (today's default); per calibration the seconds its fit took
    and, with the fallback, what it found on dev."""
    table: dict = {}
    for name, entry in scores.items():
        for each, row in entry["per_label"].items():
            table.setdefault(each, {"prior": row["prior"]["cross_entropy"]})[name] = row["model"]["cross_entropy"]
    prior = table[label]["prior"]
    gaps = {name: value - prior for name, value in table[label].items() if name != "prior"}
    fits = {
        name: {
            key: entry["fit"][key]
            for key in ("fit_seconds", "towards_prior", "cross_fitted_log_loss")
            if key in entry["fit"]
        }
        for name, entry in scores.items()
    }
    paired = {name: entry["paired"] for name, entry in scores.items()}
    real, today = [each for each in table if each != label], f"vs_{reference}"
    return {
        "per_label": table,
        "permuted": label,
        "reference": reference,
        "gap_to_prior": gaps,
        "within": {name: abs(gap) <= TOLERANCE for name, gap in gaps.items()},
        "gap_to_prior_se": {name: paired[name]["vs_prior"][label]["se"] for name in gaps},
        "real_labels_worse_than_temperature": {
            name: {each: pairs[today][each] for each in real if pairs[today][each]["difference"] > 0}
            for name, pairs in paired.items()
        },
        "paired": paired,
        "fits": fits,
    }


def markdown(table: dict) -> str:
    """The test cross-entropy per label and calibration, then each one's difference to the table's reference
    calibration (the permuted label: to the prior) with its paired standard error."""
    reference = table["reference"]
    names = [name for name in next(iter(table["per_label"].values())) if name != "prior"]
    lines = ["| label | prior | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for label, row in table["per_label"].items():
        mark = " (permuted)" if label == table["permuted"] else ""
        lines.append(f"| {label}{mark} | {row['prior']:.4f} | " + " | ".join(f"{row[n]:.4f}" for n in names) + " |")
    lines += ["", "| difference ± paired SE | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label in table["per_label"]:
        against = "vs_prior" if label == table["permuted"] else f"vs_{reference}"
        cells = [table["paired"][name][against][label] for name in names]
        title = f"{label} (permuted) − prior" if against == "vs_prior" else f"{label} − {reference}"
        lines.append(f"| {title} | " + " | ".join(_difference(cell) for cell in cells) + " |")
    return "\n".join(lines)


def _difference(cell: dict) -> str:
    error = "" if cell["se"] is None else f" ± {cell['se']:.4f}"
    return f"{cell['difference']:+.4f}{error}"


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    from faina.benchmarks.calibration_scores import REFERENCE, evaluate_calibration
    from faina.benchmarks.permuted_label import write_permuted_corpus
    from faina.benchmarks.quality_runs import prepare_corpus, train

    args = build_parser().parse_args(argv)
    out = args.out.resolve()
    permuted = write_permuted_corpus(args.corpus, out / "permuted", args.label, args.permutation_seed)
    files = prepare_corpus(permuted, out, quick=False)
    length = Length(args.epochs or default_epochs(args.task))
    folder = train(args.task, args.recipe, length, args.seed, files, out / "runs", args.override, print)
    scores = evaluate_calibration(args.task, args.recipe, args.seed, folder, files, print)["scores"]
    table = control_table(scores, args.label, REFERENCE)
    table.update(task=args.task, recipe=args.recipe, seed=args.seed, length=length.label, overrides=args.override)
    (out / "control.json").write_text(json.dumps(table, indent=2))
    print(markdown(table))
    print(f"permuted {args.label}: gap to the prior per calibration {table['gap_to_prior']}")
    return table


if __name__ == "__main__":
    main()

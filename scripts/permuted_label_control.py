"""The permuted-label control of the calibration's prior fallback: models on a corpus with one label unlearnable.

    python scripts/permuted_label_control.py --label Insult --out /tmp/permuted [--corpus DIR] [--task post-f]
        [--recipe views|soft|majority|joint] [--seeds 1 [2 ...]] [--epochs N] [--override KEY=VALUE ...]
        [--permutation-seed 0]

Writes a copy of the corpus (``train-dev.conll``, ``test.conll``, ``labels.yaml``) with ``--label``'s annotations
moved to other posts (``faina.benchmarks.permuted_label``) under ``--out/permuted``, trains one run per seed on it
exactly as the quality benchmark does (``train.py ... data=custom cv=official``, ``--out/runs``; a finished run is
reused, so seeds trained by earlier calls are summarised with the new ones), and scores each run's test
probabilities under every calibration fitted on its own dev split, with and without the prior fallback
(``faina.benchmarks.calibration_scores``). Prints per seed the test cross-entropy of each calibration and of the
prior per label, then each calibration's difference, item by item, to the prior (the permuted label) or to today's
``temperature`` (the real labels) with its paired standard error: how much of a gap one test set can resolve. Then
one table over the seeds (``faina.benchmarks.permuted_label_report``): per calibration the permuted label's gap to
its prior (how many seeds within the tolerance) and each real label's change against ``temperature`` (how many
seeds worse, and the benchmarks' verdict). The same as JSON in ``--out/control.json``: ``runs`` (one table per seed:
``gap_to_prior``, ``gap_to_prior_se``, ``real_labels_worse_than_temperature``, ``paired``, ``fits``) and
``across_seeds``. ``--recipe joint`` trains ``task=multi`` (the corpus's span and post entries in one run) and
scores the task's entry, the multi-task model's own calibration; its entries read their own model blocks, so the
fallback is ``--override task.entries.span_f.model.module.calibration.fallback=prior`` (and ``post_f``). One call
per ``--out`` at a time: calls that share it write the same corpus copy. What was measured:
docs/soft-labels.md#the-prior-fallback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.benchmarks.quality_runs import DEFAULT_CORPUS, TASKS, Length, default_epochs


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
    parser.add_argument(
        "--seeds",
        "--seed",
        type=int,
        nargs="+",
        default=[1],
        help="one model per seed, trained one after the other, then a table over the seeds (one seed: no verdict)",
    )
    parser.add_argument("--epochs", type=int, default=None, help="trainer.max_epochs (default: the task's own)")
    parser.add_argument("--override", action="append", default=[], help="extra train.py override (repeatable)")
    parser.add_argument("--permutation-seed", type=int, default=0)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    from faina.benchmarks.calibration_scores import REFERENCE, evaluate_calibration
    from faina.benchmarks.permuted_label import write_permuted_corpus
    from faina.benchmarks.permuted_label_report import across_seeds, control_table, run_markdown, seeds_markdown
    from faina.benchmarks.quality_runs import prepare_corpus, train

    args = build_parser().parse_args(argv)
    out = args.out.resolve()
    permuted = write_permuted_corpus(args.corpus, out / "permuted", args.label, args.permutation_seed)
    files = prepare_corpus(permuted, out, quick=False)
    length = Length(args.epochs or default_epochs(args.task))
    runs = {}
    for seed in dict.fromkeys(args.seeds):
        folder = train(args.task, args.recipe, length, seed, files, out / "runs", args.override, print)
        scores = evaluate_calibration(args.task, args.recipe, seed, folder, files, print)["scores"]
        runs[seed] = control_table(scores, args.label, REFERENCE)
    summary = across_seeds(runs, args.label, REFERENCE)
    control = {
        "permuted": args.label,
        "reference": REFERENCE,
        "task": args.task,
        "recipe": args.recipe,
        "length": length.label,
        "overrides": args.override,
        "seeds": summary["seeds"],
        "runs": {str(seed): table for seed, table in runs.items()},
        "across_seeds": summary["calibrations"],
    }
    (out / "control.json").write_text(json.dumps(control, indent=2))
    for seed, table in runs.items():
        print(f"\nseed {seed}\n" + run_markdown(table, args.label, REFERENCE))
        print(f"permuted {args.label}: gap to the prior per calibration {table['gap_to_prior']}")
    print("\n" + seeds_markdown(summary, args.label, REFERENCE))
    return control


if __name__ == "__main__":
    main()

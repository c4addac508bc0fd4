"""Recipes, decision rules and ensembles side by side on a real corpus, over several seeds.

    python scripts/benchmark_quality.py [--corpus DIR] [--out DIR] [--tasks span-f post-f]
        [--recipes views majority ...] [--seeds 1 2 3] [--epochs 20 6] [--patience 0 5] [--ensembles 3 5]
        [--report-only] [--override KEY=VALUE ...] [--quick]

Trains one ``train.py`` run per task, recipe, training length and seed on the corpus's ``train-dev.conll`` (``cv=official``, the dev
split drawn from the seed), scores each on ``test.conll`` under every decision rule fitted on its own dev split and
each ensemble of the first K seed models, and writes ``runs/``, ``report.json``, ``report.md`` and ``report.png``
under ``--out``; finished runs and scores are reused. The work is ``faina.benchmarks.quality``; what is measured
and the results: docs/benchmark-quality.md. ``--quick`` (tests only, never for a table): 48 training and 24 test
posts, one epoch, seeds 1 2. The training length is an option measured like any other: by default each task's own
``trainer.max_epochs`` (what ``train.py task=...`` trains), ``--epochs`` other counts, ``--patience`` early stopping
(0: none); every row says its length and is judged against the default recipe at its own length and at the task's
default. One seed is allowed (one model a session, the others added later into the same ``--out``: finished runs
are reused), and its report gives no verdict until a row has two seeds. This is a measurement, not a test: the
default grid trains tasks × recipes × seeds models (what one costs: docs/benchmark-quality.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.benchmarks.quality import run_benchmark
from faina.benchmarks.quality_runs import DEFAULT_CORPUS, DEFAULT_OUT, QUICK_EPOCHS, RECIPES, TASKS


def build_parser():
    parser = command_parser("scripts.benchmark_quality", __doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="Faina-format corpus folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--tasks", nargs="+", default=["span-f", "post-f"], choices=sorted(TASKS))
    parser.add_argument("--recipes", nargs="+", default=["views", "majority", "soft"], choices=sorted(RECIPES))
    parser.add_argument("--seeds", nargs="+", type=int, default=None, help="default: 1 2 3 (--quick: 1 2)")
    parser.add_argument(
        "--epochs", nargs="+", type=int, default=None, help="trainer.max_epochs of the runs (default: each task's own)"
    )
    parser.add_argument(
        "--patience",
        nargs="+",
        type=int,
        default=[0],
        help="early_stopping.patience of the runs, each with every --epochs (0: none, the default)",
    )
    parser.add_argument("--ensembles", nargs="*", type=int, default=[3], help="ensemble sizes K (first K seeds)")
    parser.add_argument("--override", action="append", default=[], help="extra train.py override (repeatable)")
    parser.add_argument("--report-only", action="store_true", help="train nothing: report the finished runs")
    parser.add_argument("--quick", action="store_true", help="tiny grid for the tests (never for a table)")
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    if args.quick:  # the tiny grid's own defaults, unless asked for others
        args.epochs = args.epochs or [QUICK_EPOCHS]
    args.seeds = args.seeds or ([1, 2] if args.quick else [1, 2, 3])
    report = run_benchmark(
        args.corpus,
        args.out,
        args.tasks,
        args.recipes,
        args.seeds,
        args.epochs,
        args.ensembles,
        args.override,
        args.report_only,
        args.quick,
        patiences=args.patience,
    )
    print((args.out.resolve() / "report.md").read_text())
    return report


if __name__ == "__main__":
    main()

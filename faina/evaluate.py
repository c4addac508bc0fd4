"""Score Faina predictions exactly as the official scorers do: ``python -m faina.evaluate``.

    python -m faina.evaluate -T {span-fine,span-coarse,post-fine,post-coarse} -G GOLD -P PRED
                             [-O] [--json] [--per-label] [--labels INVENTORY] [--soft PROBS [--prior-from TRAIN]]

Span tasks read CoNLL files, post tasks read TSV files; both are validated (malformed tags, unknown
labels, misaligned posts end in one ``error:`` line naming file and line, exit status 2). A coarse task
accepts fine-labelled files too: their coarse spans/labels are derived through the taxonomy
(``faina.data.coarse``: each fine span relabelled with its macro-categories, overlapping same-category spans
of a view merged), which is how the coarse gold of the paper was built. ``-O`` scores the first label
column of the prediction file against every gold view (the official ``--one_pred``); extra prediction
columns are ignored. The figures are those of ``metrics.faina_span_sums`` / ``metrics.faina_post_counts``,
the one implementation training's Metrics use too; the table shows percentages with two decimals,
``--json`` prints fractions only.
``--exact`` (span tasks) adds seqeval's exact-match P/R/F1 (``metrics.faina_exact``) under the key ``exact``.
``--soft PROBS`` (the ``probabilities.jsonl`` of the predictions) adds the soft-label scores of the Learning With
Disagreements tasks under ``soft_labels`` (``faina.scoring.soft_scores``; docs/soft-labels.md), with the prior taken
from ``--prior-from TRAIN`` (the training file) or else from the gold file itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from faina.formats.labels import LabelInventory
from faina.scoring.official import (  # noqa: F401  (re-exported: the library API of this command)
    TASK_ALIASES,
    TASKS,
    _evaluate,
    evaluate_files,
    format_table,
    parse_task,
    prepare_corpora,
    score_posts,
    score_spans,
)


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("faina.evaluate", "Score Faina predictions like the official scorer.")
    parser.add_argument("-T", "--task", required=True, choices=TASKS, help="task as LEVEL-GRAIN")
    parser.add_argument("-G", "--gold", required=True, help="gold file (CoNLL for span tasks, TSV for post tasks)")
    parser.add_argument("-P", "--pred", required=True, help="prediction file, same format and posts as the gold")
    parser.add_argument(
        "-O", "--one-pred", action="store_true", help="score the first prediction column against every gold view"
    )
    parser.add_argument("--json", action="store_true", help="print only the scores as JSON (fractions)")
    parser.add_argument("--per-label", action="store_true", help="add a per-label breakdown")
    parser.add_argument(
        "--exact",
        action="store_true",
        help="span tasks: add seqeval exact-match P/R/F1 (key `exact`, same layout as `strict`)",
    )
    parser.add_argument("--labels", default="faina", help="label inventory YAML (default: faina)")
    parser.add_argument(
        "--soft",
        metavar="PROBS",
        default=None,
        help="probabilities.jsonl of the predictions: add soft-label scores (key `soft_labels`)",
    )
    parser.add_argument(
        "--prior-from",
        metavar="TRAIN",
        default=None,
        help="with --soft: training file whose mean soft label is the prior (default: the gold file)",
    )
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr)


@exit_on_user_error(show_logs=False)  # nothing on the scoring path logs: start without `logging`
def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    if args.prior_from is not None and args.soft is None:
        raise UserError(
            "--prior-from sets the prior of the soft-label scores, which need --soft",
            fix="add --soft PROBS (the probabilities.jsonl of the predictions), or drop --prior-from",
        )
    inventory = LabelInventory.load(args.labels)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _show_warning
        outcome = _evaluate(
            args.task,
            args.gold,
            args.pred,
            args.one_pred,
            args.per_label,
            inventory,
            args.exact,
            args.soft,
            args.prior_from,
        )
    scores = (
        outcome["scores"]
        if "soft_labels" not in outcome
        else {**outcome["scores"], "soft_labels": outcome["soft_labels"]}
    )
    if args.json:
        print(json.dumps(scores, indent=2, ensure_ascii=False))
    else:
        print(format_table(args.task, args.gold, args.pred, outcome, args.one_pred))
        if "soft_labels" in outcome:
            from faina.scoring.soft_scores import format_soft_table

            print(format_soft_table(outcome["soft_labels"]))
    return scores


if __name__ == "__main__":
    main()

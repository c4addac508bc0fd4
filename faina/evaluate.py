"""Score Faina predictions exactly as the official scorers do: ``python -m faina.evaluate``.

    python -m faina.evaluate -T {span-fine,span-coarse,post-fine,post-coarse} -G GOLD -P PRED
                             [-O] [--json] [--per-label] [--exact] [--labels INVENTORY]
                             [--probabilities PROBS [--prior-from TRAIN]]

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
``--probabilities PROBS`` (the ``probabilities.jsonl.gz`` of the predictions, or a plain ``.jsonl``) adds the scores
of those probabilities against the annotators' shares, the soft-label measures of the Learning With Disagreements
tasks, under ``probability_scores`` (``faina.scoring.soft_scores``; docs/soft-labels.md), with the prior taken from
``--prior-from TRAIN`` (the training file) or else from the gold file itself. Its former names, ``--soft`` and the
key ``soft_labels``, still work for one release: they were easy to mistake for the official ``soft`` F1.
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
        "--probabilities",
        metavar="PROBS",
        default=None,
        help="probabilities.jsonl.gz (or a plain .jsonl) of the predictions: add the scores of the probabilities "
        "against the annotators' shares (key `probability_scores`)",
    )
    parser.add_argument(
        "--soft",
        metavar="PROBS",
        default=None,
        help="the former name of --probabilities, kept for one release (not the official `soft` F1)",
    )
    parser.add_argument(
        "--prior-from",
        metavar="TRAIN",
        default=None,
        help="with --probabilities: training file whose mean soft label is the prior (default: the gold file)",
    )
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"warning: {message}", file=sys.stderr)


@exit_on_user_error(show_logs=False)  # nothing on the scoring path logs: start without `logging`
def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    probabilities = probabilities_option(args)
    if args.prior_from is not None and probabilities is None:
        raise UserError(
            "--prior-from sets the prior of the probability scores, which need --probabilities",
            fix="add --probabilities PROBS (the probabilities.jsonl.gz of the predictions), or drop --prior-from",
        )
    inventory = LabelInventory.load(args.labels).chosen_with("--labels")
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
            probabilities,
            args.prior_from,
        )
    scores = outcome["scores"]
    block = None
    if probabilities is not None:  # numpy only when the probabilities are scored
        from faina.scoring.soft_scores import BLOCK_KEY, format_soft_table, keyed_blocks

        block = outcome[BLOCK_KEY]
        scores = {**scores, **keyed_blocks(block)}  # with its former name too, for one release
    if args.json:
        print(json.dumps(scores, indent=2, ensure_ascii=False))
    else:
        print(format_table(args.task, args.gold, args.pred, outcome, args.one_pred))
        if block is not None:
            print(format_soft_table(block))
    return scores


def probabilities_option(args: argparse.Namespace) -> str | None:
    """``--probabilities``, or its former name ``--soft`` (with a note on stderr: it goes after one release)."""
    if args.soft is None:
        return args.probabilities
    if args.probabilities is not None and args.probabilities != args.soft:
        raise UserError(
            "--soft is the former name of --probabilities, and the two name different files",
            fix="give the probabilities once, with --probabilities PROBS",
        )
    print("note: --soft is now --probabilities (the old name works for one more release)", file=sys.stderr)
    return args.soft


if __name__ == "__main__":
    main()

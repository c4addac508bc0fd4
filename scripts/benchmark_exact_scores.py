"""Benchmark: seconds for seqeval's exact-match span scores (``metrics.faina_exact``) of one span file.

Every span fold scores its test predictions with exact match beside the official scores, and the quality benchmark
once per decision rule, so its cost is measured here apart from training. The prediction is made from the gold
file itself: each view is scored against the next view's spans (an annotator as the system), so the figures have
realistic matches and misses without a model; the labels are the fine ones (span-f's). Each time is the median of
``--rounds`` calls after one warm-up call (the first imports seqeval and scikit-learn); ``tags read`` counts the tags
seqeval reads, which is what its time grows with.

    python scripts/benchmark_exact_scores.py [--corpus FILE.conll --labels labels.yaml] [--rounds 5]

Without ``--corpus`` it scores the synthetic sample. This is a benchmark, not a test: times depend on the machine
and its load.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.formats.conll import read_conll
from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
from faina.sample import default_sample_dir
from metrics import faina_exact


def views_against_the_next(corpus) -> tuple[list, list]:
    """(predictions, golds): each post's view v predicted by its view v + 1 (the last by the first)."""
    golds = [post.spans for post in corpus.posts]
    preds = [[views[(v + 1) % len(views)] or () for v in range(len(views))] for views in golds]
    return preds, golds


def tags_read(preds, golds, labels, num_views: int) -> int:
    """How many tags seqeval reads: both sequences of every (post, view, label) pair scored."""
    total = 0
    for view in range(num_views):
        y_true, y_pred = faina_exact.view_sequences(preds, golds, view, labels)
        total += sum(map(len, y_true)) + sum(map(len, y_pred))
    return total


@exit_on_user_error(show_logs=False)
def main(argv: list[str] | None = None) -> None:
    parser = command_parser("scripts.benchmark_exact_scores", __doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=default_sample_dir() / "sample.conll")
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS_FILE)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be 1 or more (got {args.rounds}): each time is a median over the rounds")
    inventory = LabelInventory.load(args.labels)
    corpus = read_conll(args.corpus, inventory)
    labels = inventory.labels_of("fine")  # the span-f task's labels, as its folds score them
    preds, golds = views_against_the_next(corpus)
    faina_exact.exact_span_scores(preds, golds, labels, corpus.num_views)  # warm-up: imports
    seconds = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        scores = faina_exact.exact_span_scores(preds, golds, labels, corpus.num_views, per_label=True)
        seconds.append(time.perf_counter() - start)
    print("| file | posts | views | tags read | seconds (median) | exact F1 (avg) |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.corpus.name} | {len(golds)} | {corpus.num_views} | {tags_read(preds, golds, labels, corpus.num_views):,}"
        f" | {statistics.median(seconds):.3f} | {scores['scores']['avg']['f1']:.4f} |"
    )


if __name__ == "__main__":
    main()

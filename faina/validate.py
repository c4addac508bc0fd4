"""``python -m faina.validate FILE [--json]``: check a Faina-format file and print its statistics.

Statistics: posts, tokens (span files), views, and span counts per view and label (post files count
posts per view and label instead: the post-level analogue of a span). Any problem ends in one message
naming the file, line and fix (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.records import PostCorpus, SpanCorpus


def corpus_statistics(corpus: SpanCorpus | PostCorpus) -> dict:
    """The statistics reported by the CLI (JSON keys ``posts``, ``tokens``, ``views``, ``spans``)."""
    views = [f"a{v + 1}" for v in range(corpus.num_views)]
    counts: dict[str, Counter] = {view: Counter() for view in views}
    missing = {view: 0 for view in views}
    if isinstance(corpus, SpanCorpus):
        tokens = sum(len(post.tokens) for post in corpus.posts)
        for post in corpus.posts:
            for v, spans in enumerate(post.spans or ()):
                if spans is None:
                    missing[views[v]] += 1
                    continue
                counts[views[v]].update(span.label for span in spans)
        stats = {
            "kind": "span",
            "posts": len(corpus.posts),
            "tokens": tokens,
            "labelled": corpus.labelled,
            "repairs": len(corpus.repairs),
            "unsorted_cells": len(corpus.warnings),
        }
    else:
        tokens = None
        for row in corpus.rows:
            for v, labels in enumerate(row.labels):
                if labels is None:
                    missing[views[v]] += 1
                    continue
                counts[views[v]].update(labels)
        stats = {"kind": "post", "posts": len(corpus.rows), "tokens": None}
    stats["views"] = corpus.num_views
    stats["spans"] = {view: dict(sorted(counts[view].items())) for view in views}
    stats["not_annotated"] = missing  # posts per view with the not-annotated marker (docs/faina-format.md)
    return stats


def format_statistics(path: str, stats: dict) -> str:
    unit = "spans" if stats["kind"] == "span" else "posts"
    lines = [f"{path}: OK", f"  posts  {stats['posts']}"]
    if stats["tokens"] is not None:
        lines.append(f"  tokens {stats['tokens']}")
    lines.append(f"  views  {stats['views']}")
    labels = sorted({label for per_view in stats["spans"].values() for label in per_view})
    views = list(stats["spans"])
    width = max([len(label) for label in labels] + [5])
    lines.append(f"  {unit} per label:")
    lines.append("    " + "label".ljust(width) + "".join(f"{v:>8}" for v in views))
    for label in labels:
        lines.append("    " + label.ljust(width) + "".join(f"{stats['spans'][v].get(label, 0):>8}" for v in views))
    lines.append("    " + "total".ljust(width) + "".join(f"{sum(stats['spans'][v].values()):>8}" for v in views))
    if any(stats.get("not_annotated", {}).values()):
        lines.append(
            "  posts not annotated (marker ?): "
            + "; ".join(f"{view}: {n}" for view, n in stats["not_annotated"].items())
        )
    if stats.get("repairs"):
        lines.append(f"  repairs: {stats['repairs']} (I-X without B-X turned into B-X)")
    if stats.get("unsorted_cells"):
        lines.append(f"  note: {stats['unsorted_cells']} cells list their tags out of label-name order")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("faina.validate", __doc__.splitlines()[0])
    parser.add_argument("file", help="a span-level .conll or post-level .tsv file")
    parser.add_argument("--json", action="store_true", help="print only the statistics as JSON")
    parser.add_argument("--labels", default="faina", help="label inventory YAML (default: Faina's 20 labels)")
    parser.add_argument(
        "--repair", action="store_true", help="turn I-X without an open X span into B-X and report each repair"
    )
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    corpus = read_any(args.file, LabelInventory.load(args.labels).chosen_with("--labels"), repair=args.repair)
    stats = corpus_statistics(corpus)
    for repair in corpus.repairs:  # notices about the input: stderr, so stdout stays the report
        print(f"repaired: {repair}", file=sys.stderr)
    if args.json:
        print(json.dumps(stats, indent=2, sort_keys=False))
    else:
        print(format_statistics(args.file, stats))
    return stats


if __name__ == "__main__":
    main()

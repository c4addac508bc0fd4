"""``python -m faina.stats FILE [--json] [--plots DIR]``: the Faina paper's data analysis for any file.

Per view and over all views (``"all"``: every annotation of every view pooled): posts, tokens, spans, per
label the spans, their length in tokens (mean ± std) and the share of posts that carry it, spans per post
(mean ± std) and posts without any label; the overlap matrix (for each label, the percentage of its tokens
that also carry each other label, and on the diagonal the percentage that carry no other one; tokens are
counted within one view, "all" pools the views); and, with two or more views, the agreement
(``faina.analysis.agreement``: γ, γ_cat, κ per label, the human ceiling). A post-level ``.tsv`` file has no tokens:
a "span" there is a post label (length ``null``) and overlaps are counted on posts. Standard deviations are
population ones (ddof = 0), as in the fold tables.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.analysis.corpus_stats import (  # noqa: F401  (re-exported: the library API of this command)
    ALL,
    corpus_stats,
    file_stats,
    format_report,
)
from faina.formats.labels import LabelInventory


def build_parser():
    parser = command_parser("faina.stats", __doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("file", help="a span-level .conll or post-level .tsv file")
    parser.add_argument(
        "--json", action="store_true", help="print the statistics as JSON (fractions, percentages in `overlap`)"
    )
    parser.add_argument(
        "--plots",
        metavar="DIR",
        help="write PNG figures (overlap heatmaps, spans and lengths per label and view) to DIR",
    )
    parser.add_argument(
        "--agreement",
        choices=("auto", "yes", "no"),
        default="auto",
        help="agreement section: auto = when the file has two or more views; yes = required "
        "(an error on a one-view file)",
    )
    parser.add_argument("--no-gamma", action="store_true", help="skip γ (the slowest part: an alignment per sample)")
    parser.add_argument("--seed", type=int, default=0, help="seed of γ's random continua")
    parser.add_argument("--labels", default="faina", help="label inventory YAML")
    parser.add_argument("--repair", action="store_true", help="read I-X without an open X span as B-X")
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    inventory = LabelInventory.load(args.labels).chosen_with("--labels")
    stats, corpus = file_stats(
        args.file, inventory, agreement=args.agreement, with_gamma=not args.no_gamma, seed=args.seed, repair=args.repair
    )
    if args.plots:
        from faina.analysis.stats_plots import write_plots

        written = write_plots(stats, args.plots, inventory)
        print("\n".join(f"wrote {path}" for path in written), file=sys.stderr)
    if args.json:
        print(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        print(format_report(args.file, stats, inventory))
    return stats


if __name__ == "__main__":
    main()

"""``python -m faina.show FILE [--pred PRED] [--posts ID ...] [--limit N] --html OUT``: look at the disagreement.

One self-contained HTML page (no script, no font or stylesheet from the web: it works offline) with every
chosen post and, under it, one line per annotator view and per prediction column, drawn by the span renderer
that ``faina.tag --html`` uses too (``faina/analysis/span_html.py``): overlapping spans are stacked in lanes, each
label box in its span's lane, never over another box. Each label has its own colour, keyed by its position in
the inventory; a legend lists the page's labels. A span that not every view has (same tokens, same label) is
marked as disagreement: its label reads ``Label ≠`` and the line says how many such spans it has.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from faina.analysis.disagreement_page import (  # noqa: F401  (re-exported: the library API of this command)
    DISAGREEMENT,
    choose_posts,
    render_page,
    show,
)


def build_parser():
    parser = command_parser("faina.show", __doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("file", help="a labelled span-level .conll file")
    parser.add_argument("--pred", help="a prediction .conll file of the same posts (one or more columns)")
    parser.add_argument("--posts", nargs="+", metavar="ID", help="only these post ids, in this order")
    parser.add_argument("--limit", type=int, help="at most N posts")
    parser.add_argument("--html", required=True, metavar="OUT", help="the HTML page to write")
    parser.add_argument("--labels", default="faina", help="label inventory YAML")
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> Path:
    args = build_parser().parse_args(argv)
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit {args.limit}", fix="give a positive number of posts")
    out = show(args.file, args.html, args.pred, args.posts, args.limit, args.labels)
    print(f"wrote {out}", file=sys.stderr)
    return out


if __name__ == "__main__":
    main()

"""One citable table of Missci runs: every results folder a row, the paper's published rows as reference lines.

    python -m missci.report RESULTS_DIR... [--json] [--markdown OUT] [--no-paper]

A results folder is what a run wrote under ``results/<name>/``; the report recognises
- ``results.json`` of a LoRA run (``mode=finetune``): one row per pooled view (``test``: the official test
  split's arguments, ``all``: every predicted argument);
- ``metrics-<split>.json`` of a zero-shot run (``mode=zero-shot``);
- ``baseline-<split>.json``: ``python -m missci.baseline random --json`` saved there (the mean over seeds);
- ``row.json`` (optional, written by ``scripts/timed_row.sh``): the command that made the folder and its
  wall-clock time, shown beside the row; a folder whose command failed (non-zero exit status) and left no
  results is a row of "unavailable: the run did not finish".
A metric a run could not compute is shown as "unavailable" with the run's reason (a missing model, a random
baseline that ranks one class only, ...), never as a number. The paper's rows are copied from Glockner et al.
(2024), not re-run; a figure the paper does not publish stays empty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from missci.analysis.report_table import (  # noqa: F401  (re-exported: the library API of this command)
    COLUMNS,
    MAX_K,
    PAPER,
    PAPER_NOTES,
    PAPER_ROWS,
    PAPER_SCOPE,
    Row,
    load_rows,
    markdown_table,
    paper_rows,
    report,
)


def build_parser():
    parser = command_parser("missci.report", __doc__.splitlines()[0])
    parser.add_argument("results", metavar="RESULTS_DIR", nargs="+", help="results/<name> folders of Missci runs")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a markdown table")
    parser.add_argument("--markdown", metavar="OUT", default=None, help="also write the markdown table to OUT")
    parser.add_argument("--no-paper", action="store_true", help="leave out the paper's published rows")
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> list[Row]:
    args = build_parser().parse_args(argv)
    rows = report(args.results, not args.no_paper)
    table = markdown_table(rows)
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table, encoding="utf-8")
    if args.json:
        print(json.dumps({"rows": [asdict(row) for row in rows], "paper": PAPER}, indent=2))
    else:
        print(table)
    return rows


if __name__ == "__main__":
    main()

"""Counts of the Missci data: arguments, fallacies R_i, interchangeable fallacies, class distribution.

Usage: ``python -m missci.stats [--data DIR] [--json]``; JSON keys ``arguments``, ``fallacies``,
``interchangeable``, ``classes`` for the total and the same under ``splits.dev`` / ``splits.test``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from missci.dataset.classes import CLASS_NAMES
from missci.dataset.reader import SPLITS, Argument, load_split


def split_stats(arguments: list[Argument]) -> dict:
    classes = Counter(alt.fallacy_class for a in arguments for f in a.fallacies for alt in f.interchangeable)
    return {
        "arguments": len(arguments),
        "fallacies": sum(len(a.fallacies) for a in arguments),
        "interchangeable": sum(classes.values()),
        "classes": {name: classes.get(name, 0) for name in CLASS_NAMES},
    }


def dataset_stats(data: str | None = None) -> dict:
    splits = {split: split_stats(load_split(split, data)) for split in SPLITS}
    total = {key: sum(s[key] for s in splits.values()) for key in ("arguments", "fallacies", "interchangeable")}
    total["classes"] = {name: sum(s["classes"][name] for s in splits.values()) for name in CLASS_NAMES}
    return {**total, "splits": splits}


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    parser = command_parser("missci.stats", __doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        default=None,
        help="folder with {dev,test}.missci.jsonl, or `sample` for the "
        "synthetic sample (default: $MISSCI_DATA, else data/missci)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    stats = dataset_stats(args.data)
    if args.json:
        print(json.dumps(stats, indent=2))
        return stats
    columns = list(SPLITS) + ["total"]
    rows = {"total": stats, **stats["splits"]}
    print(f"{'':<40}" + "".join(f"{c:>8}" for c in columns))
    for key in ("arguments", "fallacies", "interchangeable"):
        print(f"{key:<40}" + "".join(f"{rows[c][key]:>8}" for c in columns))
    for name in sorted(CLASS_NAMES, key=lambda n: -stats["classes"][n]):
        print(f"  {name:<38}" + "".join(f"{rows[c]['classes'][name]:>8}" for c in columns))
    return stats


if __name__ == "__main__":
    main()

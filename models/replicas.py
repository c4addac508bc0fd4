"""``fallacy models replicas OUT_DIR``: tiny, random, offline replicas of the hub models the framework is for.

    fallacy models replicas OUT_DIR [--only alberto umberto llama2-chat llama3-instruct mixtral-instruct]
    python -m models.replicas OUT_DIR ...        (the same, without installing)

writes ``OUT_DIR/<name>/`` for each model, in its Hugging Face repository's file layout (file names, formats,
tokenizer kind, config fields), so a set-up can be tried offline on the models' own layouts: point
``encoder.name_or_path=`` / ``llm.name_or_path=`` at a folder as at a download (docs/models.md). Prints one line per
replica: its name, the hub repository it copies and its folder. The layouts, and where each was checked:
``models.hub_replicas.layouts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error


def build_parser():
    from models.hub_replicas.layouts import REPLICAS  # light: transformers is imported only to build a replica

    parser = command_parser(
        "models.replicas",
        __doc__.splitlines()[0].split(": ", 1)[1],
        epilog="Each replica's folder is what encoder.name_or_path= / llm.name_or_path= takes in place of the hub "
        "id. What each hub ships, and where that was checked: models/hub_replicas/layouts.py.",
    )
    parser.add_argument("out_dir", type=Path, help="folder to write the replicas into (one sub-folder per model)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(REPLICAS),
        metavar="NAME",
        help=f"only these replicas (of: {', '.join(REPLICAS)})",
    )
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict[str, Path]:
    """Write the replicas; returns name -> folder."""
    args = build_parser().parse_args(argv)
    if args.out_dir.exists() and not args.out_dir.is_dir():
        raise UserError("not a folder", path=args.out_dir, fix="give a folder to write the replicas into")
    from models.hub_replicas.layouts import REPLICAS, write_replicas

    written = write_replicas(args.out_dir, args.only)
    for name, folder in written.items():
        print(f"{name}\t{REPLICAS[name].hub_id}\t{folder}")
    return written


if __name__ == "__main__":
    main()

"""``python -m faina.export RESULTS_DIR/foldK OUT_DIR [--push-to-hub REPO]``: a fold's model as a folder others load.

OUT_DIR becomes self-contained (``faina.serving.model_folder``): ``config.json``, ``model.safetensors``, ``labels.yaml``,
the encoder's config and tokenizer files, and a model card ``README.md`` written from the run. It loads with
``FallacyTagger.load(OUT_DIR)`` or ``python -m faina.tag OUT_DIR`` in any process, without the results folder.
A fold folder of a multi-task run exports the head ``--head NAME`` chooses, or every head into ``OUT_DIR/<head>``
(docs/multitask.md). ``--push-to-hub`` uploads the folder with the ``huggingface_hub`` client (needs network and a token from
``huggingface-cli login`` or ``HF_TOKEN``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error


def build_parser():
    parser = command_parser(
        "faina.export",
        "Write a trained fold as a self-contained model folder (config.json, "
        "model.safetensors, encoder config and tokenizer, labels, model card).",
    )
    parser.add_argument("fold_dir", help="fold folder of a finished run (model.json + model.safetensors)")
    parser.add_argument("out_dir", help="folder to write (created; an earlier export there is overwritten)")
    parser.add_argument(
        "--push-to-hub",
        metavar="REPO",
        default=None,
        help="also upload the folder to this Hugging Face model repo (user/name)",
    )
    parser.add_argument("--private", action="store_true", help="create the hub repo as private")
    parser.add_argument(
        "--head",
        metavar="NAME",
        default=None,
        help="a multi-task model's head to use (default: every head, each into OUT_DIR/<head>; docs/multitask.md)",
    )
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> Path | list[Path]:
    args = build_parser().parse_args(argv)
    if args.push_to_hub and args.head is None and (Path(args.fold_dir) / "heads.json").is_file():
        from common.errors import UserError

        raise UserError(
            "--push-to-hub uploads one model and this fold holds several heads",
            path=args.fold_dir,
            fix="choose the head to upload with --head NAME",
        )
    from faina.serving.export import export_fold, push_to_hub  # torch and Lightning: only once the arguments are read
    from faina.serving.heads import head_folders

    heads = head_folders(args.fold_dir, args.head)
    written = []
    for head, folder in heads:
        out_dir = Path(args.out_dir) / head if len(heads) > 1 else Path(args.out_dir)
        repo = args.push_to_hub if len(heads) == 1 else None
        out = export_fold(str(folder), str(out_dir), repo)
        files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
        print(f"model folder written: {out} ({len(files)} files: {', '.join(files)})", file=sys.stderr)
        if repo:
            print(f"uploaded: {push_to_hub(out, repo, args.private)}", file=sys.stderr)
        written.append(out)
    return written[0] if len(written) == 1 else written


if __name__ == "__main__":
    main()

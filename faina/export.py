"""``python -m faina.export RESULTS_DIR/foldK OUT_DIR [--push-to-hub REPO]``: a fold's model as a folder others load.

OUT_DIR becomes self-contained (``faina.model_folder``): ``config.json``, ``model.safetensors``, ``labels.yaml``,
the encoder's config and tokenizer files, and a model card ``README.md`` written from the run. It loads with
``FallacyTagger.load(OUT_DIR)`` or ``python -m faina.tag OUT_DIR`` in any process, without the results folder.
``--push-to-hub`` uploads the folder with the ``huggingface_hub`` client (needs network and a token from
``huggingface-cli login`` or ``HF_TOKEN``).
"""
from __future__ import annotations

import sys
from pathlib import Path

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from faina.labels import LabelInventory
from faina.model_card import model_card, run_record
from faina.model_folder import is_model_folder, read_config, write_model_folder
from faina.model_io import load_exported


def export_fold(fold_dir: str | Path, out_dir: str | Path, repo_id: str | None = None) -> Path:
    """Write the self-contained folder of a trained fold (model, encoder files, labels, card)."""
    fold_dir = Path(fold_dir)
    if is_model_folder(fold_dir):
        raise UserError("this is already an exported model folder", path=fold_dir,
                        fix="export from a fold folder of a run (results/<name>/foldK), or copy this folder")
    model, meta = load_exported(fold_dir)
    out = write_model_folder(model, meta, out_dir)
    card = model_card(meta, read_config(out), run_record(fold_dir), LabelInventory.load(meta["labels_inventory"]),
                      repo_id)
    (out / "README.md").write_text(card, encoding="utf-8")
    return out


def push_to_hub(folder: Path, repo_id: str, private: bool = False) -> str:
    """Upload ``folder`` as the model repository ``repo_id``; one clear message when the hub is unreachable."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                                   commit_message="Upload fallacy model exported by faina.export")
    except HfHubHTTPError as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"the Hugging Face hub refused the upload to {repo_id!r} ({reason})",
                        fix="log in with `huggingface-cli login` (or set HF_TOKEN) with write access to the repo; "
                            f"the exported folder is complete at {folder}") from None
    except Exception as err:  # noqa: BLE001 - the network boundary: no network, DNS, proxy, offline mode, no token
        reason = f"{type(err).__name__}: " + (str(err).strip().splitlines() or [""])[0]
        raise UserError(f"cannot reach the Hugging Face hub to upload {repo_id!r} ({reason})",
                        fix=f"upload from a machine with network access; the exported folder is complete at {folder}") \
            from None
    return str(getattr(commit, "commit_url", commit))


def build_parser():
    parser = command_parser("faina.export", "Write a trained fold as a self-contained model folder (config.json, "
                                            "model.safetensors, encoder config and tokenizer, labels, model card).")
    parser.add_argument("fold_dir", help="fold folder of a finished run (model.json + model.safetensors)")
    parser.add_argument("out_dir", help="folder to write (created; an earlier export there is overwritten)")
    parser.add_argument("--push-to-hub", metavar="REPO", default=None,
                        help="also upload the folder to this Hugging Face model repo (user/name)")
    parser.add_argument("--private", action="store_true", help="create the hub repo as private")
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> Path:
    args = build_parser().parse_args(argv)
    out = export_fold(args.fold_dir, args.out_dir, args.push_to_hub)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    print(f"model folder written: {out} ({len(files)} files: {', '.join(files)})", file=sys.stderr)
    if args.push_to_hub:
        print(f"uploaded: {push_to_hub(out, args.push_to_hub, args.private)}", file=sys.stderr)
    return out


if __name__ == "__main__":
    main()

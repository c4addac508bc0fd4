"""A fold's model as a folder others load, and pushing it to the Hugging Face hub (the library behind ``faina.export``)."""

from __future__ import annotations

from pathlib import Path

from common.errors import UserError
from faina.formats.labels import LabelInventory
from faina.serving.fold_model import load_exported
from faina.serving.model_card import model_card, run_record
from faina.serving.model_folder import is_model_folder, read_config, write_model_folder


def export_fold(fold_dir: str | Path, out_dir: str | Path, repo_id: str | None = None) -> Path:
    """Write the self-contained folder of a trained fold (model, encoder files, labels, card)."""
    fold_dir = Path(fold_dir)
    if is_model_folder(fold_dir):
        raise UserError(
            "this is already an exported model folder",
            path=fold_dir,
            fix="export from a fold folder of a run (results/<name>/foldK), or copy this folder",
        )
    model, meta = load_exported(fold_dir)
    out = write_model_folder(model, meta, out_dir)
    card = model_card(
        meta, read_config(out), run_record(fold_dir), LabelInventory.load(meta["labels_inventory"]), repo_id
    )
    (out / "README.md").write_text(card, encoding="utf-8")
    return out


def push_to_hub(folder: Path, repo_id: str, private: bool = False) -> str:
    """Upload ``folder`` as the model repository ``repo_id``; one clear message when the hub is unreachable."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="model",
            commit_message="Upload fallacy model exported by faina.export",
        )
    except HfHubHTTPError as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(
            f"the Hugging Face hub refused the upload to {repo_id!r} ({reason})",
            fix="log in with `huggingface-cli login` (or set HF_TOKEN) with write access to the repo; "
            f"the exported folder is complete at {folder}",
        ) from None
    except Exception as err:  # noqa: BLE001 - the network boundary: no network, DNS, proxy, offline mode, no token
        reason = f"{type(err).__name__}: " + (str(err).strip().splitlines() or [""])[0]
        raise UserError(
            f"cannot reach the Hugging Face hub to upload {repo_id!r} ({reason})",
            fix=f"upload from a machine with network access; the exported folder is complete at {folder}",
        ) from None
    return str(getattr(commit, "commit_url", commit))

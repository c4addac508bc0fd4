"""Can this model folder be loaded, and if not, what is missing? One message instead of transformers' traceback.

Asked before ``from_pretrained`` and again when it fails, by every layer that loads a Hugging Face model
(encoders, causal LMs, tokenizers), so it knows no task. A model copied by hand is often incomplete in one of a
few ways, and transformers reports each of them through a different exception, several of them misleading
(a SentencePiece tokenizer without the ``sentencepiece`` package surfaces as "`tiktoken` is required",
github.com/huggingface/transformers/issues/36291). ``check_model_folder`` names the missing piece of a local folder
up front;
``explain_load_error`` turns what transformers raised for a hub id or folder into a ``UserError`` that names
the folder or hub id, what is missing and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

from common.errors import UserError

WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
# the files a tokenizer can be built from (one of these groups is enough)
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "tokenizer.model",
    "sentencepiece.bpe.model",
    "spiece.model",
    "sentencepiece.model",
    "tiktoken.model",
)
SENTENCEPIECE_SUFFIX = ".model"


class ModelFolderIncomplete(UserError):
    """A model folder lacks a file, a package or an architecture that loading it needs."""


def sentencepiece_available() -> bool:
    """transformers' own check (looked up at call time, so tests can switch it off)."""
    from transformers.utils import import_utils

    return bool(import_utils.is_sentencepiece_available())


def local_model_folder(reference: str) -> Path | None:
    """The folder behind a reference: a local folder, or the cached snapshot of a hub id (None when neither)."""
    path = Path(reference)
    if path.is_dir():
        return path
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(reference, "config.json")
    except Exception:  # noqa: BLE001 - a malformed repo id is simply not cached
        return None
    return Path(cached).parent if isinstance(cached, str) else None


def _read_config(folder: Path, config_key: str) -> dict:
    path = folder / "config.json"
    if not path.is_file():
        raise ModelFolderIncomplete(
            "not a Hugging Face model folder: it has no config.json",
            path=folder,
            fix=f"point {config_key} at the folder that holds the model's config.json "
            "(e.g. the folder `huggingface-cli download ORG/MODEL --local-dir DIR` wrote)",
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ModelFolderIncomplete(
            f"config.json cannot be read ({err})",
            path=path,
            fix="download the model again; config.json must be a JSON object",
        ) from None


def _check_architecture(folder: Path, config: dict, config_key: str, trust_remote_code: bool) -> None:
    from transformers import CONFIG_MAPPING

    model_type = config.get("model_type")
    if model_type in CONFIG_MAPPING or (trust_remote_code and config.get("auto_map")):
        return
    if config.get("auto_map"):  # the folder ships Python code of its own: data from elsewhere is never run
        raise ModelFolderIncomplete(
            f"config.json asks for custom code (auto_map: {sorted(config['auto_map'])}) for the architecture "
            f"{model_type!r}; code that comes with a model is never run unless you allow it",
            path=folder,
            fix="use a model of an architecture transformers knows, or, only for a folder you trust, set "
            "trust_remote_code (encoder.trust_remote_code=true / --trust-remote-code)",
        )
    import transformers

    what = f"the architecture {model_type!r}" if model_type else "no model_type"
    raise ModelFolderIncomplete(
        f"config.json names {what}, which transformers {transformers.__version__} does not know",
        path=folder,
        fix="upgrade transformers (pip install -U transformers) if the model is newer than it, or point "
        f"{config_key} at a model of a known architecture (bert, camembert, llama, mixtral, ...)",
    )


def _present(folder: Path, names: tuple[str, ...], missing: str, kind: str, config_key: str) -> list[str]:
    """Which of ``names`` the folder holds; none is ``ModelFolderIncomplete`` (the folder has no ``missing``)."""
    present = [name for name in names if (folder / name).is_file()]
    if not present:
        raise ModelFolderIncomplete(
            f"the model folder has no {missing} (none of {', '.join(names)})",
            path=folder,
            fix=f"copy the {kind} files of the download into the folder, or point {config_key} at the complete copy",
        )
    return present


def _check_weights(folder: Path, config_key: str) -> None:
    present = _present(folder, WEIGHT_FILES, "weights", "weight", config_key)
    for index_name in (n for n in present if n.endswith(".index.json")):
        try:
            weight_map = json.loads((folder / index_name).read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ModelFolderIncomplete(
                f"the shard index cannot be read ({err})", path=folder / index_name, fix="download the model again"
            ) from None
        missing = sorted({shard for shard in weight_map.values() if not (folder / shard).is_file()})
        if missing:  # transformers reads an index whenever it finds one, even beside complete files
            raise ModelFolderIncomplete(
                f"{len(missing)} weight shard(s) listed in {index_name} are missing: {', '.join(missing[:3])}"
                + (" ..." if len(missing) > 3 else ""),
                path=folder,
                fix="finish the download (huggingface-cli download resumes it) or copy the missing shards",
            )


def _check_tokenizer(folder: Path, config_key: str) -> None:
    present = _present(folder, TOKENIZER_FILES, "tokenizer files", "tokenizer", config_key)
    sentencepiece_only = (
        all(name.endswith(SENTENCEPIECE_SUFFIX) for name in present) and "tiktoken.model" not in present
    )
    if sentencepiece_only and not sentencepiece_available():
        raise ModelFolderIncomplete(
            f"its tokenizer is a SentencePiece model ({', '.join(present)}, no tokenizer.json), which needs the "
            "sentencepiece package",
            path=folder,
            fix="pip install sentencepiece protobuf",
        )


def check_model_folder(
    reference: str, config_key: str, weights: bool = True, tokenizer: bool = True, trust_remote_code: bool = False
) -> None:
    """Raise ``ModelFolderIncomplete`` naming what a local (or cached) model folder lacks; hub ids pass."""
    folder = local_model_folder(reference)
    if folder is None:
        return
    config = _read_config(folder, config_key)
    _check_architecture(folder, config, config_key, trust_remote_code)
    if weights:
        _check_weights(folder, config_key)
    if tokenizer:
        _check_tokenizer(folder, config_key)


def _chain(err: BaseException):
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        err = err.__cause__ or err.__context__


def explain_load_error(reference: str, err: BaseException, what: str, config_key: str) -> UserError:
    """The one message for an exception transformers raised while loading ``reference``."""
    names = {type(e).__name__ for e in _chain(err)}
    text = " ".join(str(e) for e in _chain(err))
    first = (str(err).strip().splitlines() or [type(err).__name__])[0]
    if "GatedRepoError" in names or "gated repo" in text.lower():
        return UserError(
            f"the {what} {reference!r} is a gated repository and this machine is not logged in with access to it",
            fix=f"accept the model's licence on https://huggingface.co/{reference}, then `huggingface-cli login` "
            f"(or set HF_TOKEN); or download it where you have access and point {config_key} at the folder",
        )
    if "tiktoken" in text:
        return UserError(
            f"the tokenizer of the {what} {reference!r} could not be read as SentencePiece "
            f"(transformers fell back to tiktoken: {first})",
            fix="pip install sentencepiece protobuf; if they are installed, the .model file is damaged: "
            "download it again",
        )
    if "RepositoryNotFoundError" in names:
        return UserError(
            f"there is no {what} {reference!r} on the Hugging Face hub",
            fix=f"check the hub id in {config_key} (ORG/MODEL), or point it at a local folder",
        )
    return UserError(
        f"cannot load the {what} {reference!r} ({type(err).__name__}: {first})",
        fix=f"point {config_key} at a complete local model folder (config.json, weights, tokenizer "
        "files); without the hub, download the model elsewhere and copy it here",
    )

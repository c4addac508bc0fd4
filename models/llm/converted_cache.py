"""A cache of GGUF models converted to Hugging Face folders (safetensors weights + tokenizer + config files).

Why: transformers de-quantises a GGUF file and rebuilds its tokenizer on every load (SmolLM2-135M: ~30-40 s on
two CPU cores); the converted folder loads in a few seconds. The cache lives in the user cache folder
(platformdirs), one sub-folder per GGUF file, named by the SHA-256 of the file's bytes, so a changed file is
converted again and two copies of one file share an entry.

Robustness: an entry is written into a temporary folder next to the cache, its ``complete.json`` (file names
and sizes) last, and only then renamed into place (a rename is atomic on one file system). An entry without
``complete.json``, or whose files do not have the recorded sizes, is never trusted: it is removed and
converted again. Two processes converting at once both finish; the second rename loses and its copy is
dropped.

Where: ``llm.converted_cache`` (a folder, or ``off``), else the environment variable ``FALLACY_MODEL_CACHE``
(same values), else ``<user cache folder>/fallacy-framework/converted``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

ENV_VAR = "FALLACY_MODEL_CACHE"
MARKER = "complete.json"
FORMAT = 1
DISABLED = {"off", "none", "false", "0", "no", "disabled"}


def cache_root(setting: str | None = None) -> Path | None:
    """The cache folder, or ``None`` when caching is switched off (config value first, then the env var)."""
    value = setting if setting not in (None, "") else os.environ.get(ENV_VAR)
    if value is not None and str(value).strip().lower() in DISABLED:
        return None
    if value not in (None, ""):
        return Path(str(value)).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("fallacy-framework")) / "converted"


@functools.lru_cache(maxsize=8)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            sha.update(chunk)
    return sha.hexdigest()


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (memoised per size and modification time within a process)."""
    stat = Path(path).stat()
    return _digest(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


def entry_is_complete(folder: Path) -> bool:
    """True only for an entry whose marker exists and whose every recorded file has its recorded size."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        files = marker["files"]
        return (
            bool(files)
            and marker.get("format") == FORMAT
            and all(
                (folder / name).is_file() and (folder / name).stat().st_size == size for name, size in files.items()
            )
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def convert_gguf(gguf_path: Path, destination: Path) -> None:
    """De-quantise a GGUF file with transformers and save model (safetensors) and tokenizer into ``destination``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, trust_remote_code=False)
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        # the weights are already de-quantised to plain tensors; transformers keeps a GGUF "quantizer" only as
        # a marker, and refuses to save a model that has one
        quantizer.remove_quantization_config(model)
    model.save_pretrained(str(destination), safe_serialization=True)
    AutoTokenizer.from_pretrained(folder, gguf_file=name, trust_remote_code=False).save_pretrained(str(destination))


def _write_entry(gguf_path: Path, digest: str, root: Path, final: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".partial-{digest[:16]}-", dir=root))
    try:
        convert_gguf(gguf_path, staging)
        files = {p.name: p.stat().st_size for p in sorted(staging.iterdir()) if p.is_file()}
        marker = {"format": FORMAT, "source": str(gguf_path), "sha256": digest, "files": files}
        with open(staging / MARKER, "w", encoding="utf-8") as handle:
            json.dump(marker, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.rename(staging, final)
        except OSError:
            if not entry_is_complete(final):  # not a concurrent writer's finished entry: a real failure
                raise
            log.info("another process cached %s first; keeping its copy", gguf_path.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def converted_folder(gguf_path: str | Path, setting: str | None = None) -> Path | None:
    """The folder of the converted model for ``gguf_path`` (converting and caching it on first use), or
    ``None`` when the cache is switched off."""
    root = cache_root(setting)
    if root is None:
        return None
    gguf_path = Path(gguf_path)
    digest = file_digest(gguf_path)
    final = root / digest
    if entry_is_complete(final):
        return final
    if final.exists():
        log.warning("ignoring an incomplete converted-model cache entry %s; converting again", final)
        shutil.rmtree(final, ignore_errors=True)
    log.info("converting %s once into %s (later loads read the safetensors copy)", gguf_path.name, final)
    _write_entry(gguf_path, digest, root, final)
    return final

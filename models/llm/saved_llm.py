"""The ``llm`` block of a saved LoRA bundle: which base model, loaded how, served by which backend, by name.

A bundle may come from someone else (a hub download), so this block is data only. ``named_llm_block`` writes the
run's resolved ``conf/llm`` (whose ``backend`` is a Hydra ``_target_`` node) with the backend as a name and its
plain options; it also translates the bundles of earlier releases that kept the ``_target_``, so they still load
(any other target is refused). ``check_llm_block`` checks every field before anything is loaded: dtype, device and
backend come from closed sets, ``extra`` keyword arguments are not accepted from a file, and
``trust_remote_code: true`` is refused unless the user allows it on their own command line.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from common.errors import UserError
from common.untrusted import Strict, refuse_code, require_mapping, validated

Text = Annotated[str, Field(min_length=1, max_length=4096)]
FileName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")]
DEFAULT_BACKEND = {"name": "transformers"}


class TransformersOptions(Strict):
    name: Literal["transformers"]


class VllmOptions(Strict):
    name: Literal["vllm"]
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1)] = 0.85
    max_model_len: Annotated[int, Field(ge=1, le=10**7)] | None = None
    max_lora_rank: Annotated[int, Field(ge=1, le=4096)] = 64
    enforce_eager: bool = False


BACKEND_OPTIONS = {"transformers": TransformersOptions, "vllm": VllmOptions}


class SavedLLM(Strict):
    name: Annotated[str, Field(max_length=200)] | None = None
    name_or_path: Text
    gguf_file: FileName | None = None
    tokenizer: Text | None = None
    load_in_4bit: bool = False
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "auto"
    device: Annotated[str, Field(pattern=r"^(auto|cpu|mps|cuda(:[0-9]{1,3})?)$")] = "auto"
    trust_remote_code: bool = False
    tiny_config: (
        dict[Annotated[str, Field(pattern=r"^[a-z_]{1,64}$")], Annotated[int, Field(ge=0, le=10**6)] | float | bool]
        | None
    ) = None
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = 0
    converted_cache: Text | None = None
    backend: dict[str, Any] = DEFAULT_BACKEND


@dataclasses.dataclass(frozen=True)
class CheckedLLM:
    """A checked ``llm`` block: the ``CausalLMSpec`` fields and the backend's name and options."""

    spec: dict
    backend: str
    options: dict

    def saved(self) -> dict:
        return {**self.spec, "backend": {"name": self.backend, **self.options}}


def named_llm_block(llm: dict, path: str | Path | None = None) -> dict:
    """``llm`` with its backend as ``{"name": ..., options}`` (a Hydra ``_target_`` node is translated)."""
    from models.llm.backend_registry import BACKEND_NAMES

    llm = require_mapping(llm, "llm", path, "write the llm block as the fine-tuning run did")
    backend = llm.get("backend")
    if backend is None:
        return {**llm, "backend": dict(DEFAULT_BACKEND)}
    if not isinstance(backend, dict) or "_target_" not in backend:
        return llm
    return {**llm, "backend": BACKEND_NAMES.named_partial(backend, path, "llm.backend")}


def check_llm_block(llm: Any, path: str | Path | None, trust_remote_code: bool = False) -> CheckedLLM:
    """Every field of a saved ``llm`` block checked; nothing is imported, loaded or called."""
    from models.llm.backend_registry import BACKEND_NAMES

    named = named_llm_block(llm, path)
    refuse_code(named, path, "llm")
    checked = validated(SavedLLM, named, path, "llm")
    name = checked.backend.get("name")
    BACKEND_NAMES.get(name, path, "llm.backend.name")
    options = validated(BACKEND_OPTIONS[name], checked.backend, path, "llm.backend").model_dump(exclude={"name"})
    if checked.trust_remote_code and not trust_remote_code:
        raise UserError(
            f"llm.trust_remote_code is true: loading {checked.name_or_path} would run Python code that "
            "ships with the model, and a saved file cannot switch that on",
            path=path,
            fix="only if you trust that code, pass --trust-remote-code; otherwise use a base model that "
            "needs no custom code",
        )
    return CheckedLLM(checked.model_dump(exclude={"backend"}), name, options)


def backend_of(checked: CheckedLLM, backend: str | None = None):
    """The backend factory (``spec, adapter -> backend``) a checked block names, or the one named by the user."""
    import functools

    from models.llm.backend_registry import BACKEND_NAMES

    if backend is not None and backend != checked.backend:
        return BACKEND_NAMES.get(backend, None, "--backend")  # the user's choice: that engine's defaults
    return functools.partial(BACKEND_NAMES.get(checked.backend, None, "llm.backend.name"), **checked.options)

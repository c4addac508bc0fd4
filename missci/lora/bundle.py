"""``missci_lora.json``: what a LoRA adapter folder needs besides its weights, as names and plain values.

The bundle says which base model the adapter belongs to (``llm``, see ``models.llm.saved_llm``: the backend by
name), the task, prompt, chat and candidate settings and the training arguments' ids. Adapters are shared (a hub
download, a colleague's results), so reading one never imports or calls anything named in it: every field is
checked here before the base model is loaded, bundles of earlier releases that held Hydra ``_target_`` nodes are
translated (known targets only), and a wrong or hostile bundle ends in one message naming the file and field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from common.errors import UserError
from common.io import atomic_write_json
from common.untrusted import Strict, read_json_object, refuse_code, validated
from models.llm.saved_llm import check_llm_block, named_llm_block

BUNDLE_FILE = "missci_lora.json"
BUNDLE_FIX = "re-run the fine-tuning fold that wrote it (python train.py task=missci-gen mode=finetune, or missci-cls)"
Scalar = Annotated[str, Field(max_length=100_000)] | int | float | bool | None
Positive = Annotated[int, Field(ge=1, le=1_000_000)]


class PromptBlock(Strict):
    definitions: bool = True
    logical_forms: bool = False
    examples: bool = False
    num_candidates: Annotated[int, Field(ge=1, le=100)] = 3


class ChatBlock(Strict):
    use_chat_template: bool = True
    system_prompt: Annotated[str, Field(max_length=100_000)] | None = None


class CandidatesBlock(Strict):
    num_candidates: Annotated[int, Field(ge=1, le=100)] = 3
    strategy: Literal["beam", "sample"] = "beam"
    max_new_tokens: Positive = 96
    temperature: Annotated[float, Field(gt=0, le=100)] = 0.7
    top_p: Annotated[float, Field(gt=0, le=1)] = 0.95
    batch_size: Positive = 8
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = 1


class Bundle(Strict):
    task: Literal["missci-gen", "missci-cls"]
    llm: dict[str, Any]
    prompt: PromptBlock
    chat: ChatBlock
    candidates: CandidatesBlock
    # the training settings, kept for the record (nothing is built from them)
    lora: dict[Annotated[str, Field(max_length=200)], Scalar | list[Scalar] | dict[str, Scalar]] = {}
    fold: Annotated[int, Field(ge=0, le=10_000)] | None = None
    trained_on_arguments: Annotated[list[Annotated[str, Field(max_length=1000)]], Field(max_length=10**6)] = []


def write_bundle(
    directory: str | Path,
    *,
    task: str,
    llm: dict,
    prompt: dict,
    chat,
    candidates,
    lora: dict,
    trained_on: Sequence[str],
    fold: int | None,
) -> Path:
    """Write the bundle of an adapter folder (``llm``: the run's resolved ``conf/llm``, its backend saved by name)."""
    path = Path(directory) / BUNDLE_FILE
    content = {
        "task": task,
        "llm": named_llm_block(llm),
        "prompt": prompt,
        "chat": dataclasses.asdict(chat),
        "candidates": dataclasses.asdict(candidates),
        "lora": lora,
        "fold": fold,
        "trained_on_arguments": sorted(trained_on),
    }
    check_bundle(content, path)  # what is written can be read back
    return atomic_write_json(path, content)


def check_bundle(raw: Any, path: Path, trust_remote_code: bool = False) -> dict:
    """The bundle with every field checked and its ``llm`` block in named form."""
    if not isinstance(raw, dict):
        raise UserError(f"{BUNDLE_FILE} must be a JSON object", path=path, fix=BUNDLE_FIX)
    refuse_code(_names_and_settings(raw), path)  # llm: translated first, then checked
    bundle = validated(Bundle, raw, path, fix=BUNDLE_FIX)
    llm = check_llm_block(bundle.llm, path, trust_remote_code)
    return {**bundle.model_dump(), "llm": llm.saved()}


def _names_and_settings(raw: dict) -> dict:
    """The bundle without ``llm`` and without its free text (the system prompt, the argument ids), for the
    Hydra/interpolation scan: a prompt may well say ``${price}``, and it is text handed to the chat template,
    never to OmegaConf. Keys are still scanned everywhere, and a non-string there fails the schema anyway."""
    scanned = {k: v for k, v in raw.items() if k != "llm"}
    chat = scanned.get("chat")
    if isinstance(chat, dict) and isinstance(chat.get("system_prompt"), str):
        scanned["chat"] = {**chat, "system_prompt": None}
    ids = scanned.get("trained_on_arguments")
    if isinstance(ids, list) and all(isinstance(item, str) for item in ids):
        scanned["trained_on_arguments"] = []
    return scanned


def read_bundle(directory: str | Path, trust_remote_code: bool = False) -> dict:
    """The checked bundle of an adapter folder (``trust_remote_code``: the user's consent, never the file's)."""
    path = Path(directory) / BUNDLE_FILE
    if not path.is_file():
        raise UserError(
            f"{BUNDLE_FILE} is missing, so the base model and prompt settings are unknown.",
            path=path.parent,
            fix="pass a fold<k>/adapter folder written by `python train.py "
            "task=missci-gen mode=finetune` (or missci-cls).",
        )
    return check_bundle(read_json_object(path, BUNDLE_FILE, BUNDLE_FIX), path, trust_remote_code)

"""Load any Hugging Face causal language model: hub name, local folder, GGUF file shipped in a package, or a
tiny random model built from a config (for tests).

Shared by Missci zero-shot reconstruction, Faina zero-shot and LoRA fine-tuning, so it knows nothing about
tasks. Safety rules live here once: ``trust_remote_code`` is off unless a config turns it on, and 4-bit
loading through bitsandbytes is only used on a GPU. Whether a model is loadable at all (packaged aliases, a
hub name that is neither local nor cached failing fast offline) is ``common/model_availability.py``'s job.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import UserError
from common.model_availability import ModelUnavailable, ensure_model_available
from common.model_files import check_model_folder, explain_load_error

log = logging.getLogger(__name__)
_FOUR_BIT_NOTICES: set[tuple[str, str]] = (
    set()
)  # (setting, reference) pairs already told that 4-bit is skipped (one notice per process)
CONFIG_KEY = "llm.name_or_path"


@dataclass
class CausalLMSpec:
    """What to load. ``name_or_path`` may be a hub id, a folder, or a packaged alias ("smollm2")."""

    name_or_path: str
    gguf_file: str | None = None
    tokenizer: str | None = None  # defaults to name_or_path
    load_in_4bit: bool = False  # only honoured on CUDA (bitsandbytes)
    dtype: str = "auto"
    device: str = "auto"  # "auto": cuda when available, else cpu
    trust_remote_code: bool = False
    tiny_config: dict[str, Any] | None = None  # build a random model of this LlamaConfig (tests)
    seed: int = 0
    converted_cache: str | None = None  # GGUF -> safetensors cache folder; "off" disables (converted_cache.py)
    extra: dict[str, Any] = field(default_factory=dict)


def pick_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def model_source(spec: CausalLMSpec) -> tuple[str, dict[str, Any]]:
    """``(reference, extra from_pretrained kwargs)`` of the model weights: a GGUF file is replaced by its
    cached safetensors conversion (models/llm/converted_cache.py) unless the cache is switched off."""
    from models.llm.converted_cache import converted_folder

    reference = ensure_model_available(spec.name_or_path, "language model")
    if not spec.gguf_file:
        return reference, {}
    gguf_path = Path(reference) / spec.gguf_file
    if not gguf_path.is_file():
        raise ModelUnavailable(
            f"the GGUF file {spec.gguf_file!r} is not in {reference}.",
            path=gguf_path,
            fix="check llm.gguf_file, or reinstall the package that ships it.",
        )
    folder = converted_folder(gguf_path, spec.converted_cache)
    return (str(folder), {}) if folder is not None else (reference, {"gguf_file": spec.gguf_file})


def load_tokenizer(spec: CausalLMSpec):
    from transformers import AutoTokenizer

    kwargs: dict[str, Any] = {"trust_remote_code": spec.trust_remote_code}
    if spec.gguf_file and not spec.tokenizer:
        reference, gguf = model_source(spec)
        kwargs.update(gguf)
    else:
        reference = ensure_model_available(spec.tokenizer or spec.name_or_path, "tokenizer")
        check_model_folder(
            reference,
            "llm.tokenizer" if spec.tokenizer else CONFIG_KEY,
            weights=False,
            trust_remote_code=spec.trust_remote_code,
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(reference, **kwargs)
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise explain_load_error(reference, err, "language model's tokenizer", CONFIG_KEY) from None
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    tokenizer.padding_side = "left"  # decoder-only models generate after the prompt's last token
    return tokenizer


def four_bit_skipped_notice(reference: str, device: str, dtype: str, key: str = "llm.load_in_4bit") -> None:
    """Say once per model and process that ``key`` (``llm.load_in_4bit``, ``encoder.load_in_4bit``) is not honoured
    here (no CUDA, no bitsandbytes)."""
    if (key, reference) in _FOUR_BIT_NOTICES:
        return
    _FOUR_BIT_NOTICES.add((key, reference))
    log.warning(
        "%s=true is skipped: 4-bit loading (bitsandbytes) needs a CUDA GPU and this machine "
        "has none, so %s loads unquantised on %s (dtype %s; expect about 4x the memory of 4-bit). Set "
        "%s=false to silence this notice.",
        key,
        reference,
        device,
        dtype,
        key,
    )


def load_causal_lm(spec: CausalLMSpec | dict):
    """Return ``(model, tokenizer)`` in eval mode on the chosen device."""
    import torch
    from transformers import AutoModelForCausalLM

    if isinstance(spec, dict):
        spec = CausalLMSpec(**spec)
    device = pick_device(spec.device)
    tokenizer = load_tokenizer(spec)
    if spec.tiny_config is not None:
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(spec.seed)
        config = LlamaConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **dict(spec.tiny_config))
        model = LlamaForCausalLM(config)
    else:
        reference, gguf = model_source(spec)
        kwargs: dict[str, Any] = {"trust_remote_code": spec.trust_remote_code, **spec.extra, **gguf}
        if spec.dtype != "auto":
            kwargs["dtype"] = getattr(torch, spec.dtype)
        if not spec.gguf_file:
            check_model_folder(reference, CONFIG_KEY, tokenizer=False, trust_remote_code=spec.trust_remote_code)
        if spec.load_in_4bit and not device.startswith("cuda"):
            four_bit_skipped_notice(reference, device, spec.dtype)
        if spec.load_in_4bit and device.startswith("cuda"):
            from transformers import BitsAndBytesConfig

            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16, bnb_4bit_quant_type="nf4"
            )
            kwargs["device_map"] = "auto"
        try:
            model = AutoModelForCausalLM.from_pretrained(reference, **kwargs)
        except ImportError as err:
            raise UserError(
                f"loading {reference!r} needs a missing package ({err}).",
                fix="pip install the package named above (4-bit needs `pip install bitsandbytes "
                "accelerate`; GGUF needs `pip install gguf`).",
            ) from None
        except (OSError, ValueError, KeyError) as err:
            raise explain_load_error(reference, err, "language model", CONFIG_KEY) from None
    if not getattr(model, "hf_device_map", None):  # accelerate already placed a device-mapped model
        model.to(device)
    model.eval()
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer

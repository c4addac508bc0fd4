"""Decoder-LLM encoders built offline by name: ``tiny-llama`` (tests, examples) and ``llama-7b-shape`` (the GPU check).

- ``tiny-llama``: the Llama 3 Instruct hub replica (``models.hub_replicas``: the hub's file layout, a byte-level BPE
  tokenizer with ``<|begin_of_text|>`` as its BOS, GQA, sharded safetensors; 2 layers of width 32, random weights
  from ``torch.manual_seed``). It proves that a Llama-family encoder trains, saves and reloads, not that it helps.
- ``llama-7b-shape``: Llama 2 7B's ``config.json`` shape (32 layers, 4096 wide, 32,000 ids) with tiny-llama's
  tokenizer and no weights: with ``encoder.random_init=true`` it prices a 7B encoder's training step and memory on a
  GPU without a download (``scripts/gpu_check.sh``); its predictions mean nothing.

Each is written once into the user cache folder and found there by its name, so ``encoder.name_or_path=tiny-llama``
means the same files on any machine and a saved model that names it reloads anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from common.user_cache import user_cache_root

VERSION = 1  # a new version builds new folders (a change of their files)
MARKER = "complete"
# Llama 2 7B (meta-llama/Llama-2-7b-hf config.json)
LLAMA_7B_SHAPE = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-05,
    "vocab_size": 32000,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def _write_tiny_llama(folder: Path) -> None:
    from models.hub_replicas.layouts import REPLICAS
    from models.hub_replicas.tokenizer_files import sample_texts

    REPLICAS["llama3-instruct"].build(folder, sample_texts())


def _write_llama_7b_shape(folder: Path) -> None:
    tiny = built_folder("tiny-llama")
    for name in TOKENIZER_FILES:
        shutil.copy(tiny / name, folder / name)
    bos = json.loads((tiny / "config.json").read_text(encoding="utf-8"))["bos_token_id"]
    config = {**LLAMA_7B_SHAPE, "bos_token_id": bos, "eos_token_id": bos}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


BUILDERS: dict[str, Callable[[Path], None]] = {"tiny-llama": _write_tiny_llama, "llama-7b-shape": _write_llama_7b_shape}


def built_folder(name: str) -> Path:
    """The folder of the built encoder ``name``, written on first use (atomically: a half-written one is never used)."""
    final = user_cache_root() / f"{name}-v{VERSION}"
    if (final / MARKER).is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=final.parent))
    try:
        BUILDERS[name](staging)
        (staging / MARKER).write_text(f"built by models.built_encoders ({name})\n", encoding="utf-8")
        try:
            os.rename(staging, final)
        except OSError:
            if not (final / MARKER).is_file():  # not another process's finished copy: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final

"""Helpers of the LoRA tests (importable as ``helpers.lora``; conftest holds the fixtures)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "conf"
TINY_CONFIG = {
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "max_position_embeddings": 2048,
}


def tiny_spec(seed: int = 0):
    from models.llm.loading import CausalLMSpec

    return CausalLMSpec("tiny-llama", tokenizer="minilm", device="cpu", tiny_config=dict(TINY_CONFIG), seed=seed)


def compose(overrides: list[str]):
    from helpers.configs import compose_train

    return compose_train(*overrides)

"""Helpers of the LoRA tests (importable as ``helpers.lora``; conftest holds the fixtures)."""

from __future__ import annotations

TINY_CONFIG = {
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "max_position_embeddings": 2048,
}

# a LoRA run in seconds: the tiny random Llama, two steps on four examples, two short candidates, two R_i
QUICK_RUN = [
    "llm=tiny-llama",
    "callbacks=none",
    "logger=csv",
    "task.lora.max_steps=2",
    "task.lora.batch_size=2",
    "task.lora.max_train_examples=4",
    "task.lora.candidates.max_new_tokens=4",
    "task.lora.candidates.num_candidates=2",
    "task.max_fallacies=2",
]


def tiny_spec(seed: int = 0):
    from models.llm.loading import CausalLMSpec

    return CausalLMSpec("tiny-llama", tokenizer="minilm", device="cpu", tiny_config=dict(TINY_CONFIG), seed=seed)


def compose(overrides: list[str]):
    from helpers.configs import compose_train

    return compose_train(*overrides)

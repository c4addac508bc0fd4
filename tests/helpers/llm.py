"""Helpers of the LLM tests (importable as ``helpers.llm``): a tiny random Llama spec and prompts of very
different lengths (so batches need left padding)."""

from __future__ import annotations

TINY = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}
PROMPTS = [
    "the claim is false",
    "one small study of twelve patients showed that the drug lowered the viral load, so the drug cures "
    "everyone who takes it, and the publication says nothing about side effects",
    "masks",
    "the vaccine was tested in adults; therefore it is safe for children and for pregnant women too",
    "a correlation between two numbers",
    "ivermectin works in a dish at very high doses",
]


def tiny_spec(**overrides):
    from models.llm.loading import CausalLMSpec

    return CausalLMSpec("tiny-llama", tokenizer="minilm", device="cpu", tiny_config=dict(TINY), seed=3, **overrides)

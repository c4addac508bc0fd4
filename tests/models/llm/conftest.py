"""Fixtures of the generation tests: a tiny random Llama (built from a config) with the packaged MiniLM
tokenizer, and prompts of very different lengths (so batches need left padding)."""

from __future__ import annotations

import pytest

from helpers.llm import tiny_spec


@pytest.fixture(scope="module")
def tiny_lm():
    """(model, tokenizer) of a random 2-layer Llama; MiniLM's tokenizer has no chat template."""
    from models.llm.loading import load_causal_lm

    return load_causal_lm(tiny_spec())

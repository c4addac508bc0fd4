"""Fixtures for the LoRA tests: the Missci data (the packaged synthetic sample), a tiny random 2-layer Llama."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.lora import tiny_spec


@pytest.fixture(scope="session")
def data_dir(missci_sample) -> Path:
    """The synthetic sample: every LoRA path runs on a fresh clone."""
    return missci_sample


@pytest.fixture
def tiny_model():
    """(model, tokenizer): a random 2-layer Llama (hidden 16) with the packaged MiniLM tokenizer."""
    from models.llm.loading import load_causal_lm

    return load_causal_lm(tiny_spec())


@pytest.fixture(scope="session")
def minilm_tokenizer():
    from models.llm.loading import load_tokenizer

    return load_tokenizer(tiny_spec())

"""Fixtures for the LoRA tests: the shared Missci copy, a tiny random 2-layer Llama and its tokenizer."""
from __future__ import annotations

from pathlib import Path

import pytest

from missci_lora.helpers import DATA_DIR, tiny_spec


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA_DIR / "test.missci.jsonl").is_file():
        pytest.skip(f"Missci data not found under {DATA_DIR}")
    return DATA_DIR.resolve()


@pytest.fixture
def tiny_model():
    """(model, tokenizer): a random 2-layer Llama (hidden 16) with the packaged MiniLM tokenizer."""
    from models.llm import load_causal_lm
    return load_causal_lm(tiny_spec())


@pytest.fixture(scope="session")
def minilm_tokenizer():
    from models.llm import load_tokenizer
    return load_tokenizer(tiny_spec())

"""Fixtures: tiny offline BERT encoders saved to a temporary folder (built from a config)."""
from __future__ import annotations

import pytest

from tiny_models import save_tiny_bert


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> str:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_bert_s_tokens(tmp_path_factory) -> str:
    """Same model, but its tokenizer wraps sequences in ``<s> … </s>`` like RoBERTa."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert_s"), cls_token="<s>", sep_token="</s>")

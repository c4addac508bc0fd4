"""Fixtures: tiny offline BERT encoders (built from a config, saved to a temporary folder) and batches.

The project runs pytest with ``--import-mode=importlib``, so helpers live here as fixtures, not as an
importable module."""

from __future__ import annotations

import pytest
import torch

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "<s>",
    "</s>",
    "il",
    "la",
    "di",
    "che",
    "e",
    "un",
    "una",
    "non",
    "per",
    "ma",
    "ciao",
    "mondo",
    "casa",
    "##a",
    "##o",
    "##i",
    "##e",
    "gatto",
    "cane",
    "sole",
    "mare",
    "vento",
    "neve",
]


def save_tiny_bert(
    folder, cls_token: str = "[CLS]", sep_token: str = "[SEP]", layers: int = 2, max_positions: int = 64
) -> str:
    from transformers import BertConfig, BertModel, BertTokenizer

    torch.manual_seed(0)
    vocab = {word: i for i, word in enumerate(WORDS)}
    tokenizer = BertTokenizer(vocab=vocab, do_lower_case=True, cls_token=cls_token, sep_token=sep_token)
    tokenizer.save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=16,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=max_positions,
    )
    BertModel(config).save_pretrained(folder)
    return str(folder)


def content_batch(tokenizer, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Content subword ids (no specials), right-padded, and their mask: the DataModule's layout."""
    encoded = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    length = max(len(ids) for ids in encoded)
    ids = torch.full((len(texts), length), tokenizer.pad_token_id)
    mask = torch.zeros(len(texts), length, dtype=torch.long)
    for i, row in enumerate(encoded):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    return ids, mask


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> str:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_bert_s_tokens(tmp_path_factory) -> str:
    """Same model, but its tokenizer wraps sequences in ``<s> … </s>`` like RoBERTa."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert_s"), cls_token="<s>", sep_token="</s>")


@pytest.fixture(scope="session")
def make_batch():
    """``make_batch(tokenizer, texts)`` → right-padded content ids and mask, as the DataModule builds them."""
    return content_batch


def word_level_batch(tokenizer, texts: list[str], post_index: list[int]) -> dict[str, torch.Tensor]:
    """The inputs a model's forward reads for ``texts``, every subword its own word (``word_starts`` = every
    position), numbered ``post_index``; a test adds the targets it needs (``tags``, ``labels``)."""
    ids, mask = content_batch(tokenizer, texts)
    return {
        "input_ids": ids,
        "attention_mask": mask,
        "word_starts": torch.arange(ids.shape[1]).expand(len(texts), -1).clone(),
        "word_mask": mask.bool(),
        "post_index": torch.tensor(post_index),
    }


@pytest.fixture(scope="session")
def word_batch():
    """``word_batch(tokenizer, texts, post_index)`` → the forward's inputs, one word a subword (``word_level_batch``)."""
    return word_level_batch

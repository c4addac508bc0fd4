"""Words get the subwords their tokenizer gives them in running text, for each tokenizer kind of the replicas:
WordPiece (AlBERTo), SentencePiece (UmBERTo, Llama 2, Mixtral) and byte-level BPE (Llama 3), whose words alone
would lose their leading-space mark."""

from __future__ import annotations

import pytest

from faina.data.features import splits_words_as_text, subword_ids

WORDS = ["Studio", "americano:", "la", "mutazione", "è", "pericolosa...", "#vaccini", "😭", "[URL]"]


@pytest.mark.parametrize(
    "name, by_words",
    [
        ("alberto", True),
        ("umberto", True),
        ("llama2-chat", True),
        ("mixtral-instruct", True),
        ("llama3-instruct", False),
    ],
)
def test_word_subwords_are_those_of_the_running_text(replicas, name, by_words):
    from models.encoder_tokenizer import load_encoder_tokenizer

    tokenizer = load_encoder_tokenizer(str(replicas[name]))
    assert splits_words_as_text(tokenizer) is by_words
    ids, starts = subword_ids(WORDS, tokenizer)
    assert ids == tokenizer(" ".join(WORDS), add_special_tokens=False)["input_ids"]
    assert starts[0] == 0 and all(a < b for a, b in zip(starts, starts[1:])) and starts[-1] < len(ids)
    if not by_words:  # byte-level pieces are lossless: each word's decode back to it, with the space before it
        bounds = [*starts, len(ids)]
        texts = [tokenizer.decode(ids[bounds[i] : bounds[i + 1]]) for i in range(len(WORDS))]
        assert texts == [WORDS[0]] + [f" {word}" for word in WORDS[1:]]

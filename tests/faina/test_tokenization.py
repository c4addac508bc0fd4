"""Faina's tokenisation rule (faina/formats/tokenization.py): exact offsets, the documented cases, and the sample's tokens."""

from __future__ import annotations

from faina.data.synthetic import default_sample_dir
from faina.formats.conll import read_conll
from faina.formats.tokenization import tokenize, tokenize_with_offsets


def test_documented_cases():
    text = "Studio americano: l'Italia dell'ONU, 1.000 morti... [USER] #vaccini 😭"
    assert tokenize(text) == [
        "Studio",
        "americano",
        ":",
        "l'",
        "Italia",
        "dell'",
        "ONU",
        ",",
        "1.000",
        "morti",
        ".",
        ".",
        ".",
        "[USER]",
        "#vaccini",
        "😭",
    ]


def test_offsets_slice_the_original_text_whatever_the_spacing():
    text = "  Ciao ,\tmondo!!  [URL]\n3,5 "
    tokens = tokenize_with_offsets(text)
    assert [t.text for t in tokens] == ["Ciao", ",", "mondo", "!", "!", "[URL]", "3,5"]
    assert all(text[t.start : t.end] == t.text for t in tokens)
    assert [t.start for t in tokens] == sorted(t.start for t in tokens)


def test_the_shipped_sample_is_tokenised_by_the_same_rule():
    corpus = read_conll(default_sample_dir() / "sample.conll")
    assert all(tokenize(post.text) == list(post.tokens) for post in corpus.posts)
    assert tokenize("") == [] and tokenize(" \n\t") == []

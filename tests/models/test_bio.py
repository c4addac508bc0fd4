"""Spans ↔ BIO tags of the MVMD decoders."""

from __future__ import annotations

import random

import pytest
import torch

from faina.formats.records import Span
from models.bio import B, I, O, spans_to_tags, tags_to_spans

LABELS = ["Doubt", "Loaded-language", "Slogan"]


def test_layout_decoder_index_and_one_based_tokens():
    spans = [[Span(2, 3, "Slogan")], [Span(1, 1, "Doubt")]]
    tags = spans_to_tags(spans, 4, LABELS)
    assert tags.shape == (6, 4)
    assert tags[2].tolist() == [O, B, I, O]  # view 0, label 2
    assert tags[3].tolist() == [B, O, O, O]  # view 1, label 0
    assert tags.sum() == B + I + B


def test_round_trip_random_posts():
    rng = random.Random(7)
    for _ in range(200):
        words = rng.randint(1, 15)
        views = []
        for _view in range(2):
            spans = []
            for label in LABELS:
                position = 1
                while position <= words and rng.random() < 0.7:
                    first = rng.randint(position, words)
                    last = rng.randint(first, min(words, first + 4))
                    spans.append(Span(first, last, label))
                    position = last + 1  # adjacent spans of one label stay distinct thanks to B
            views.append(sorted(spans, key=lambda s: (s.first, s.label)))
        tags = spans_to_tags(views, words, LABELS)
        padded = torch.cat([tags, torch.zeros(tags.shape[0], 3, dtype=torch.long)], dim=1)
        assert tags_to_spans(padded, words, 2, LABELS) == views


def test_orphan_inside_tag_opens_a_span():
    tags = torch.zeros(3, 5, dtype=torch.long)
    tags[1] = torch.tensor([I, I, O, I, B])
    assert tags_to_spans(tags, 5, 1, LABELS) == [
        [Span(1, 2, "Loaded-language"), Span(4, 4, "Loaded-language"), Span(5, 5, "Loaded-language")]
    ]


@pytest.mark.parametrize(
    "spans, message",
    [
        ([[Span(1, 2, "Strawman")]], "not one of"),
        ([[Span(3, 9, "Doubt")]], "outside"),
        ([[Span(1, 3, "Doubt"), Span(3, 4, "Doubt")]], "overlap"),
    ],
)
def test_invalid_spans_are_refused(spans, message):
    with pytest.raises(ValueError, match=message):
        spans_to_tags(spans, 5, LABELS)

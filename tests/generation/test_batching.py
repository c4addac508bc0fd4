"""Batched generation: length-sorted, left-padded batches give exactly the answers of one prompt at a time,
in input order, for greedy decoding and for beam-search candidates."""
from __future__ import annotations

import pytest
import torch

from missci.predict_lora import CandidateSettings, generate_candidates
from models.generation import GenerationSettings, generate, left_padded, length_sorted_batches

from generation.conftest import PROMPTS


def test_batches_group_similar_lengths_longest_first():
    assert length_sorted_batches([3, 9, 1, 9, 5], 2) == [[1, 3], [4, 0], [2]]
    assert length_sorted_batches([], 4) == []


def test_left_padding_puts_every_prompt_at_the_right_edge():
    ids, mask = left_padded([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_a_bad_batch_size_is_one_clear_error():
    from common.errors import UserError
    with pytest.raises(UserError, match="batch size"):
        length_sorted_batches([1, 2], 0)


@pytest.mark.parametrize("batch_size", [2, 4, 16])
def test_greedy_batches_equal_one_prompt_at_a_time(tiny_lm, batch_size):
    model, tokenizer = tiny_lm
    alone = [generate(model, tokenizer, [p], GenerationSettings(max_new_tokens=12, batch_size=1))[0]
             for p in PROMPTS]
    batched = generate(model, tokenizer, PROMPTS, GenerationSettings(max_new_tokens=12, batch_size=batch_size))
    assert batched == alone
    assert len(set(alone)) > 1  # distinct prompts give distinct answers, so a reordering would show


def test_padding_reaches_the_model_and_is_masked(tiny_lm, monkeypatch):
    """The batch really is left-padded (so the equality above is not a batch of one in disguise)."""
    model, tokenizer = tiny_lm
    seen = []
    original = model.generate

    def spy(**kwargs):
        seen.append(kwargs["attention_mask"].clone())
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    generate(model, tokenizer, PROMPTS, GenerationSettings(max_new_tokens=2, batch_size=6))
    [mask] = seen
    assert mask.shape[0] == 6 and bool((mask[:, 0] == 0).any()) and bool((mask[:, -1] == 1).all())
    lengths = mask.sum(dim=1)
    assert torch.equal(lengths, lengths.sort(descending=True).values)  # length-sorted rows


def test_beam_candidates_batched_equal_alone(tiny_lm):
    model, tokenizer = tiny_lm
    settings = CandidateSettings(num_candidates=2, strategy="beam", max_new_tokens=8, batch_size=1)
    alone = [generate_candidates(model, tokenizer, [p], settings)[0] for p in PROMPTS[:4]]
    batched = generate_candidates(model, tokenizer, PROMPTS[:4],
                                  CandidateSettings(num_candidates=2, strategy="beam", max_new_tokens=8,
                                                    batch_size=3))
    assert batched == alone and all(len(c) == 2 for c in batched)

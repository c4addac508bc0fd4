"""Batched generation: length-sorted, left-padded batches give exactly the answers of one prompt at a time,
in input order, for greedy decoding and for beam-search candidates."""

from __future__ import annotations

import pytest
import torch

from helpers.llm import PROMPTS
from missci.lora.tasks import CandidateSettings, generate_candidates
from models.llm.generation import GenerationSettings, generate, left_padded, length_sorted_batches


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
    alone = [generate(model, tokenizer, [p], GenerationSettings(max_new_tokens=12, batch_size=1))[0] for p in PROMPTS]
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
    batched = generate_candidates(
        model,
        tokenizer,
        PROMPTS[:4],
        CandidateSettings(num_candidates=2, strategy="beam", max_new_tokens=8, batch_size=3),
    )
    assert batched == alone and all(len(c) == 2 for c in batched)


def _plain_generate(model, tokenizer, prompts, k, **decoding):
    """HF generate on the left-padded batch, prompts copied k times by generate itself (no shared prefill)."""
    from models.llm.generation import encode_prompts

    ids, mask = left_padded(encode_prompts(tokenizer, prompts), tokenizer.pad_token_id)
    with torch.no_grad():
        out = model.generate(
            input_ids=ids, attention_mask=mask, pad_token_id=tokenizer.pad_token_id, num_return_sequences=k, **decoding
        )
    return out[:, ids.shape[1] :]


def _shared_generate(model, tokenizer, prompts, k, **decoding):
    from models.llm.generation import encode_prompts, generate_token_batches

    texts = generate_token_batches(
        model, tokenizer, encode_prompts(tokenizer, prompts), len(prompts), num_return_sequences=k, **decoding
    )
    return [t for row in texts for t in row]


@pytest.mark.parametrize(
    "decoding", [{"num_beams": 3, "do_sample": False}, {"num_beams": 1, "do_sample": True, "top_p": 0.9}]
)
def test_shared_prefill_gives_the_answers_of_copied_prompts(tiny_lm, decoding):
    """Beams and samples decoded from one prefill per prompt equal HF generate's own copies of the prompts."""
    model, tokenizer = tiny_lm
    prompts = PROMPTS[:4]  # sorted longest first, so the batch order is the prompts' order
    prompts = sorted(prompts, key=lambda p: -len(tokenizer(p)["input_ids"]))
    torch.manual_seed(5)
    plain = tokenizer.batch_decode(
        _plain_generate(model, tokenizer, prompts, 3, max_new_tokens=10, **decoding), skip_special_tokens=True
    )
    torch.manual_seed(5)
    shared = _shared_generate(model, tokenizer, prompts, 3, max_new_tokens=10, **decoding)
    assert shared == plain
    assert len(set(shared)) > 4  # the copies really decode differently (beams / samples), prompts differ


def test_beams_start_from_one_prefilled_cache_per_prompt(tiny_lm, monkeypatch):
    """generate receives a cache with k copies of each prompt, all prompt tokens but the last, so no
    prompt token is processed k times."""
    from models.llm.generation import encode_prompts, generate_token_batches

    model, tokenizer = tiny_lm
    seen = []
    original = model.generate

    def spy(**kwargs):
        seen.append(
            (kwargs["input_ids"].shape, kwargs["cache"].get_seq_length(), kwargs["cache"].layers[0].keys.shape[0])
        )
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    generate_token_batches(
        model,
        tokenizer,
        encode_prompts(tokenizer, PROMPTS[:3]),
        3,
        num_return_sequences=2,
        num_beams=2,
        do_sample=False,
        max_new_tokens=3,
    )
    [(shape, cached, rows)] = seen
    assert cached == shape[1] - 1 and rows == shape[0] * 2

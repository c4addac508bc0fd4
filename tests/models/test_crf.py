"""The batched BIO CRF against brute-force enumeration of every tag sequence."""
from __future__ import annotations

import itertools

import pytest
import torch

from models.crf import NUM_TAGS, B, BatchedBIOCRF, I, O


def valid(sequence) -> bool:
    if sequence and sequence[0] == I:
        return False
    return all(not (a == O and b == I) for a, b in zip(sequence, sequence[1:]))


def brute_force(crf: BatchedBIOCRF, emissions: torch.Tensor, length: int, decoder: int):
    """Scores of every valid sequence of one post (emissions [W, 3]) and one decoder."""
    transitions, start, end = (t.detach() for t in (crf.transitions, crf.start_scores, crf.end_scores))
    scores = {}
    for seq in itertools.product(range(NUM_TAGS), repeat=length):
        if not valid(seq):
            continue
        score = start[decoder, seq[0]] + end[decoder, seq[-1]] + sum(emissions[t, seq[t]] for t in range(length))
        score = score + sum(transitions[decoder, a, b] for a, b in zip(seq, seq[1:]))
        scores[seq] = float(score)
    return scores


@pytest.fixture
def crf_case():
    torch.manual_seed(3)
    batch, decoders, words = 3, 4, 5
    crf = BatchedBIOCRF(decoders)
    with torch.no_grad():
        for p in crf.parameters():
            p.normal_()
    emissions = torch.randn(batch, decoders, words, NUM_TAGS)
    lengths = [5, 3, 1]
    mask = torch.arange(words)[None, :] < torch.tensor(lengths)[:, None]
    return crf, emissions, mask, lengths


def test_nll_equals_brute_force(crf_case):
    crf, emissions, mask, lengths = crf_case
    tags = torch.randint(0, NUM_TAGS, emissions.shape[:3])
    # make every gold sequence valid (B where an I would follow O or start the post)
    for b in range(tags.shape[0]):
        for d in range(tags.shape[1]):
            for t in range(tags.shape[2]):
                previous = O if t == 0 else int(tags[b, d, t - 1])
                if tags[b, d, t] == I and previous == O:
                    tags[b, d, t] = B
    tags = tags * mask[:, None, :]
    nll = crf.neg_log_likelihood(emissions, tags, mask)
    assert nll.shape == (3, 4)
    for b, length in enumerate(lengths):
        for d in range(4):
            scores = brute_force(crf, emissions[b, d], length, d)
            log_z = torch.logsumexp(torch.tensor(list(scores.values()), dtype=torch.float64), 0)
            gold = tuple(tags[b, d, :length].tolist())
            assert nll[b, d].item() == pytest.approx(float(log_z) - scores[gold], abs=1e-4)


def test_viterbi_equals_brute_force(crf_case):
    crf, emissions, mask, lengths = crf_case
    decoded = crf.viterbi(emissions, mask)
    assert decoded.shape == (3, 4, 5)
    for b, length in enumerate(lengths):
        assert decoded[b, :, length:].eq(0).all()
        for d in range(4):
            scores = brute_force(crf, emissions[b, d], length, d)
            best = max(scores, key=scores.get)
            assert tuple(decoded[b, d, :length].tolist()) == best


def test_viterbi_never_breaks_bio_even_when_emissions_want_it():
    torch.manual_seed(0)
    crf = BatchedBIOCRF(6)
    emissions = torch.randn(8, 6, 7, NUM_TAGS)
    emissions[..., I] += 5.0  # I everywhere would win without the constraint
    emissions[:, :, 3, O] += 20.0  # force an O in the middle: the next word may not be I
    decoded = crf.viterbi(emissions, torch.ones(8, 7, dtype=torch.bool))
    assert (decoded[:, :, 0] != I).all()
    assert not ((decoded[:, :, :-1] == O) & (decoded[:, :, 1:] == I)).any()
    assert (decoded[:, :, 4] == B).all()


def test_forbidden_transitions_are_not_learned():
    crf = BatchedBIOCRF(2)
    emissions = torch.randn(2, 2, 4, NUM_TAGS, requires_grad=True)
    tags = torch.tensor([[O, B, I, O], [B, I, I, O]]).expand(2, 2, 4)
    crf.neg_log_likelihood(emissions, tags, torch.ones(2, 4, dtype=torch.bool)).sum().backward()
    assert crf.transitions.grad[:, O, I].eq(0).all()
    assert crf.start_scores.grad[:, I].eq(0).all()
    assert crf.transitions.grad[:, B, I].ne(0).any()


def test_empty_post_costs_nothing():
    crf = BatchedBIOCRF(3)
    emissions = torch.randn(2, 3, 4, NUM_TAGS)
    mask = torch.tensor([[True, True, False, False], [False] * 4])
    nll = crf.neg_log_likelihood(emissions, torch.zeros(2, 3, 4, dtype=torch.long), mask)
    assert nll[1].eq(0).all() and (nll[0] > 0).all()
    assert crf.viterbi(emissions, mask)[1].eq(0).all()

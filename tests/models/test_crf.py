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


def brute_force_marginals(crf: BatchedBIOCRF, emissions: torch.Tensor, length: int, decoder: int) -> torch.Tensor:
    """``[length, 3]``: each word's tag probability, summed over every valid sequence's normalised weight."""
    scores = brute_force(crf, emissions, length, decoder)
    weights = torch.softmax(torch.tensor(list(scores.values()), dtype=torch.float64), 0)
    marginals = torch.zeros(length, NUM_TAGS, dtype=torch.float64)
    for weight, sequence in zip(weights, scores):
        for t, tag in enumerate(sequence):
            marginals[t, tag] += weight
    return marginals


def test_marginals_equal_brute_force_and_sum_to_one(crf_case):
    crf, emissions, mask, lengths = crf_case
    marginals = crf.marginals(emissions, mask).detach()
    assert marginals.shape == (3, 4, 5, NUM_TAGS)
    for b, length in enumerate(lengths):
        assert marginals[b, :, :length].sum(-1).sub(1).abs().max() < 1e-5
        for d in range(4):
            expected = brute_force_marginals(crf, emissions[b, d], length, d)
            assert torch.allclose(marginals[b, d, :length].double(), expected, atol=1e-5)
            assert float(marginals[b, d, 0, I]) == pytest.approx(0.0, abs=1e-6)  # no span starts with I


def test_marginals_are_zero_at_padding_and_for_posts_without_words():
    torch.manual_seed(1)
    crf = BatchedBIOCRF(2)
    emissions = torch.randn(2, 2, 4, NUM_TAGS)
    mask = torch.tensor([[True, True, False, False], [False] * 4])
    marginals = crf.marginals(emissions, mask)
    assert marginals[0, :, 2:].eq(0).all() and marginals[1].eq(0).all()
    # padding changes nothing: the same post without its padded words has the same marginals
    assert torch.allclose(marginals[0, :, :2], crf.marginals(emissions[:1, :, :2], mask[:1, :2])[0])
    assert crf.marginals(emissions[:, :, :0], mask[:, :0]).shape == (2, 2, 0, NUM_TAGS)


def test_inside_probability_is_b_plus_i_and_agrees_with_viterbi_on_a_clear_case():
    crf = BatchedBIOCRF(1)
    emissions = torch.zeros(1, 1, 6, NUM_TAGS)
    emissions[0, 0, :, O] = torch.tensor([6.0, 0.0, 0.0, 0.0, 6.0, 6.0])
    emissions[0, 0, 1, B] = 6.0  # a clear span on words 2-4 (1-based)
    emissions[0, 0, 2:4, I] = 6.0
    mask = torch.ones(1, 6, dtype=torch.bool)
    marginals = crf.marginals(emissions, mask)
    inside = crf.inside_probabilities(emissions, mask)
    assert torch.allclose(inside, marginals[..., B] + marginals[..., I])
    path = crf.viterbi(emissions, mask)
    assert path[0, 0].tolist() == [O, B, I, I, O, O]
    assert torch.equal(marginals.argmax(-1), path)  # the decoded tag is each word's most probable tag here
    assert ((inside > 0.5) == (path != O)).all() and (inside[0, 0, 1:4] > 0.99).all()


def test_inside_probabilities_stay_within_0_and_1_for_near_certain_words():
    torch.manual_seed(2)
    crf = BatchedBIOCRF(4)
    with torch.no_grad():
        for p in crf.parameters():
            p.normal_(std=3.0)
    emissions = torch.randn(16, 4, 40, NUM_TAGS) * 12.0  # confident decoders: marginals of 1 - 1e-9 and the like
    inside = crf.inside_probabilities(emissions, torch.ones(16, 40, dtype=torch.bool)).detach()
    assert inside.dtype == torch.float32 and float(inside.min()) >= 0.0 and float(inside.max()) <= 1.0


def test_several_scales_or_chosen_decoders_in_one_pass_give_each_pass_alone_bit_for_bit(crf_case):
    crf, emissions, mask = crf_case[:3]
    decoders = crf.num_decoders
    scales = torch.stack([torch.ones(decoders), torch.linspace(0.3, 3.0, decoders)])
    together = crf.inside_probabilities_at(emissions, mask, scales)
    assert torch.equal(together[0], crf.inside_probabilities(emissions, mask))  # scale 1 is the untempered CRF
    assert torch.equal(together[1], crf.inside_probabilities(emissions, mask, scales[1]))
    # one decoder at two scales beside another: each what its own CRF gives
    chosen = torch.tensor([1, 1, 0])
    picked = crf.inside_probabilities(emissions[:, chosen], mask, torch.tensor([0.5, 2.0, 1.0]), chosen)
    assert torch.equal(picked[:, 0], crf.inside_probabilities(emissions, mask, torch.full((decoders,), 0.5))[:, 1])
    assert torch.equal(picked[:, 1], crf.inside_probabilities(emissions, mask, torch.full((decoders,), 2.0))[:, 1])
    assert torch.equal(picked[:, 2], together[0][:, 0])

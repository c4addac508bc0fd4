"""Decision-rule scopes, shrinkage, floor and held-out confirmation (``models/decision_rules.py``).

The task-metric helpers are checked against the project's one scorer implementation (``metrics/``), so a rule
tuned on them optimises exactly the figure ``faina.evaluate`` reports.
"""

from __future__ import annotations

import random

import pytest
import torch

from common.labels import LabelInventory
from metrics.faina_post_counts import PostMicroTally
from metrics.faina_span_sums import SpanOverlapTally
from models.bio import tags_to_spans
from models.crf import B, BatchedBIOCRF, I, O
from models.decision_rules import (
    SpanDev,
    _span_sums,
    fit_o_bias,
    fit_thresholds,
    post_micro_f1,
    tune_o_bias,
    tune_thresholds,
    view_average_span_f1,
    with_o_bias,
)

LABELS = ["X", "Y"]
INVENTORY = LabelInventory.from_dict({"fine": LABELS})


def random_tags(generator: random.Random, posts: int, decoders: int, words: int) -> torch.Tensor:
    """Valid BIO rows (B opens, I continues a span) drawn at random."""
    out = torch.zeros(posts, decoders, words, dtype=torch.long)
    for n in range(posts):
        for d in range(decoders):
            inside = False
            for w in range(words):
                roll = generator.random()
                if roll < 0.2:
                    out[n, d, w], inside = B, True
                elif inside and roll < 0.6:
                    out[n, d, w] = I
                else:
                    inside = False
    return out


@pytest.mark.parametrize("seed", range(5))
def test_view_average_span_f1_is_the_official_strict_score(seed):
    generator = random.Random(seed)
    num_views, words = 2, 9
    predicted = random_tags(generator, 6, num_views * len(LABELS), words)
    gold = random_tags(generator, 6, num_views * len(LABELS), words)
    tally = SpanOverlapTally(INVENTORY, num_views=num_views)
    tally.update(
        [tags_to_spans(p, words, num_views, LABELS) for p in predicted],
        [tags_to_spans(g, words, num_views, LABELS) for g in gold],
    )
    ours = view_average_span_f1(_span_sums(predicted, gold), num_views)
    assert float(ours) == pytest.approx(tally.compute()["avg"]["f1"], abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_post_micro_f1_is_the_official_post_score(seed):
    generator = torch.Generator().manual_seed(seed)
    chosen = torch.rand(20, 2, 3, generator=generator) < 0.3
    gold = torch.rand(20, 2, 3, generator=generator) < 0.3
    names = ["a", "b", "c"]

    def sets(tensor):
        return [[{names[c] for c in range(3) if tensor[n, v, c]} for v in range(2)] for n in range(len(tensor))]

    tally = PostMicroTally(num_views=2)
    tally.update(sets(chosen), sets(gold))
    assert float(post_micro_f1(chosen, gold)) == pytest.approx(tally.compute()["avg"]["f1"], abs=1e-12)


def dev_batches(seed: int, posts: int = 12, decoders: int = 4, words: int = 8):
    generator = torch.Generator().manual_seed(seed)
    gold = random_tags(random.Random(seed), posts, decoders, words)
    emissions = torch.randn(posts, decoders, words, 3, generator=generator)
    emissions.scatter_add_(-1, gold.unsqueeze(-1), torch.full((posts, decoders, words, 1), 1.5))  # informative
    mask = torch.ones(posts, words, dtype=torch.bool)
    mask[posts // 2 :, words - 2 :] = False  # shorter posts: padding must not count
    gold[posts // 2 :, :, words - 2 :] = O
    return [(emissions[:5], gold[:5], mask[:5]), (emissions[5:, :, : words - 1], gold[5:, :, :-1], mask[5:, :-1])]


@pytest.mark.parametrize("seed", range(3))
def test_own_scope_is_the_original_per_decoder_rule(seed):
    crf = BatchedBIOCRF(4)
    batches = dev_batches(seed)
    original = tune_o_bias(crf, batches, min_spans=2)
    bias, info = fit_o_bias(SpanDev(crf, batches), num_views=2, min_spans=2, scope="own")
    assert torch.equal(bias, original) and info == {"scope": "own"}


@pytest.mark.parametrize("budget", [1, 500, 1 << 24])  # a chunk of one candidate, of a few, all at once
def test_candidates_decoded_as_one_batch_give_each_candidates_own_sums(budget):
    crf = BatchedBIOCRF(4)
    with torch.no_grad():
        crf.transitions.normal_(generator=torch.Generator().manual_seed(1))  # not the zero start: paths depend on it
    dev = SpanDev(crf, dev_batches(4))
    biases = torch.randn(7, 4, generator=torch.Generator().manual_seed(2)) * 2
    one_by_one = torch.stack(
        [_span_sums(crf.viterbi(with_o_bias(dev.emissions, bias), dev.mask).long(), dev.gold) for bias in biases]
    )
    assert torch.equal(dev.sums_many(biases, budget=budget), one_by_one)
    assert torch.equal(dev.sums(biases[3]), one_by_one[3])


def test_shared_scope_maximises_the_task_metric_with_one_value():
    crf = BatchedBIOCRF(4)
    dev = SpanDev(crf, dev_batches(7))
    bias, _ = fit_o_bias(dev, num_views=2, min_spans=0, scope="shared")
    assert len(set(bias.tolist())) == 1
    best = view_average_span_f1(dev.sums(bias), 2)
    for value in (-4.0, -2.0, -0.5, 0.0, 0.5, 2.0, 4.0):
        assert best >= view_average_span_f1(dev.sums(torch.full((4,), value)), 2) - 1e-12


def test_shrinkage_moves_between_shared_and_own():
    crf = BatchedBIOCRF(4)
    dev = SpanDev(crf, dev_batches(3))
    own, _ = fit_o_bias(dev, 2, min_spans=0, scope="own")
    shared, _ = fit_o_bias(dev, 2, min_spans=0, scope="shared")
    assert torch.allclose(fit_o_bias(dev, 2, 0, "shrunk", shrinkage=0.0)[0], own)
    assert torch.allclose(fit_o_bias(dev, 2, 0, "shrunk", shrinkage=1e9)[0], shared, atol=1e-6)
    middle, _ = fit_o_bias(dev, 2, 0, "shrunk", shrinkage=10.0)
    gold_spans = (dev.gold == B).sum((0, 2)).double()
    expected = shared + gold_spans / (gold_spans + 10.0) * (own - shared)
    assert torch.allclose(middle, expected.float())
    # a decoder below min_spans keeps the shared value
    few, _ = fit_o_bias(dev, 2, min_spans=10**6, scope="shrunk", shrinkage=10.0)
    assert torch.allclose(few, shared)


def test_confirmation_keeps_a_bias_that_helps_on_held_out_posts():
    """Every decoder's emissions lean to O by 2 (it predicts almost nothing); any half of dev shows that a
    negative bias recovers the spans, so the cross-fitted gain is positive and the tuned bias stays."""
    posts, words = 10, 6
    gold = torch.zeros(posts, 1, words, dtype=torch.long)
    gold[:, 0, 1], gold[:, 0, 2] = B, I
    emissions = torch.zeros(posts, 1, words, 3)
    emissions[:, 0, 1, B], emissions[:, 0, 2, I] = 1.0, 1.0
    emissions[..., O] += 2.0
    crf = BatchedBIOCRF(1)
    dev = SpanDev(crf, [(emissions, gold, torch.ones(posts, words, dtype=torch.bool))])
    bias, info = fit_o_bias(dev, 1, min_spans=1, scope="shared", confirm=True)
    assert info["confirmed"] and info["held_out_gain"] > 0 and bias.item() < 0


def test_confirmation_drops_a_bias_the_other_half_does_not_confirm():
    """Half the posts gain from a negative bias, the other half lose from it by as much: fitted on one half, it
    is refuted on the other (cross-fitted gain ≤ 0), so the fixed rule (no bias) stays."""
    posts, words = 8, 4
    gold = torch.zeros(posts, 1, words, dtype=torch.long)
    gold[0::2, 0, 1] = B  # even posts: a span the model scores just below O
    emissions = torch.zeros(posts, 1, words, 3)
    emissions[..., O] = 1.0
    emissions[0::2, 0, 1, B] = 0.5
    emissions[1::2, 0, 1, B] = 0.5  # odd posts: the same scores, and no gold span
    crf = BatchedBIOCRF(1)
    dev = SpanDev(crf, [(emissions, gold, torch.ones(posts, words, dtype=torch.bool))])
    bias, info = fit_o_bias(dev, 1, min_spans=1, scope="own", confirm=True)
    assert not info["confirmed"] and torch.equal(bias, torch.zeros(1))


def threshold_data(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    targets = (torch.rand(40, 2, 3, generator=generator) < 0.35).float()
    probabilities = (0.35 * targets + 0.55 * torch.rand(40, 2, 3, generator=generator)).clamp(0, 1)
    return probabilities, targets


def test_threshold_scopes_floor_and_shrinkage():
    probabilities, targets = threshold_data()
    own, _ = fit_thresholds(probabilities, targets, 0.7, 3, scope="own")
    assert torch.equal(own, tune_thresholds(probabilities, targets, 0.7, 3))
    shared, _ = fit_thresholds(probabilities, targets, 0.7, 3, scope="shared")
    assert len(set(shared.flatten().tolist())) == 1
    best = post_micro_f1(probabilities >= shared, targets > 0.5)
    for value in (0.1, 0.3, 0.5, 0.7, 0.9):
        assert best >= post_micro_f1(probabilities >= value, targets > 0.5) - 1e-12
    floored, _ = fit_thresholds(probabilities, targets, 0.7, 3, scope="own", floor=0.5)
    assert floored.min() >= 0.5 - 1e-6
    assert torch.allclose(fit_thresholds(probabilities, targets, 0.7, 0, "shrunk", shrinkage=0.0)[0], own)
    positives = (targets > 0.5).sum(0).double()
    middle, _ = fit_thresholds(probabilities, targets, 0.7, 0, "shrunk", shrinkage=5.0)
    expected = shared + (positives / (positives + 5.0)).float() * (own - shared)
    assert torch.allclose(middle, expected, atol=1e-6)


def test_threshold_confirmation_falls_back_to_tau_without_held_out_gain():
    """Probabilities that say nothing (pure noise): whatever a half of dev picks, the other half does not gain."""
    generator = torch.Generator().manual_seed(1)
    probabilities = torch.rand(30, 1, 2, generator=generator)
    targets = torch.zeros(30, 1, 2)
    targets[::3, 0, 0] = 1.0
    thresholds, info = fit_thresholds(probabilities, targets, 0.7, 1, scope="own", confirm=True)
    assert not info["confirmed"] and info["held_out_gain"] < 0  # seed 1: the halves disagree
    assert torch.equal(thresholds, torch.full((1, 2), 0.7))
    signal = targets * 0.5 + 0.1  # positives 0.6, negatives 0.1: any half says "threshold ~0.6", and it holds
    thresholds, info = fit_thresholds(signal, targets, 0.7, 1, scope="shared", confirm=True)
    assert info["confirmed"] and thresholds[0, 0] < 0.7


def test_unknown_scope_is_refused():
    with pytest.raises(ValueError, match="scope"):
        fit_thresholds(*threshold_data(), 0.7, 3, scope="per-label")


def test_confirm_halves_keep_each_posts_observations_together():
    """A one-view model meets a dev post once per view: ``confirm`` must not fit on one view of a post and score
    the held-out gain on another view of the same post."""
    from models.decision_rules import _halves

    even, odd = _halves(7)
    assert even.tolist() == [0, 2, 4, 6] and odd.tolist() == [1, 3, 5]  # one observation per post: as before
    even, odd = _halves(9, per_post=3)  # posts 0, 1, 2, each seen by 3 views
    assert even.tolist() == [0, 1, 2, 6, 7, 8] and odd.tolist() == [3, 4, 5]

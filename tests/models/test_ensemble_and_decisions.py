"""Ensembles of MVML/MVMD models and decision rules tuned on dev, on tiny offline models."""

from __future__ import annotations

import copy

import pytest
import torch

from models.crf import B, BatchedBIOCRF, I, O
from models.decision_rules import decoder_span_f1, tune_o_bias, tune_thresholds
from models.encoder import ChunkedEncoder
from models.ensemble import MVMDEnsemble, MVMLEnsemble, ensemble
from models.mvmd import MVMD
from models.mvml import MVML

LABELS = ["Doubt", "Slogan"]


@pytest.fixture
def batch(tiny_bert, word_batch):
    tokenizer = ChunkedEncoder(tiny_bert, max_length=16).tokenizer
    return word_batch(tokenizer, ["il gatto e il cane", "ciao mondo gatto mare neve sole"], [3, 5])


def mvmd(tiny_bert, seed: int, **kwargs) -> MVMD:
    torch.manual_seed(seed)
    model = MVMD(ChunkedEncoder(tiny_bert, max_length=16, dropout=0.0), num_views=2, labels=LABELS, **kwargs).eval()
    with torch.no_grad():  # learned-looking transitions, so averaging them is not averaging zeros
        model.decoders.crf.transitions.normal_()
        model.decoders.crf.start_scores.normal_()
    return model


def mvml(tiny_bert, seed: int, **kwargs) -> MVML:
    torch.manual_seed(seed)
    return MVML(ChunkedEncoder(tiny_bert, max_length=16, dropout=0.0), num_views=2, labels=LABELS, **kwargs).eval()


def test_ensemble_of_identical_models_predicts_like_the_single_model(tiny_bert, batch):
    span = mvmd(tiny_bert, 0)
    post = mvml(tiny_bert, 0)
    with torch.no_grad():
        post.head.projection.bias.fill_(1.0)  # probabilities around τ, so decisions are not all one way
    for single, kind in ((span, MVMDEnsemble), (post, MVMLEnsemble)):
        combined = ensemble([single, copy.deepcopy(single), copy.deepcopy(single)])
        assert isinstance(combined, kind)
        with torch.no_grad():
            alone, together = single.predict_step(batch, 0), combined.predict_step(batch, 0)
        assert alone.keys() == together.keys()
        for key in alone:
            if alone[key].dtype.is_floating_point:
                assert torch.allclose(alone[key], together[key], atol=1e-6), key
            else:
                assert torch.equal(alone[key], together[key]), key


def test_mvmd_ensemble_averages_emissions_and_transitions_and_decodes_valid_bio(tiny_bert, batch):
    members = [mvmd(tiny_bert, seed) for seed in (1, 2, 3)]
    combined = ensemble(members)
    with torch.no_grad():
        mean = torch.stack([m.emissions(batch) for m in members]).mean(0)
        assert torch.allclose(combined.decision_emissions(batch), mean, atol=1e-6)
        expected_transitions = torch.stack([m.decoders.crf.transitions for m in members]).mean(0)
        assert torch.allclose(combined.crf.transitions, expected_transitions)
        # push every decoder towards I so an invalid O -> I or a starting I would show up if allowed
        biased = mean + torch.tensor([0.0, 0.0, 3.0])
        tags = combined.crf.viterbi(biased, batch["word_mask"])
        assert int((tags == I).sum()) > 0
        assert torch.equal(combined(batch), combined.crf.viterbi(mean, batch["word_mask"]))
    previous = torch.cat([torch.full_like(tags[..., :1], O), tags[..., :-1]], dim=-1)
    assert not bool(((tags == I) & (previous == O)).any())  # never O -> I, never a span starting with I


def test_ensemble_refuses_mixed_or_mismatched_members(tiny_bert):
    with pytest.raises(ValueError, match="cannot ensemble"):
        ensemble([mvmd(tiny_bert, 0), mvml(tiny_bert, 0)])
    other = MVML(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=["Doubt"])
    with pytest.raises(ValueError, match="share labels"):
        ensemble([mvml(tiny_bert, 0), other])


def test_tuned_thresholds_on_hand_made_probabilities():
    # 8 dev posts, 1 view, 3 labels
    probabilities = torch.tensor(
        [
            [0.9, 0.30, 0.9],
            [0.8, 0.25, 0.1],
            [0.75, 0.35, 0.1],
            [0.6, 0.1, 0.1],
            [0.2, 0.05, 0.1],
            [0.1, 0.32, 0.1],
            [0.1, 0.05, 0.1],
            [0.1, 0.05, 0.1],
        ]
    ).unsqueeze(1)
    targets = torch.tensor(
        [[1, 1, 1], [1, 1, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]], dtype=torch.float
    ).unsqueeze(1)
    thresholds = tune_thresholds(probabilities, targets, fallback=0.7, min_positives=3)
    # label 0: 0.65..0.75 separate the 3 positives from the 0.6 negative perfectly; the tie goes to τ = 0.7
    assert thresholds[0, 0].item() == pytest.approx(0.7)
    # label 1: probabilities never reach τ; 0.25 catches all 4 positives and no negative
    assert thresholds[0, 1].item() == pytest.approx(0.25)
    # label 2: one positive (< 3): the global τ, whatever the data says
    assert thresholds[0, 2].item() == pytest.approx(0.7)
    decided = probabilities >= thresholds
    assert torch.equal(decided[:, 0, 1], targets[:, 0, 1].bool())


def test_mvml_tuned_thresholds_live_in_the_state_dict_and_decide(tiny_bert, batch):
    model = mvml(tiny_bert, 0, decision={"tuned": True, "min_evidence": 1})
    # dev probabilities by hand: label 0 of view 1 is 0.6 for the positive post and 0.3 for the other
    probabilities = torch.full((2, 2, 2), 0.1)
    probabilities[0, 0, 0], probabilities[1, 0, 0] = 0.6, 0.3
    model.forward = lambda _batch: torch.logit(probabilities)
    labels = torch.zeros(2, 2, 2)
    labels[0, 0, 0] = 1.0
    tuned = model.tune_decisions([{**batch, "labels": labels}])
    assert set(tuned["thresholds"]) == {"a1", "a2"}
    assert model.thresholds[0, 0].item() == pytest.approx(0.6) and "thresholds" in model.state_dict()
    # τ = 0.7 would miss the positive post; the tuned threshold (ties go to the value nearest τ) finds it alone
    assert model.predict_step(batch, 0)["predicted"][:, 0, 0].tolist() == [True, False]
    assert model.thresholds[1, 1].item() == pytest.approx(0.7)  # no positives: the global τ
    untouched = mvml(tiny_bert, 0)
    assert untouched.tune_decisions([{**batch, "labels": labels}]) is None
    assert torch.equal(untouched.thresholds, torch.full((2, 2), 0.7))
    # a model exported before the buffer existed loads with the one τ it was trained with
    state = {k: v for k, v in untouched.state_dict().items() if k != "thresholds"}
    fresh = mvml(tiny_bert, 1, decision={"fixed": 0.4})
    fresh.load_state_dict(state)
    assert torch.equal(fresh.thresholds, torch.full((2, 2), 0.4))


def tags(*rows: str) -> torch.Tensor:
    code = {"O": O, "B": B, "I": I}
    return torch.tensor([[code[c] for c in row] for row in rows])


def test_decoder_span_f1_is_the_faina_overlap_score():
    gold = tags("BIIOO", "OOBOO").unsqueeze(0)  # decoder 0: span 1-3; decoder 1: span 3
    predicted = tags("OBIOO", "OOOOO").unsqueeze(0)  # decoder 0: span 2-3 inside the gold span
    f1 = decoder_span_f1(predicted, gold)
    # decoder 0: P = (2/2)/1 = 1, R = (2/3)/1 → F1 = 0.8; decoder 1 predicts nothing → 0
    assert f1.tolist() == pytest.approx([0.8, 0.0])


def test_tuned_o_bias_fixes_an_over_predicting_decoder():
    crf = BatchedBIOCRF(2)
    words = 6
    gold = torch.zeros(1, 2, words, dtype=torch.long)
    gold[0, 0, 1], gold[0, 0, 2] = B, I  # decoder 0: one span, words 2-3
    gold[0, 1, 4] = B  # decoder 1: one span, word 5
    emissions = torch.zeros(1, 2, words, 3)
    emissions[0, 0, :, B] = 1.0  # decoder 0 opens a span at every word
    emissions[0, 0, 1, B], emissions[0, 0, 2, I] = 3.0, 3.0
    emissions[0, 1, :, O] = 1.0  # decoder 1 is right already
    emissions[0, 1, 4, B] = 2.0
    mask = torch.ones(1, words, dtype=torch.bool)
    before = decoder_span_f1(crf.viterbi(emissions, mask), gold)
    bias = tune_o_bias(crf, [(emissions, gold, mask)], min_spans=1)
    assert bias[0] > 0 and before[0] < 1.0
    shifted = emissions.clone()
    shifted[..., O] += bias.view(1, 2, 1)
    assert decoder_span_f1(crf.viterbi(shifted, mask), gold).tolist() == pytest.approx([1.0, 1.0])
    assert bias[1] == 0.0  # already perfect: the tie goes to no bias
    # too few gold spans: no bias, whatever dev says
    assert tune_o_bias(crf, [(emissions, gold, mask)], min_spans=2).tolist() == [0.0, 0.0]


def test_mvmd_o_bias_is_an_initial_bias_and_the_decision_rule_its_own_setting(tiny_bert, batch):
    initial = MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, o_bias=2.0)
    assert not initial.tuned and initial.decoders.projection.bias.view(4, 3)[:, O].min() > 1.0
    tuned = MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, decision={"tuned": True})
    assert tuned.tuned and tuned.decoders.projection.bias.view(4, 3)[:, O].abs().max() < 1.0
    assert tuned.decision.min_evidence == 30 and torch.equal(tuned.decision_o_bias, torch.zeros(4))
    for wrong in ("tuned", "auto"):  # the tuned rule was o_bias="tuned" in earlier releases: say where it went
        with pytest.raises(ValueError, match="initial O bias, a number .*decision.tuned=true"):
            MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, o_bias=wrong)
    with pytest.raises(ValueError, match="decision.scope"):
        MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, decision={"scope": "everyone"})
    # a fixed decision O bias is a rule of its own: in the buffer from the start, moving every decode
    fixed = MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, decision={"fixed": 100.0})
    fixed.eval()
    with torch.no_grad():
        assert torch.equal(fixed.decision_o_bias, torch.full((4,), 100.0)) and int(fixed(batch).sum()) == 0
    tuned.eval()
    with torch.no_grad():
        tuned.decision_o_bias.fill_(100.0)  # an enormous O bias silences every decoder
        assert int(tuned(batch).sum()) == 0


def test_mvml_ensemble_thresholds_the_probabilities_it_reports(tiny_bert, batch):
    members = [mvml(tiny_bert, seed) for seed in (1, 2, 3)]
    for member, threshold in zip(members, (0.45, 0.5, 0.55)):
        member.thresholds.fill_(threshold)
    combined = ensemble(members)
    with torch.no_grad():
        out = combined.predict_step(batch, 0)
        mean = torch.stack([torch.sigmoid(m(batch)) for m in members]).mean(0)
    assert torch.allclose(out["probabilities"], mean, atol=1e-7)
    assert torch.allclose(combined.thresholds, torch.full((2, 2), 0.5))  # the members' thresholds averaged ...
    assert torch.equal(out["predicted"], out["probabilities"] >= combined.thresholds)  # ... on the mean probability


def clear_mvmd(tiny_bert, seed: int) -> MVMD:
    """Emissions that do not depend on the words: decoders 0 and 2 want B everywhere, 1 and 3 want O."""
    model = mvmd(tiny_bert, seed)
    with torch.no_grad():
        model.decoders.projection.weight.zero_()
        bias = model.decoders.projection.bias.view(4, 3)
        bias.zero_()
        bias[0::2, B] = 8.0
        bias[1::2, O] = 8.0
    return model


def test_mvmd_ensemble_reports_the_marginals_of_the_crf_it_decodes(tiny_bert, batch):
    members = [mvmd(tiny_bert, seed) for seed in (1, 2, 3)]
    combined = ensemble(members)
    mask = batch["word_mask"]
    with torch.no_grad():
        out = combined.predict_step(batch, 0)
        mean = torch.stack([m.emissions(batch) for m in members]).mean(0)
        expected = combined.crf.marginals(mean, mask)
    assert torch.allclose(out["inside"], expected[..., B] + expected[..., I], atol=1e-6)
    assert out["inside"][~mask[:, None, :].expand_as(out["inside"])].eq(0).all()
    clear = ensemble([clear_mvmd(tiny_bert, seed) for seed in (1, 2, 3)])
    with torch.no_grad():
        out = clear.predict_step(batch, 0)
    real = mask[:, None, :].expand_as(out["inside"])
    assert ((out["inside"] > 0.5) == (out["tags"] != O))[real].all()
    assert (out["tags"][:, 0::2][real[:, 0::2]] == B).all() and (out["inside"][:, 1::2] < 0.01).all()


def test_a_tuned_o_bias_moves_the_decoded_tags_not_the_probabilities(tiny_bert, batch):
    model = mvmd(tiny_bert, 0, decision={"tuned": True})
    with torch.no_grad():
        before = model.predict_step(batch, 0)
        model.decision_o_bias.fill_(100.0)
        after = model.predict_step(batch, 0)
    assert int(after["tags"].sum()) == 0
    assert torch.equal(before["inside"], after["inside"])

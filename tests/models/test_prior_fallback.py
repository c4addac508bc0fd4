"""The prior fallback of a calibration (``models/prior_fallback.py``): a label whose gold is random falls back to its
prior (its test cross-entropy the prior's), a learned label keeps its calibration, the cross-fitted dev loss never
exceeds the prior's, hard decisions never move, and MVML / MVMD keep, save, load (older state without the buffers
included) and ensemble the mixture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save

from common.paired_difference import paired_difference
from helpers.random_crf import random_crf
from models import calibration
from models.calibration import PostCalibrationSettings, SpanCalibrationSettings
from models.crf import NUM_TAGS
from models.encoder import ChunkedEncoder
from models.ensemble import ensemble
from models.mvmd import MVMD
from models.mvml import MVML
from models.prior_fallback import evidence, fit_post_fallback, fit_span_fallback, mixed, mixture_weight
from models.weights_file import load_weights

LABELS = ["Doubt", "Slogan"]
RANDOM_SHARE = 0.15


def cross_entropy(p: torch.Tensor, t: torch.Tensor) -> float:
    p = p.double().clamp(1e-12, 1 - 1e-12)
    return float(-(t * p.log() + (1 - t) * (1 - p).log()).mean())


def post_dev(posts: int, views: int = 1, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits ``[N, V, 2]`` of a confident model (spread 3) and 0/1 gold: label 0 drawn from ``sigmoid(z / 2)`` (a
    learnable label, over-confident by T = 2), label 1 drawn at ``RANDOM_SHARE`` whatever the logit (unlearnable)."""
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(posts, views, 2, generator=generator) * 3
    learned = torch.bernoulli(torch.sigmoid(logits[..., 0] / 2), generator=generator)
    random = torch.bernoulli(torch.full((posts, views), RANDOM_SHARE), generator=generator)
    return logits, torch.stack([learned, random], dim=-1)


@pytest.mark.parametrize("method", ["temperature", "platt"])
def test_a_random_label_falls_back_to_its_prior_and_a_learned_label_keeps_its_calibration(method):
    logits, gold = post_dev(3000)
    prior = torch.tensor([[0.5, RANDOM_SHARE]])  # the training part's shares (label 0: symmetric logits)
    settings = PostCalibrationSettings(method=method, fallback="prior")
    weight, kept_prior, info = fit_post_fallback(logits, gold, None, settings, prior)
    assert float(weight[0, 0]) > 0.95 and float(weight[0, 1]) < 0.1
    assert torch.equal(kept_prior, prior)
    losses = info["cross_fitted_log_loss"]  # w = 0 is a candidate: never above the prior on dev
    assert losses["mixed"] <= min(losses["prior"], losses["calibrated"]) + 1e-9
    assert info["towards_prior"] == 1
    # on new posts: the random label's cross-entropy is the prior's (the 0.002), the learned one unchanged
    from models.calibration import apply_post_calibration, fit_post_calibration

    scale, shift, _ = fit_post_calibration(logits, gold, None, settings)
    test_logits, test_gold = post_dev(20000, seed=1)
    calibrated = apply_post_calibration(test_logits, scale, shift)
    reported = mixed(calibrated, weight, prior)
    prior_loss = cross_entropy(torch.full((20000,), RANDOM_SHARE), test_gold[:, 0, 1])
    assert abs(cross_entropy(reported[:, 0, 1], test_gold[:, 0, 1]) - prior_loss) < 0.002
    assert (
        abs(
            cross_entropy(reported[:, 0, 0], test_gold[:, 0, 0])
            - cross_entropy(calibrated[:, 0, 0], test_gold[:, 0, 0])
        )
        < 0.002
    )


def test_the_mixture_weight_is_one_for_perfect_probabilities_zero_for_noise_and_one_without_items():
    generator = torch.Generator().manual_seed(2)
    q = torch.rand(500, 3, generator=generator).clamp(0.05, 0.95)
    targets = torch.stack([q[:, 0], torch.full((500,), 0.3), q[:, 2]], dim=1)  # column 1: every item at the prior
    weight = torch.ones(500, 3)
    weight[:, 2] = 0  # no item
    w = mixture_weight(q, targets, weight, torch.tensor([0.5, 0.3, 0.5]))
    assert w.tolist() == [1.0, 0.0, 1.0]
    # twice as sure as the truth around the prior: the best mixture halves the distance again
    truth = 0.25 + q / 2
    between = mixture_weight(0.5 + 2 * (truth - 0.5), truth, torch.ones(500, 3), torch.tensor(0.5))
    assert between.tolist() == pytest.approx([0.5] * 3, abs=0.03)


def span_dev(crf, posts=60, words=12, views=40, seed=5) -> tuple[list[dict], float]:
    """Dev outputs of a one-view decoder set of two labels, gold of ``views`` annotators: decoder 0's tags drawn
    token by token from the CRF's marginals (learnable), decoder 1's at ``RANDOM_SHARE`` (unlearnable); the share
    of decoder 0's inside tokens (its prior)."""
    generator = torch.Generator().manual_seed(seed)
    emissions = torch.randn(posts, 2, words, NUM_TAGS, generator=generator) * 2
    mask = torch.ones(posts, words, dtype=torch.bool)
    mask[::3, words - 4 :] = False
    inside = crf.inside_probabilities(emissions, mask)
    drawn = []
    for _ in range(views):
        learned = torch.bernoulli(inside[:, 0], generator=generator)
        random = torch.bernoulli(torch.full_like(inside[:, 1], RANDOM_SHARE), generator=generator)
        drawn.append(torch.stack([learned, random], dim=1) * mask[:, None, :])
    gold = torch.stack(drawn, dim=1).reshape(posts, views * 2, words).long()  # view-major, tag 1 (B) inside
    outputs = [
        {"emissions": emissions[i : i + 16], "word_mask": mask[i : i + 16], "gold": gold[i : i + 16]}
        for i in range(0, posts, 16)
    ]
    share = float(gold.reshape(posts, views, 2, words)[:, :, 0].float().mean(1)[mask].mean())
    return outputs, share


def test_a_span_decoder_with_random_gold_falls_back_to_its_token_prior():
    crf = random_crf(2)
    outputs, share = span_dev(crf)
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0, fallback="prior", fallback_folds=4)
    weight, prior, info = fit_span_fallback(crf, outputs, 1, 2, settings, torch.tensor([[share, RANDOM_SHARE]]))
    assert float(weight[0]) > 0.9 and float(weight[1]) < 0.1
    assert prior.tolist() == pytest.approx([share, RANDOM_SHARE])
    losses = info["cross_fitted_log_loss"]
    assert losses["mixed"] <= min(losses["prior"], losses["calibrated"]) + 1e-9


def test_cross_fitted_parts_started_at_the_whole_dev_scale_give_the_weights_of_parts_started_at_one(monkeypatch):
    crf = random_crf(2)
    outputs, share = span_dev(crf)
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0, fallback="prior", fallback_folds=4)
    prior = torch.tensor([[share, RANDOM_SHARE]])
    warm, _, _ = fit_span_fallback(crf, outputs, 1, 2, settings, prior)
    starts = []
    newton = calibration._newton_minimise

    def from_one(losses, fit_own, start=None):
        starts.append(start)
        return newton(losses, fit_own)

    monkeypatch.setattr(calibration, "_newton_minimise", from_one)
    cold, _, _ = fit_span_fallback(crf, outputs, 1, 2, settings, prior)
    assert sum(start is not None for start in starts) == 4  # each held-out part was given the whole dev's scale
    assert warm.tolist() == pytest.approx(cold.tolist(), abs=1e-4)


def test_a_margin_moves_only_the_heads_with_clear_dev_evidence_and_no_margin_is_the_fitted_weight():
    logits, gold = post_dev(3000)
    prior = torch.tensor([[0.5, RANDOM_SHARE]])

    def weights(margin: float) -> torch.Tensor:
        settings = PostCalibrationSettings(method="temperature", fallback="prior", fallback_margin=margin)
        return fit_post_fallback(logits, gold, None, settings, prior)[0]

    fitted = fit_post_fallback(
        logits, gold, None, PostCalibrationSettings(method="temperature", fallback="prior"), prior
    )
    assert torch.equal(weights(0.0), fitted[0])
    # the random label's dev evidence is far beyond 2 standard errors on 3,000 posts: it still falls back
    assert torch.equal(weights(2.0), fitted[0]) and float(fitted[0][0, 1]) < 0.1
    assert torch.equal(weights(100.0), torch.ones(1, 2))  # no head has that much: every one keeps its calibration
    beyond = PostCalibrationSettings(method="temperature", fallback="prior", fallback_margin=100.0)
    info = fit_post_fallback(logits, gold, None, beyond, prior)[2]
    moved = int((fitted[0] < 1).sum())  # what the fitted weights would have moved, the margin kept
    assert info["kept_by_margin"] == moved >= 1 and info["towards_prior"] == 0
    assert len(info["fallback_evidence"]) == 2 and 2.0 < info["fallback_evidence"][1] < 100.0
    assert "fallback_evidence" not in fitted[2]  # no margin, nothing to report
    # on 40 dev posts the learnable label's cross-fitted weight drifts from 1 on noise alone (0.85); one standard error
    # of margin keeps its calibration, while the random label, clear of the noise, still falls back
    few = PostCalibrationSettings(method="temperature", fallback="prior", fallback_margin=1.0)
    small_logits, small_gold = post_dev(40, seed=3)
    unmarked = fit_post_fallback(small_logits, small_gold, None, few.model_copy(update={"fallback_margin": 0.0}), prior)
    marked = fit_post_fallback(small_logits, small_gold, None, few, prior)[0]
    assert float(unmarked[0][0, 0]) < 0.9 and float(marked[0, 0]) == 1.0
    assert float(marked[0, 1]) == float(unmarked[0][0, 1]) < 0.3


def test_the_evidence_is_the_paired_gain_over_its_standard_error_with_a_posts_tokens_counted_once():
    generator = torch.Generator().manual_seed(4)
    q = torch.rand(12, 2, generator=generator).clamp(0.05, 0.95)
    targets = torch.bernoulli(torch.full((12, 2), 0.3), generator=generator)
    weight = torch.ones(12, 2)
    weight[0, 0] = 0  # an item no one annotated is left out
    prior, mix = torch.tensor([0.3, 0.3]), torch.tensor([0.4, 1.0])
    posts = torch.arange(12) // 3  # four posts of three tokens

    def loss(p):
        p = p.double()
        terms = -(targets * p.log() + (1 - targets) * (1 - p).log())
        return torch.where(weight > 0, terms, torch.nan).numpy()

    mean, error = paired_difference(loss(q), loss(mixed(q.double(), mix.double(), prior.double())), posts.numpy())
    z = evidence(q, targets, weight, prior, mix, posts, labels=2)
    assert float(z[0]) == pytest.approx(mean[0] / error[0]) and float(z[1]) == 0.0  # w = 1: no difference
    assert abs(float(evidence(q, targets, weight, prior, mix, torch.arange(12), 2)[0])) > abs(float(z[0]))
    assert float(evidence(q, targets, weight, prior, mix, torch.zeros(12, dtype=torch.long), 2)[0]) == 0.0  # one post
    # the same columns as two views of one label: judged together, the gains summed item by item
    pooled = evidence(q, targets, weight, prior, mix, posts, labels=1)
    gains = np.nansum(loss(q) - loss(mixed(q.double(), mix.double(), prior.double())), axis=1, keepdims=True)
    together, spread = paired_difference(gains, np.zeros_like(gains), posts.numpy())
    assert pooled.tolist() == pytest.approx([together[0] / spread[0]] * 2)


def test_a_span_margin_keeps_every_decoder_without_that_much_evidence():
    crf = random_crf(2)
    outputs, share = span_dev(crf)
    prior = torch.tensor([[share, RANDOM_SHARE]])
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0, fallback="prior", fallback_folds=4)
    fitted = fit_span_fallback(crf, outputs, 1, 2, settings, prior)[0]
    clear = fit_span_fallback(crf, outputs, 1, 2, settings.model_copy(update={"fallback_margin": 2.0}), prior)[0]
    beyond, _, info = fit_span_fallback(
        crf, outputs, 1, 2, settings.model_copy(update={"fallback_margin": 100.0}), prior
    )
    # 60 posts of 40 annotators: the random decoder is clear of the noise at 2 standard errors and falls back; the
    # learnable one, whose fitted weight is a hair below 1, keeps its calibration exactly
    assert float(fitted[1]) < 0.1 and float(clear[1]) == float(fitted[1])
    assert float(fitted[0]) < 1.0 and float(clear[0]) == 1.0
    assert torch.equal(beyond, torch.ones(2)) and info["kept_by_margin"] == 2
    assert len(info["fallback_evidence"]) == 2 and info["fallback_evidence"][1] > 2.0


@pytest.fixture
def post_batch(tiny_bert, word_batch):
    tokenizer = ChunkedEncoder(tiny_bert, max_length=16).tokenizer
    return word_batch(tokenizer, ["il gatto e il cane", "ciao mondo gatto mare"], [7, 9])


def reloaded(model, fresh, folder: Path, drop=()):
    """``fresh`` loaded with ``model``'s weights through a safetensors file in ``folder`` (``drop``: buffers left
    out, as in a folder saved before they existed)."""
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k not in drop}
    path = folder / f"model-{len(drop)}.safetensors"
    path.write_bytes(save(state))
    load_weights(path, fresh, "export the model again")
    return fresh.eval()


def test_mvml_mixes_with_its_prior_keeps_it_through_a_file_and_decides_as_before(tiny_bert, post_batch, tmp_path):
    def built():
        torch.manual_seed(0)
        encoder = ChunkedEncoder(tiny_bert, max_length=16)
        return MVML(encoder, num_views=2, labels=LABELS, decision={"fixed": 0.5}).eval()

    model = built()
    logits, gold = post_dev(2000, views=2)
    outputs = [{"logits": logits[i : i + 500], "gold": gold[i : i + 500]} for i in range(0, 2000, 500)]
    settings = PostCalibrationSettings(method="temperature", fallback="prior")
    with pytest.raises(ValueError, match="prior"):
        model.fit_calibration(outputs, settings)
    prior = torch.tensor([[0.5, RANDOM_SHARE], [0.5, RANDOM_SHARE + 0.01]])
    before = model.predict_outputs(post_batch)
    values, info = model.fit_calibration(outputs, settings, prior)
    assert values.shape == (4, 2, 2) and torch.equal(values[3], prior)
    assert bool((values[2][:, 0] > 0.9).all()) and bool((values[2][:, 1] < 0.1).all())
    model.keep_calibration(values)
    report = model.calibration_report(values, info)
    assert set(report["prior_weight"]) == {"a1", "a2"} and report["prior"]["a2"]["Slogan"] == RANDOM_SHARE + 0.01
    margin = settings.model_copy(update={"fallback_margin": 1.0})
    marked = model.calibration_report(*model.fit_calibration(outputs, margin, prior))
    assert list(marked["fallback_evidence"]) == LABELS and marked["fallback_evidence"]["Slogan"] > 1.0
    after = model.predict_outputs(post_batch)
    assert torch.equal(after["predicted"], before["predicted"]) and torch.equal(
        after["raw_probabilities"], before["probabilities"]
    )
    assert torch.allclose(after["probabilities"], MVML.calibrated_with(model(post_batch), values))
    model.keep_calibration(torch.stack([values[0], values[1], torch.zeros(2, 2), prior]))  # w = 0: the prior itself
    assert torch.allclose(model.predict_outputs(post_batch)["probabilities"], prior.expand(2, -1, -1))
    # the mixture travels with the weights; a file without its buffers (an older folder) loads unmixed
    model.keep_calibration(values)
    again = reloaded(model, built(), tmp_path)
    assert torch.equal(again.calibration_values(), model.calibration_values())
    assert torch.equal(again.predict_outputs(post_batch)["probabilities"], after["probabilities"])
    older = reloaded(model, built(), tmp_path, drop=("calibration_weight", "calibration_prior"))
    assert torch.equal(older.calibration_weight, torch.ones(2, 2)) and torch.equal(
        older.calibration_prior, torch.zeros(2, 2)
    )
    unmixed = MVML.calibrated_with(model(post_batch), torch.stack([values[0], values[1], torch.ones(2, 2), prior]))
    assert torch.allclose(older.predict_outputs(post_batch)["probabilities"], unmixed)
    pair = ensemble([model, again]).predict_outputs(post_batch)  # each member's mixture, averaged
    assert torch.allclose(pair["probabilities"], after["probabilities"]) and torch.equal(
        pair["predicted"], after["predicted"]
    )


def test_mvmd_mixes_its_tempered_marginals_with_its_prior_and_decodes_as_before(tiny_bert, post_batch, tmp_path):
    def built():
        torch.manual_seed(0)
        encoder = ChunkedEncoder(tiny_bert, max_length=16)
        return MVMD(encoder, num_views=1, labels=LABELS).eval()

    model = built()
    model.decoders.crf.load_state_dict(random_crf(2).state_dict())
    outputs, share = span_dev(model.crf)
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0, fallback="prior")
    before = model.predict_outputs(post_batch)
    values, info = model.fit_calibration(outputs, settings, torch.tensor([[share, RANDOM_SHARE]]))
    assert values.shape == (3, 2) and float(values[1, 0]) > 0.9 and float(values[1, 1]) < 0.1
    report = model.calibration_report(values, info)
    assert report["prior"] == {"a1": {"Doubt": round(share, 4), "Slogan": RANDOM_SHARE}}
    assert info["fallback"] == "prior" and info["cross_fitted_log_loss"]["mixed"] is not None
    model.keep_calibration(values)
    after = model.predict_outputs(post_batch)
    mask = post_batch["word_mask"]
    assert torch.equal(after["tags"], before["tags"]) and torch.equal(after["raw_inside"], before["inside"])
    tempered = model.crf.inside_probabilities(model.emissions(post_batch), mask, values[0])
    expected = (values[1][None, :, None] * tempered + (1 - values[1][None, :, None]) * values[2][None, :, None]) * mask[
        :, None, :
    ]
    assert torch.allclose(after["inside"], expected, atol=1e-6)
    assert torch.allclose(
        model.apply_calibration([{**before, **model.dev_outputs(post_batch)}], values)[0]["inside"], expected, atol=1e-6
    )
    # the ensemble applies each member's mixture to the marginals of its tempered CRFs: one member is itself
    alone = ensemble([model]).predict_outputs(post_batch)
    assert torch.allclose(alone["inside"], after["inside"], atol=1e-6) and torch.equal(alone["tags"], after["tags"])
    again = reloaded(model, built(), tmp_path)
    assert torch.equal(again.calibration_values(), model.calibration_values())
    older = reloaded(model, built(), tmp_path, drop=("calibration_weight", "calibration_prior"))
    assert torch.equal(older.calibration_weight, torch.ones(2))
    assert torch.allclose(older.predict_outputs(post_batch)["inside"], tempered * mask[:, None, :], atol=1e-6)

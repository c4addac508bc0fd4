"""Post-hoc calibration (``models/calibration.py``): known temperatures are recovered, the CRF's path never moves,
the evidence fallback, the one-view targets, and MVML / MVMD / their ensembles reporting calibrated probabilities
beside the raw ones they decide on."""

from __future__ import annotations

import math

import pytest
import torch

import models.calibration as calibration_module
from helpers.random_crf import random_crf
from models.calibration import (
    PostCalibrationSettings,
    SpanCalibrationSettings,
    apply_post_calibration,
    fit_post_calibration,
    fit_span_calibration,
    view_targets,
)
from models.crf import NUM_TAGS, BatchedBIOCRF
from models.encoder import ChunkedEncoder
from models.ensemble import ensemble
from models.mvmd import MVMD
from models.mvml import MVML

LABELS = ["Doubt", "Slogan"]


def sampled_post_dev(temperatures, shift=0.0, posts=20000, seed=0):
    """Logits ``z`` and 0/1 labels drawn from ``sigmoid(z / T + shift)``: a model whose true temperature is T."""
    generator = torch.Generator().manual_seed(seed)
    temperatures = torch.tensor(temperatures)
    logits = torch.randn(posts, 1, len(temperatures), generator=generator) * 3
    truth = torch.sigmoid(logits / temperatures + shift)
    return logits, torch.bernoulli(truth, generator=generator)


def test_a_known_temperature_is_recovered_per_label():
    logits, gold = sampled_post_dev([2.0, 0.5])
    scale, shift, info = fit_post_calibration(logits, gold, None, PostCalibrationSettings(method="temperature"))
    assert (1 / scale[0]).tolist() == pytest.approx([2.0, 0.5], rel=0.06)
    assert shift.abs().max() == 0
    assert info["dev_log_loss"]["after"] < info["dev_log_loss"]["before"]


def test_platt_recovers_a_slope_and_an_intercept_and_shared_scope_fits_one_temperature():
    logits, gold = sampled_post_dev([2.0, 2.0], shift=-1.0)
    scale, shift, _ = fit_post_calibration(logits, gold, None, PostCalibrationSettings(method="platt"))
    assert scale[0].tolist() == pytest.approx([0.5, 0.5], rel=0.06)
    assert shift[0].tolist() == pytest.approx([-1.0, -1.0], abs=0.08)
    logits, gold = sampled_post_dev([2.0, 0.5])
    shared, _, _ = fit_post_calibration(
        logits, gold, None, PostCalibrationSettings(method="temperature", scope="shared")
    )
    assert shared[0, 0] == shared[0, 1] and 0.5 < float(1 / shared[0, 0]) < 2.0


def test_labels_with_too_little_dev_evidence_take_the_shared_fit_and_none_fits_nothing():
    logits, gold = sampled_post_dev([2.0, 0.5], posts=4000)
    gold[:, :, 1] = 0
    gold[:3, :, 1] = 1  # three positives: below min_evidence
    own = PostCalibrationSettings(method="temperature", min_evidence=5)
    scale, _, info = fit_post_calibration(logits, gold, None, own)
    shared, _, _ = fit_post_calibration(logits, gold, None, own.model_copy(update={"scope": "shared"}))
    assert scale[0, 1] == shared[0, 0] and scale[0, 0] != shared[0, 0] and info["shared_for"] == 1
    scale, shift, info = fit_post_calibration(logits, gold, None, PostCalibrationSettings())
    assert torch.equal(scale, torch.ones(1, 2)) and torch.equal(shift, torch.zeros(1, 2)) and info == {}


def test_a_one_view_model_meets_the_share_of_the_annotated_views():
    gold = torch.tensor([[[1.0], [0.0], [1.0]], [[1.0], [1.0], [0.0]]])  # [N=2, V=3, C=1]
    annotated = torch.tensor([[True, True, True], [True, False, False]])
    targets, weight = view_targets(gold, annotated, model_views=1)
    assert targets[:, 0, 0].tolist() == pytest.approx([2 / 3, 1.0]) and weight.flatten().tolist() == [1.0, 1.0]
    targets, weight = view_targets(gold, annotated, model_views=3)  # a head per view: each its own annotator
    assert torch.equal(targets, gold * weight) and weight[1, :, 0].tolist() == [1.0, 0.0, 0.0]


def span_dev_outputs(crf, true_scale, posts=48, words=10, seed=5):
    """Dev outputs whose gold is drawn from the CRF tempered by ``true_scale``: per post three annotator views, each a
    tag sequence sampled token by token from the tempered marginals (B where the token is inside, else O), so the
    share of the views inside a token estimates the tempered marginal."""
    generator = torch.Generator().manual_seed(seed)
    decoders = len(true_scale)
    emissions = torch.randn(posts, decoders, words, NUM_TAGS, generator=generator) * 2
    mask = torch.ones(posts, words, dtype=torch.bool)
    mask[::3, words - 3 :] = False  # some shorter posts
    inside = crf.inside_probabilities(emissions, mask, torch.tensor(true_scale))
    views = torch.stack([torch.bernoulli(inside, generator=generator) for _ in range(200)], dim=1)  # [N, V, D, W]
    gold = views.reshape(posts, -1, words).long()  # 200 views of one decoder set: tags 0 (O) / 1 (B)
    return [
        {"emissions": emissions[i : i + 16], "word_mask": mask[i : i + 16], "gold": gold[i : i + 16]}
        for i in range(0, posts, 16)
    ]


def test_a_known_crf_temperature_is_recovered_per_decoder():
    crf = random_crf(2)
    outputs = span_dev_outputs(crf, [0.5, 2.0])
    scale, info = fit_span_calibration(
        crf, outputs, 1, 2, SpanCalibrationSettings(method="temperature", min_evidence=0)
    )
    assert scale.tolist() == pytest.approx([0.5, 2.0], rel=0.1)
    assert info["dev_log_loss"]["after"] < info["dev_log_loss"]["before"]
    shared, _ = fit_span_calibration(crf, outputs, 1, 2, SpanCalibrationSettings(method="temperature", scope="shared"))
    assert shared[0] == shared[1] and 0.5 < float(shared[0]) < 2.0


@pytest.mark.parametrize("scope", ["own", "shared"])
def test_a_dev_set_read_in_several_chunks_fits_what_one_chunk_fits(monkeypatch, scope):
    # a real corpus's dev set exceeds one chunk's word budget; the fit must see every chunk (and not fail at
    # the second chunk's backward pass, as a scale computed once outside the chunk loop did)
    crf = random_crf(2)
    outputs = span_dev_outputs(crf, [0.5, 2.0])
    settings = SpanCalibrationSettings(method="temperature", scope=scope, min_evidence=0)
    whole, whole_info = fit_span_calibration(crf, outputs, 1, 2, settings)
    chunks = calibration_module._chunks
    seen = []

    def small_chunks(mask, budget=1 << 15):
        parts = list(chunks(mask, budget=50))
        seen.append(len(parts))
        return iter(parts)

    monkeypatch.setattr(calibration_module, "_chunks", small_chunks)
    chunked, chunked_info = fit_span_calibration(crf, outputs, 1, 2, settings)
    assert min(seen) > 3
    assert chunked.tolist() == pytest.approx(whole.tolist(), rel=1e-4)
    assert chunked_info["dev_log_loss"]["after"] == pytest.approx(whole_info["dev_log_loss"]["after"], rel=1e-6)


def test_own_scales_alone_skip_the_shared_search_and_still_report_the_loss_at_scale_one(monkeypatch):
    crf = random_crf(2)
    outputs = span_dev_outputs(crf, [0.5, 2.0])
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0)  # both decoders fit their own
    evaluated = []
    batched = calibration_module.span_losses_at

    def counted(*args):
        losses = batched(*args)

        def count(decoders, scales):
            evaluated.append(len(decoders))
            return losses(decoders, scales)

        return count

    monkeypatch.setattr(calibration_module, "span_losses_at", counted)
    alone, info = fit_span_calibration(crf, outputs, 1, 2, settings)
    assert max(evaluated[:-1]) <= 3 * 2  # x - h, x, x + h of each own scale, no row of a shared one
    fit_own = torch.ones(2, dtype=torch.bool)
    losses = calibration_module.span_losses_at(
        calibration_module.frozen_copy(crf), *calibration_module.span_dev(outputs, 1, 2)
    )
    own, _, at_one = calibration_module._newton_minimise(losses, fit_own)
    assert torch.allclose(alone.double(), own.exp(), rtol=1e-6)
    assert info["dev_log_loss"]["before"] == pytest.approx(float(at_one.mean()), rel=1e-6)


def test_a_search_pushing_against_a_bound_of_the_scale_settles_there_at_once():
    """A decoder whose loss keeps falling past a bound of ``SCALE_RANGE`` (a label dev says nothing of flattens
    towards T = 20) settles as soon as a step leaves it where it stands, not after every Newton step allowed."""
    low, high = (math.log(bound) for bound in calibration_module.SCALE_RANGE)
    passes = []

    def quadratic(optimum: list[float]):
        """Each decoder's loss, lowest at its own log-scale ``optimum``; counts the batched passes."""
        centre = torch.tensor(optimum, dtype=torch.float64)

        def losses(decoders: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
            passes.append(len(decoders))
            return (scales.log() - centre[decoders]) ** 2

        return losses

    every = torch.tensor([True, True, True])
    own, _, _ = calibration_module._newton_minimise(quadratic([low - 2.0, 0.4, high + 3.0]), every)
    assert own.tolist() == pytest.approx([low, 0.4, high], abs=1e-9)  # below, inside and above the range
    assert len(passes) <= 4  # to the bound (steps of at most MAX_STEP: e^-3 from 1 in 3), then one that stays
    # the shared scale alone (no decoder fits its own), the summed loss lowest below the range: the same
    passes.clear()
    _, shared, _ = calibration_module._newton_minimise(quadratic([low - 1.0, low - 2.0, low]), ~every)
    assert float(shared) == pytest.approx(low, abs=1e-9) and len(passes) <= 4


def test_a_scale_refitted_from_a_near_start_is_the_scale_fitted_from_one():
    crf = random_crf(2)
    outputs = span_dev_outputs(crf, [0.5, 2.0])
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0)
    frozen = calibration_module.frozen_copy(crf)
    tensors = calibration_module.span_dev(outputs, 1, 2)
    whole, _ = calibration_module.fit_span_scale(frozen, *tensors, settings)
    part = [tensor[: len(tensor) * 3 // 4] for tensor in tensors]  # posts stay sorted by length
    from_one, _ = calibration_module.fit_span_scale(frozen, *part, settings)
    from_whole = calibration_module.span_scale_from(frozen, *part, settings, whole)
    assert not torch.allclose(whole, from_one, rtol=1e-3)  # the part has a scale of its own
    assert from_whole.tolist() == pytest.approx(from_one.tolist(), rel=1e-3)


def test_tempering_moves_the_marginals_not_the_viterbi_path():
    crf = random_crf(4)
    emissions, mask = torch.randn(3, 4, 6, NUM_TAGS), torch.ones(3, 6, dtype=torch.bool)
    scale = torch.tensor([0.3, 1.0, 2.5, 7.0])
    raw, tempered = crf.inside_probabilities(emissions, mask), crf.inside_probabilities(emissions, mask, scale)
    assert torch.allclose(raw[:, 1], tempered[:, 1]) and not torch.allclose(raw[:, 0], tempered[:, 0])
    scaled = BatchedBIOCRF(4)
    with torch.no_grad():
        for name in ("transitions", "start_scores", "end_scores"):
            getattr(scaled, name).copy_(getattr(crf, name) * scale.view(-1, *[1] * (getattr(crf, name).dim() - 1)))
    # the tempered CRF is the CRF of the scaled scores, whose most probable path is the untempered one's
    assert torch.allclose(
        scaled.inside_probabilities(emissions * scale[None, :, None, None], mask), tempered, atol=1e-6
    )
    assert torch.equal(scaled.viterbi(emissions * scale[None, :, None, None], mask), crf.viterbi(emissions, mask))


@pytest.fixture
def post_batch(tiny_bert, word_batch):
    tokenizer = ChunkedEncoder(tiny_bert, max_length=16).tokenizer
    batch = word_batch(tokenizer, ["il gatto e il cane", "ciao mondo gatto mare"], [7, 9])
    batch["tags"] = torch.zeros(2, 4, batch["input_ids"].shape[1], dtype=torch.long)
    batch["labels"] = torch.tensor([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]])
    return batch


def test_mvml_reports_calibrated_probabilities_and_decides_on_the_raw_ones(tiny_bert, post_batch):
    torch.manual_seed(0)
    model = MVML(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, decision={"fixed": 0.5}).eval()
    before = model.predict_outputs(post_batch)
    assert "raw_probabilities" not in before  # nothing fitted: the raw ones are what it reports
    model.keep_calibration(torch.stack([torch.full((2, 2), 4.0), torch.zeros(2, 2)]))  # T = 0.25: sharper
    after = model.predict_outputs(post_batch)
    assert torch.equal(after["raw_probabilities"], before["probabilities"])
    assert torch.equal(after["predicted"], before["predicted"])
    logits = model(post_batch)
    assert torch.allclose(
        after["probabilities"], apply_post_calibration(logits, model.calibration_scale, model.calibration_shift)
    )
    assert (after["probabilities"] - 0.5).abs().min() >= (before["probabilities"] - 0.5).abs().min()
    model.use_calibration(False)
    assert torch.equal(model.predict_outputs(post_batch)["probabilities"], before["probabilities"])
    model.use_calibration(True)
    pair = ensemble([model, model]).predict_outputs(post_batch)
    assert torch.allclose(pair["probabilities"], after["probabilities"]) and torch.equal(
        pair["predicted"], after["predicted"]
    )


def test_mvmd_fits_keeps_and_reports_its_tempered_crf(tiny_bert, post_batch):
    torch.manual_seed(0)
    model = MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS).eval()
    before = model.predict_outputs(post_batch, raw=True)
    settings = SpanCalibrationSettings(method="temperature", min_evidence=0)
    values, info = model.fit_calibration([model.dev_outputs(post_batch)], settings)
    assert values.shape == (3, 4) and info["method"] == "temperature"
    assert torch.equal(values[1:], torch.stack([torch.ones(4), torch.zeros(4)]))  # no fallback: weight 1
    model.keep_calibration(torch.stack([torch.tensor([0.5, 1.0, 2.0, 3.0]), torch.ones(4), torch.zeros(4)]))
    after = model.predict_outputs(post_batch, raw=True)
    assert torch.equal(after["tags"], before["tags"]) and torch.equal(after["raw_inside"], before["inside"])
    assert torch.allclose(after["inside"], model.apply_calibration([before], model.calibration_values())[0]["inside"])
    assert not torch.allclose(after["inside"][:, 0], before["inside"][:, 0])
    alone = ensemble([model]).predict_outputs(post_batch)  # one member: its own tempered CRF
    assert torch.allclose(alone["inside"], after["inside"], atol=1e-6) and torch.equal(alone["tags"], after["tags"])
    report = model.calibration_report(model.calibration_values(), info)
    assert report["temperature"]["a1"] == {"Doubt": 2.0, "Slogan": 1.0}

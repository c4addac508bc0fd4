"""The decision-rule settings (``models.decision_rules.DecisionSettings``): one object for MVMD, MVML and the saved
schema, the fixed value and floor of an O-bias rule, and the one message for a setting's former key."""

from __future__ import annotations

import pytest
import torch

from common.errors import UserError
from models.crf import B, BatchedBIOCRF, O
from models.decision_rules import (
    DecisionSettings,
    PostDecisionSettings,
    SpanDecisionSettings,
    SpanDev,
    fit_o_bias,
)
from models.former_settings import moved_decision_key, moved_override
from models.saved_model import MODULE_SETTINGS


def test_one_settings_object_with_each_levels_defaults_and_ranges():
    span, post = SpanDecisionSettings(), PostDecisionSettings()
    assert isinstance(span, DecisionSettings) and isinstance(post, DecisionSettings)
    assert (span.tuned, span.fixed, span.min_evidence, span.floor) == (False, 0.0, 30, None)
    assert (post.tuned, post.fixed, post.min_evidence, post.floor) == (False, 0.7, 3, 0.3)
    # the saved-model schema holds the same objects
    assert MODULE_SETTINGS["MVMD"].model_fields["decision"].annotation is SpanDecisionSettings
    assert MODULE_SETTINGS["MVML"].model_fields["decision"].annotation is PostDecisionSettings
    # a mapping fills the keys it leaves out with the level's defaults; a wrong value names its field
    assert PostDecisionSettings.of({"tuned": True}) == PostDecisionSettings(tuned=True)
    assert SpanDecisionSettings.of(None) == span and SpanDecisionSettings.of(span) is span
    with pytest.raises(ValueError, match=r"decision\.fixed: Input should be less than 1"):
        PostDecisionSettings.of({"fixed": 1.5})  # a threshold is a probability; an O bias may be any number
    assert SpanDecisionSettings.of({"fixed": 1.5}).fixed == 1.5
    with pytest.raises(ValueError, match=r"decision\.scope"):
        SpanDecisionSettings.of({"scope": "everyone"})
    with pytest.raises(ValueError, match=r"decision\.thresholds: Extra inputs"):
        PostDecisionSettings.of({"thresholds": 0.5})
    with pytest.raises(Exception, match="frozen"):
        span.tuned = True


def random_dev(seed: int, posts: int = 10, decoders: int = 4, words: int = 7) -> SpanDev:
    """Emissions that favour gold tags of random spans (one word each), decodable under any O bias."""
    generator = torch.Generator().manual_seed(seed)
    gold = torch.where(torch.rand(posts, decoders, words, generator=generator) < 0.2, B, O)
    emissions = torch.randn(posts, decoders, words, 3, generator=generator)
    emissions.scatter_add_(-1, gold.unsqueeze(-1), torch.full((posts, decoders, words, 1), 1.5))
    return SpanDev(BatchedBIOCRF(decoders), [(emissions, gold, torch.ones(posts, words, dtype=torch.bool))])


def test_a_fixed_o_bias_is_what_decoders_without_evidence_keep_and_what_confirm_falls_back_to():
    dev = random_dev(5)
    no_evidence, _ = fit_o_bias(dev, 2, min_spans=10**6, scope="own", fixed=1.5)
    assert torch.equal(no_evidence, torch.full((4,), 1.5))
    confirmed_nothing, info = fit_o_bias(dev, 2, min_spans=10**6, scope="own", confirm=True, fixed=1.5)
    assert torch.equal(confirmed_nothing, torch.full((4,), 1.5)) and not info["confirmed"]
    # with the default fixed value (0) the rule is the one it always was
    assert torch.equal(fit_o_bias(dev, 2, 0, "own")[0], fit_o_bias(dev, 2, 0, "own", fixed=0.0)[0])


def test_an_o_bias_floor_keeps_every_tuned_bias_at_or_above_it():
    """A decoder that floods dev with spans wants a positive bias, one that misses them a negative one; a floor of 0
    lets only the first move."""
    posts, words = 6, 5
    gold = torch.zeros(posts, 2, words, dtype=torch.long)
    gold[:, 0, 1] = B  # decoder 0 misses this span (its O leans high)
    gold[:, 1, 3] = B  # decoder 1 finds this one and opens a span at every other word too
    emissions = torch.zeros(posts, 2, words, 3)
    emissions[:, 0, :, O] = 2.0
    emissions[:, 0, 1, B] = 1.0
    emissions[:, 1, :, B] = 1.0
    emissions[:, 1, 3, B] = 3.0
    dev = SpanDev(BatchedBIOCRF(2), [(emissions, gold, torch.ones(posts, words, dtype=torch.bool))])
    free, _ = fit_o_bias(dev, 1, min_spans=0, scope="own")
    assert free[0] < 0 and free[1] > 0
    floored, _ = fit_o_bias(dev, 1, min_spans=0, scope="own", floor=0.0)
    assert floored[0] >= 0 and floored[1] == free[1]


@pytest.mark.parametrize(
    "key, value, new",
    [
        ("o_bias", "tuned", "model.module.decision.tuned=true"),
        ("threshold", "tuned", "model.module.decision.tuned=true"),
        ("threshold", "0.5", "model.module.decision.fixed"),
        ("fallback_threshold", "0.6", "model.module.decision.fixed"),
        ("min_dev_spans", "30", "model.module.decision.min_evidence"),
        ("min_dev_positives", "3", "model.module.decision.min_evidence"),
        ("tuning_scope", "shared", "model.module.decision.scope"),
        ("tuning_shrinkage", "20", "model.module.decision.shrinkage"),
        ("tuning_confirm", "true", "model.module.decision.confirm"),
        ("threshold_floor", "0.3", "model.module.decision.floor"),
    ],
)
def test_every_former_decision_key_is_one_message_naming_its_new_key(key, value, new):
    message = moved_decision_key(key, value)
    assert message.startswith(f"model.module.{key}") and new in message
    for prefix in ("", "+", "++", "~"):
        error = moved_override(["task=span-f", f"{prefix}model.module.{key}={value}"])
        assert isinstance(error, UserError) and error.message == message


def test_todays_keys_and_an_initial_o_bias_are_no_moved_settings():
    assert moved_decision_key("o_bias", 2.0) is None and moved_decision_key("head_lr", 0.01) is None
    assert moved_override(["model.module.o_bias=2.0", "model.module.decision.tuned=true", "task=post-f"]) is None
    assert moved_override(["model.module.decision.threshold=0.5"]) is None  # not a former key: Hydra says so


def test_a_tuned_model_can_decide_with_its_fixed_rule_again(tiny_bert):
    """``use_fixed_decision``: the same trained model under its untuned rule (scripts/measure_ensemble.py)."""
    from models.encoder import ChunkedEncoder
    from models.mvmd import MVMD
    from models.mvml import MVML

    labels = ["Doubt", "Slogan"]
    mvml = MVML(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=labels, decision={"tuned": True})
    mvmd = MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=labels, decision={"tuned": True})
    mvml.thresholds.fill_(0.2)
    mvmd.decision_o_bias.fill_(3.0)
    for model in (mvml, mvmd):
        model.use_fixed_decision()
        assert not model.tuned and model.decision.min_evidence == (3 if model is mvml else 30)
    assert torch.equal(mvml.thresholds, torch.full((2, 2), 0.7)) and torch.equal(mvmd.decision_o_bias, torch.zeros(4))

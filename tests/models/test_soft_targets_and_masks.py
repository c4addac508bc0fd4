"""``data.targets=soft`` losses and not-annotated views, against hand-computed values.

MVML soft: BCE of one head against the share of (annotated) views; MVMD soft: the sum over views of each view's CRF
negative log-likelihood of the one decoder set; a view that did not annotate a post changes nothing (the loss with
it masked equals the loss computed without it).
"""

from __future__ import annotations

import functools
import math
import warnings

import lightning as L
import torch

from faina.formats.labels import LabelInventory
from metrics.faina_post import PostMicroScore
from metrics.faina_span import SpanOverlapScore
from models.encoder import ChunkedEncoder
from models.heads import BIODecoders, MultiLabelHead, view_shares
from models.mvmd import MVMD
from models.mvml import MVML

LABELS = ["Doubt", "Slogan"]


def bce(logit: float, target: float) -> float:
    p = 1 / (1 + math.exp(-logit))
    return -(target * math.log(p) + (1 - target) * math.log(1 - p))


def test_mvml_soft_loss_of_one_post_by_hand():
    # one post, three views: Doubt given by a1 and a2, Slogan by a2 only -> shares 2/3 and 1/3
    logits = torch.tensor([[[0.0, math.log(3)]]])  # sigmoid 0.5 and 0.75
    targets = torch.tensor([[[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]])
    # BCE(0.5 vs 2/3) = ln 2; BCE(0.75 vs 1/3) = -(1/3 ln 0.75 + 2/3 ln 0.25) = 1.020090...
    expected = (math.log(2) + (-(1 / 3) * math.log(0.75) - (2 / 3) * math.log(0.25))) / 2
    assert abs(expected - 0.856619) < 1e-6
    assert MultiLabelHead.soft_loss(logits, targets).item() == torch.tensor(expected).float().item()
    # a3 did not annotate the post: the shares are over a1, a2 (1 and 1/2)
    annotated = torch.tensor([[True, True, False]])
    masked = (bce(0.0, 1.0) + bce(math.log(3), 0.5)) / 2
    assert abs(MultiLabelHead.soft_loss(logits, targets, annotated).item() - masked) < 1e-6
    # ... which is the loss of the file without a3
    torch.testing.assert_close(
        MultiLabelHead.soft_loss(logits, targets, annotated), MultiLabelHead.soft_loss(logits, targets[:, :2])
    )


def test_soft_share_leaves_out_posts_no_view_annotated():
    targets = torch.tensor([[[1.0], [0.0]], [[1.0], [1.0]]])
    shares, keep = view_shares(targets, torch.tensor([[True, True], [False, False]]))
    assert shares.tolist() == [[0.5], [0.0]] and keep.tolist() == [True, False]
    logits = torch.tensor([[[0.0]], [[5.0]]])
    # the second post weighs nothing: the loss is the first post's alone
    loss = MultiLabelHead.soft_loss(logits, targets, torch.tensor([[True, True], [False, False]]))
    assert abs(loss.item() - math.log(2)) < 1e-6


def test_mvml_masked_view_is_left_out_of_the_per_view_loss():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 2)
    targets = torch.randint(0, 2, (2, 3, 2)).float()
    annotated = torch.tensor([[True, False, True], [True, True, True]])
    terms = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    kept = torch.cat([terms[0, [0, 2]].flatten(), terms[1].flatten()])  # 10 terms: (post 0, a2) left out
    torch.testing.assert_close(MultiLabelHead.loss(logits, targets, annotated), kept.mean())
    # an all-True mask is the unmasked loss, to the bit
    assert torch.equal(
        MultiLabelHead.loss(logits, targets, torch.ones(2, 3, dtype=torch.bool)), MultiLabelHead.loss(logits, targets)
    )


def _decoders_and_batch(num_decoders: int, views: int):
    torch.manual_seed(1)
    decoders = BIODecoders(hidden_size=6, num_decoders=num_decoders)
    with torch.no_grad():
        decoders.crf.transitions.normal_()
        decoders.crf.start_scores.normal_()
    emissions = decoders.emissions(torch.randn(3, 5, 6))
    tags = torch.randint(0, 2, (3, views * num_decoders, 5))
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], dtype=torch.bool)
    return decoders, emissions, tags, mask


def test_mvmd_soft_loss_is_the_sum_of_each_views_nll():
    decoders, emissions, tags, mask = _decoders_and_batch(num_decoders=2, views=3)
    per_view = [
        decoders.crf.neg_log_likelihood(emissions, tags[:, 2 * v : 2 * v + 2], mask).mean(0).sum() for v in range(3)
    ]
    torch.testing.assert_close(decoders.soft_loss(emissions, tags, mask), sum(per_view))
    weights = torch.tensor([1.0, 0.5, 2.0])
    weighted = per_view[0] + 0.5 * per_view[1] + 2.0 * per_view[2]
    torch.testing.assert_close(decoders.soft_loss(emissions, tags, mask, view_weights=weights), weighted)


def test_mvmd_soft_loss_with_a_masked_view_is_the_loss_without_it():
    decoders, emissions, tags, mask = _decoders_and_batch(num_decoders=2, views=3)
    # a2 did not annotate post 1: its term averages over posts 0 and 2 only
    annotated = torch.tensor([[True, True, True], [True, False, True], [True, True, True]])
    nll = [decoders.crf.neg_log_likelihood(emissions, tags[:, 2 * v : 2 * v + 2], mask) for v in range(3)]
    expected = nll[0].mean(0).sum() + nll[1][[0, 2]].mean(0).sum() + nll[2].mean(0).sum()
    torch.testing.assert_close(decoders.soft_loss(emissions, tags, mask, annotated), expected)
    # a view masked on every post: the same loss as a file without that view
    gone = torch.tensor([[True, False, True]] * 3)
    without = torch.cat([tags[:, 0:2], tags[:, 4:6]], dim=1)
    torch.testing.assert_close(
        decoders.soft_loss(emissions, tags, mask, gone), decoders.soft_loss(emissions, without, mask)
    )


def test_mvmd_per_view_loss_masks_the_decoders_of_a_missing_view():
    decoders, emissions, tags, mask = _decoders_and_batch(num_decoders=4, views=1)  # 2 views x 2 labels
    annotated = torch.tensor([[True, True], [True, False], [False, True]])
    nll = decoders.crf.neg_log_likelihood(emissions, tags, mask)  # [3, 4]
    expected = nll[[0, 1], 0:2].mean(0).sum() + nll[[0, 2], 2:4].mean(0).sum()
    torch.testing.assert_close(decoders.loss(emissions, tags, mask, annotated), expected)
    full = torch.ones(3, 2, dtype=torch.bool)
    assert torch.equal(decoders.loss(emissions, tags, mask, full), decoders.loss(emissions, tags, mask))


def _trainer() -> L.Trainer:
    return L.Trainer(
        max_epochs=1,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )


def _batch(tiny_bert, make_batch, views: int):
    tokenizer = ChunkedEncoder(tiny_bert, max_length=16).tokenizer
    ids, mask = make_batch(tokenizer, ["il gatto e il cane", "ciao mondo gatto mare"])
    tags = torch.zeros(2, views * len(LABELS), ids.shape[1], dtype=torch.long)
    tags[0, 0, 1], tags[0, 0, 2], tags[1, 3, 0] = 1, 2, 1
    tags[0, 4, 3] = 1  # a span in (post 0, a3), a view that did not annotate post 0: never counted
    labels = torch.zeros(2, views, len(LABELS))
    labels[0, 0, 0] = labels[1, 1, 1] = labels[1, 2, 1] = 1.0
    return {
        "input_ids": ids,
        "attention_mask": mask,
        "word_starts": torch.arange(ids.shape[1]).expand(2, -1).clone(),
        "word_mask": mask.bool(),
        "tags": tags,
        "post_index": torch.tensor([0, 1]),
        "labels": labels,
        "annotated": torch.tensor([[True, True, False], [True, True, True]]),
    }


def _one_view_models(tiny_bert, soft_targets: bool = False, view_weights=None) -> tuple[MVML, MVMD]:
    """An MVML head and an MVMD decoder set of one view, each with a dev metric over three gold views."""
    mvml = MVML(
        ChunkedEncoder(tiny_bert, max_length=16),
        num_views=1,
        labels=LABELS,
        soft_targets=soft_targets,
        val_metric=PostMicroScore(num_views=3, labels=LABELS),
    )
    mvmd = MVMD(
        ChunkedEncoder(tiny_bert, max_length=16),
        num_views=1,
        labels=LABELS,
        soft_targets=soft_targets,
        view_weights=view_weights,
        optimizer=functools.partial(torch.optim.AdamW, lr=1e-3),
        val_metric=SpanOverlapScore(LabelInventory.load(), num_views=3),
    )
    return mvml, mvmd


def test_soft_models_train_one_view_and_score_it_against_every_view(tiny_bert, make_batch):
    batch = _batch(tiny_bert, make_batch, views=3)
    loader = torch.utils.data.DataLoader([batch], batch_size=None)
    mvml, mvmd = _one_view_models(tiny_bert, soft_targets=True, view_weights=[1.0, 1.0, 0.5])
    assert mvml.head.projection.out_features == 2 and mvmd.decoders.num_decoders == 2
    for model in (mvml, mvmd):
        run = _trainer()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run.fit(model, loader, loader)
        # the one prediction is scored against the three gold views (the -O rule)
        assert {"val/a1/f1", "val/a2/f1", "val/a3/f1", "val/loss"} <= set(run.callback_metrics)
        if model is mvmd:  # gold spans on dev: a1's on post 0 and a2's on post 1, not the masked (post 0, a3) one
            assert float(run.callback_metrics["val/gold_spans"]) == 2
        [prediction] = run.predict(model, loader)
        key = "probabilities" if model is mvml else "tags"
        assert prediction[key].shape[1] in (1, 2)  # one view (MVML [B, 1, C]; MVMD [B, C decoders, W])


def tune(*models) -> None:
    """Switch the models' decision rule to tuned (``decision.tuned``), keeping its other settings."""
    for model in models:
        model.keep_decision_settings(model.decision.model_copy(update={"tuned": True}))


def test_tuning_observations_pool_views_for_soft_models_and_neutralise_missing_pairs(tiny_bert, make_batch):
    batch = _batch(tiny_bert, make_batch, views=3)
    mvml = MVML(ChunkedEncoder(tiny_bert, max_length=16), num_views=1, labels=LABELS, soft_targets=True)
    mvml.eval()
    probabilities, targets = mvml.observations(mvml.dev_outputs(batch))
    # 2 posts x 3 views, each an observation of the one head; (post 0, a3) is not annotated: all zeros
    assert probabilities.shape == targets.shape == (6, 1, 2)
    assert torch.equal(targets[:, 0], batch["labels"].reshape(6, 2) * torch.tensor([1, 1, 0, 1, 1, 1.0])[:, None])
    assert probabilities[2].abs().sum() == 0 and bool((probabilities[[0, 1, 3, 4, 5]] > 0).all())
    mvmd = MVMD(ChunkedEncoder(tiny_bert, max_length=16), num_views=1, labels=LABELS, soft_targets=True)
    mvmd.eval()
    emissions, tags, mask = mvmd.observations(mvmd.dev_outputs(batch))
    assert emissions.shape[:2] == (6, 2) and tags.shape[:2] == (6, 2) and mask.shape[0] == 6
    assert torch.equal(tags[3], batch["tags"][1, 0:2]) and torch.equal(tags[4], batch["tags"][1, 2:4])
    # the masked pair's span (post 0, a3) is gone and its decoders decode O whatever the bias
    assert tags[2].sum() == 0 and batch["tags"][0, 4:6].sum() > 0
    decoded = mvmd.decoders.crf.viterbi(emissions - torch.tensor([4.0, 0.0, 0.0]), mask)
    assert decoded[2].sum() == 0
    # and the tuning itself runs on both (decision.tuned)
    tune(mvml, mvmd)
    assert set(mvml.tune_decisions([batch])["thresholds"]) == {"a1"}
    assert set(mvmd.tune_decisions([batch])["o_bias"]) == {"a1"}


def _aggregated(batch: dict) -> dict:
    """The batch as a union model sees it: one aggregated view to train on, every view under ``gold_*`` to score."""
    labels = len(LABELS)
    views = batch["tags"].shape[1] // labels
    union_tags = batch["tags"].view(2, views, labels, -1).amax(1)
    union_tags[0] = 0  # the aggregate differs from every view on post 0: scoring must not read it
    return {
        **{key: value for key, value in batch.items() if key not in ("tags", "labels", "annotated")},
        "tags": union_tags,
        "labels": batch["labels"].amax(1, keepdim=True),
        "gold_tags": batch["tags"],
        "gold_labels": batch["labels"],
        "gold_annotated": batch["annotated"],
    }


def test_aggregated_models_score_and_tune_against_every_gold_view_not_the_aggregate(tiny_bert, make_batch):
    batch = _batch(tiny_bert, make_batch, views=3)
    aggregated = _aggregated(batch)
    loader = torch.utils.data.DataLoader([aggregated], batch_size=None)
    mvml, mvmd = _one_view_models(tiny_bert)
    for model in (mvml, mvmd):
        run = _trainer()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run.fit(model, loader, loader)
        assert {"val/a1/f1", "val/a2/f1", "val/a3/f1"} <= set(run.callback_metrics)
        if model is mvmd:  # the views' 2 annotated dev spans, not the aggregate's (post 1: 1 span, post 0: none)
            assert float(run.callback_metrics["val/gold_spans"]) == 2
        model.eval()
    # the rules meet every view once, the masked (post 0, a3) pair neutralised: what a soft model meets
    probabilities, targets = mvml.observations(mvml.dev_outputs(aggregated))
    assert probabilities.shape == targets.shape == (6, 1, 2)
    assert torch.equal(targets[:, 0], batch["labels"].reshape(6, 2) * torch.tensor([1, 1, 0, 1, 1, 1.0])[:, None])
    emissions, tags, mask = mvmd.observations(mvmd.dev_outputs(aggregated))
    assert tags.shape[:2] == (6, 2) and torch.equal(tags[0], batch["tags"][0, 0:2]) and tags[2].sum() == 0
    tune(mvml, mvmd)
    assert set(mvml.tune_decisions([aggregated])["thresholds"]) == {"a1"}
    assert set(mvmd.tune_decisions([aggregated])["o_bias"]) == {"a1"}
    # without gold views the batch's own targets are the gold (a views model, or data that has one view)
    _, own_tags, _ = mvmd.observations(
        mvmd.dev_outputs({k: v for k, v in aggregated.items() if not k.startswith("gold_")})
    )
    assert torch.equal(own_tags, aggregated["tags"])


def test_a_one_view_models_rule_counts_its_evidence_per_view(tiny_bert, make_batch, monkeypatch):
    """Pooled over 3 views a rater's dev spans count 3 times: min_evidence and the shrinkage are scaled by 3, so
    they mean what they mean for a model with a decoder set per view (and nothing is scaled for one)."""
    from models import decision_rules
    from models.decision_rules import views_per_model_view

    assert views_per_model_view(3, 1) == 3 and views_per_model_view(3, 3) == 1 and views_per_model_view(1, 1) == 1
    seen = {}

    def spy(name, real):
        def fit(*args, **kwargs):
            seen[name] = args
            return real(*args, **kwargs)

        return fit

    # the settings each fit uses, once scaled (fit_o_bias / fit_thresholds scale them by their views_per_item)
    monkeypatch.setattr(decision_rules, "_fit_o_bias_once", spy("span", decision_rules._fit_o_bias_once))
    monkeypatch.setattr(decision_rules, "_fit_thresholds_once", spy("post", decision_rules._fit_thresholds_once))
    batch = _batch(tiny_bert, make_batch, views=3)
    span_rule = {"decision": {"tuned": True, "min_evidence": 30, "shrinkage": 20.0}}
    post_rule = {"decision": {"tuned": True, "min_evidence": 3, "shrinkage": 20.0}}

    def encoder():
        return ChunkedEncoder(tiny_bert, max_length=16)

    for soft, one_view in ((True, batch), (False, _aggregated(batch))):
        mvmd = MVMD(encoder(), num_views=1, labels=LABELS, soft_targets=soft, **span_rule)
        mvml = MVML(encoder(), num_views=1, labels=LABELS, soft_targets=soft, **post_rule)
        mvmd.tune_decisions([one_view])
        mvml.tune_decisions([one_view])
        assert (seen["span"][2], seen["span"][4]) == (90, 60.0)
        assert (seen["post"][3], seen["post"][5]) == (9, 60.0)
    MVMD(encoder(), num_views=3, labels=LABELS, **span_rule).tune_decisions([batch])
    MVML(encoder(), num_views=3, labels=LABELS, **post_rule).tune_decisions([batch])
    assert (seen["span"][2], seen["span"][4]) == (30, 20.0) and (seen["post"][3], seen["post"][5]) == (3, 20.0)

"""``MultiTaskModel``: one encoder under several heads, batches routed by entry, the target's optimiser recipe."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

from faina.data.feature_cache import encode_cached
from faina.data.features import Collator
from faina.data.levels import LEVELS
from faina.data.task_entries import read_entries
from faina.serving.fold_model import load_tokenizer
from faina.training.model_building import build_model
from helpers.configs import compose_train
from models.encoder import ChunkedEncoder
from models.multitask import EntryHead, MultiTaskModel


@pytest.fixture(scope="module")
def parts(tiny_encoder, small_sample):
    cfg = compose_train(
        "task=multi", f"encoder.name_or_path={tiny_encoder}", "task.entries.post_f.model.module.head_lr=0.005"
    )
    spec = OmegaConf.to_container(cfg.task.entries, resolve=True)
    for entry in spec.values():
        entry["data"].update(train_path=str(small_sample / "sample.conll"), test_path=None)
    entries = read_entries(spec)
    encoder_block = OmegaConf.to_container(cfg.encoder, resolve=True)
    tokenizer = load_tokenizer(encoder_block)
    batches = []
    for entry in entries:
        features, _ = encode_cached(entry.data.labelled, entry.level, tokenizer, entry.data.labels, 2, None)
        batches.append(Collator(tokenizer.pad_token_id)(features[:4]))
    return cfg, entries, batches


def build(parts, weights=(1.0, 0.5), selection="target", scheduler=None):
    cfg, entries, _ = parts
    encoder = ChunkedEncoder(name_or_path=cfg.encoder.name_or_path, max_length=cfg.encoder.max_length)
    heads = {}
    for entry in entries:
        model_cfg = OmegaConf.create(entry.model_block)
        model_cfg.module.scheduler = scheduler
        heads[entry.head] = build_model(
            model_cfg, cfg.encoder, entry.level, entry.data.labels, 2, entry.data.inventory, encoder=encoder
        )
    metrics = {e.name: LEVELS[e.level].metric(e.data.inventory, 2) for e in entries}
    plan = [EntryHead(e.name, e.head, w) for e, w in zip(entries, weights)]
    return MultiTaskModel(heads, plan, "span_f", metrics, selection)


def test_the_encoder_is_one_module_and_its_weights_one_copy(parts):
    model = build(parts)
    keys = list(model.state_dict())
    assert any(k.startswith("encoder.") for k in keys)
    assert not any(".encoder." in k for k in keys if k.startswith("heads."))
    assert model.heads["span_f"].encoder is model.encoder is model.heads["post_f"].encoder
    shared = sum(p.numel() for p in model.encoder.parameters())
    assert sum(p.numel() for p in model.parameters()) == shared + sum(
        p.numel() for head in model.heads.values() for p in head.parameters()
    )


def test_a_standalone_head_is_a_whole_single_task_model_for_the_block_only(parts):
    model = build(parts)
    with model.standalone("post_f") as head:
        inside = head.state_dict()
        assert any(k.startswith("encoder.") for k in inside) and any(k.startswith("head") for k in inside)
    assert not any(k.startswith("encoder.") for k in model.heads["post_f"].state_dict())
    assert model.heads["post_f"].encoder is model.encoder


@pytest.mark.filterwarnings("ignore:You are trying to `self.log\\(\\)`")  # no Trainer here: the log is a no-op
def test_a_batch_trains_its_entrys_head_its_loss_times_the_entrys_weight(parts):
    _, _, batches = parts
    model = build(parts, weights=(1.0, 0.5))
    model.eval()  # no dropout: the two computations see the same network
    with torch.no_grad():
        for position, batch in enumerate(batches):
            routed = model.training_step({**batch, "entry": torch.tensor(position)}, 0)
            head = model.heads[model.entries[position].head]
            assert torch.allclose(routed, model.entries[position].weight * head.training_loss(batch))
    model.train()
    routed = model.training_step({**batches[1], "entry": torch.tensor(1)}, 0)
    routed.backward()
    assert all(p.grad is not None for p in model.heads["post_f"].parameters())  # its head trains
    assert all(p.grad is None for p in model.heads["span_f"].parameters())  # the other head gets no gradient
    assert any(p.grad is not None for p in model.encoder.parameters())  # the shared encoder does


def test_each_head_trains_at_its_own_head_lr_and_the_encoder_at_the_targets_lr(parts):
    model = build(parts)
    optimizer = model.configure_optimizers()
    groups = {group["name"]: group["lr"] for group in optimizer.param_groups}
    assert groups["heads"] == 1e-2 and groups["heads.post_f"] == 0.005
    assert {lr for name, lr in groups.items() if name.startswith("encoder.")} == {1e-4}
    ids = [id(p) for group in optimizer.param_groups for p in group["params"]]
    assert len(ids) == len(set(ids)) == len([p for p in model.parameters() if p.requires_grad])


def test_selection_is_the_targets_f1_or_the_weighted_mean():
    class Stub:
        selection_score = MultiTaskModel.selection_score

    stub = Stub()
    stub.entries, stub.target = [EntryHead("a", "a", 1.0), EntryHead("b", "b", 3.0)], "a"
    stub.selection = "target"
    assert stub.selection_score({"a": 0.2, "b": 0.6}) == 0.2
    stub.selection = "mean"
    assert stub.selection_score({"a": 0.2, "b": 0.6}) == pytest.approx((0.2 + 3 * 0.6) / 4)


def test_gradual_unfreezing_of_the_target_opens_the_shared_encoder_layer_by_layer(parts):
    """The target head's ``gradual_unfreezing`` is the multi-task model's: its callback runs on the whole model and
    freezes the shared encoder in epoch 0 (only heads train), then opens one layer group per epoch from the top."""
    from types import SimpleNamespace

    from models.unfreezing import GradualUnfreezing

    model = build(parts)
    assert model.configure_callbacks() == []  # off by default, as in a single-task model
    model.heads["span_f"].gradual_unfreezing = True
    callbacks = model.configure_callbacks()
    assert [type(c) for c in callbacks] == [GradualUnfreezing]
    groups = model.encoder_layer_groups()
    assert [[id(p) for p in g] for g in groups] == [
        [id(p) for p in g] for g in model.heads["span_f"].encoder_layer_groups()
    ]
    assert {id(p) for g in groups for p in g} == {id(p) for p in model.encoder.parameters() if p.requires_grad}
    for epoch, open_groups in ((0, 0), (1, 1), (len(groups), len(groups))):
        callbacks[0].on_train_epoch_start(SimpleNamespace(current_epoch=epoch), model)
        trainable = [all(p.requires_grad for p in g) for g in groups]
        assert trainable == [index >= len(groups) - open_groups for index in range(len(groups))], epoch
        assert all(p.requires_grad for head in model.heads.values() for p in head.heads_parameters())

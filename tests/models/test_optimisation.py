"""Learning-rate groups, schedule, gradual unfreezing, and that a few steps of training learn."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest
import torch

from models.encoder import ChunkedEncoder
from models.mvmd import MVMD
from models.mvml import MVML
from models.schedules import slanted_triangular, slanted_triangular_factor
from models.unfreezing import GradualUnfreezing

LABELS = ["Doubt", "Slogan"]
ADAMW = functools.partial(torch.optim.AdamW, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.01)


def span_batch(encoder: ChunkedEncoder, make_batch) -> dict:
    """Two posts whose words are one subword each; 'gatto' always opens a Doubt span in view 0."""
    texts = ["il gatto e il cane", "ciao mondo gatto mare"]
    ids, mask = make_batch(encoder.tokenizer, texts)
    words = mask.sum(-1)
    word_starts = torch.arange(ids.shape[1]).expand(2, -1).clone()
    word_mask = mask.bool()
    tags = torch.zeros(2, 2 * len(LABELS), ids.shape[1], dtype=torch.long)
    tags[0, 0, 1], tags[0, 0, 2] = 1, 2
    tags[1, 0, 2] = 1
    tags[1, 3, 0], tags[1, 3, 1] = 1, 2
    assert words.tolist() == [5, 4]
    return {
        "input_ids": ids,
        "attention_mask": mask,
        "word_starts": word_starts,
        "word_mask": word_mask,
        "tags": tags,
        "post_index": torch.tensor([0, 1]),
        "labels": torch.tensor([[[1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]]),
    }


def test_slanted_triangular_shape():
    factors = [slanted_triangular_factor(step, 100, cut_frac=0.3, ratio=32) for step in range(101)]
    assert factors[0] == pytest.approx(1 / 32)
    assert max(factors) == pytest.approx(1.0) and factors.index(1.0) == 30
    assert all(a <= b for a, b in zip(factors[:30], factors[1:31]))
    assert all(a >= b for a, b in zip(factors[30:], factors[31:]))
    assert factors[100] == pytest.approx(1 / 32)
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.5)
    scheduler = slanted_triangular(optimizer, total_steps=10)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.5 / 32)
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.5)


def test_discriminative_learning_rates_and_head_lr(tiny_bert):
    model = MVMD(
        ChunkedEncoder(tiny_bert, max_length=16),
        num_views=2,
        labels=LABELS,
        optimizer=ADAMW,
        discriminative_decay=0.5,
        head_lr=3e-3,
    )
    optimizer = model.configure_optimizers()
    lrs = {group["name"]: group["lr"] for group in optimizer.param_groups}
    # 2 layers: embeddings lr·0.5², layer 1 lr·0.5, layer 2 (+ pooler) lr; heads their own lr
    assert lrs == pytest.approx({"encoder.0": 2.5e-4, "encoder.1": 5e-4, "encoder.2": 1e-3, "heads": 3e-3})
    embeddings = model.encoder.model.embeddings.word_embeddings.weight
    assert any(p is embeddings for p in optimizer.param_groups[0]["params"])
    grouped = sum(len(group["params"]) for group in optimizer.param_groups)
    assert grouped == len(list(model.parameters()))
    assert optimizer.param_groups[0]["betas"] == (0.9, 0.99)


def test_gradual_unfreezing_from_the_top(tiny_bert):
    model = MVML(ChunkedEncoder(tiny_bert, max_length=16), num_views=2, labels=LABELS, gradual_unfreezing=True)
    assert any(isinstance(c, GradualUnfreezing) for c in model.configure_callbacks())
    callback = GradualUnfreezing()
    groups = model.encoder_layer_groups()
    assert len(groups) == 3

    def trainable_groups(epoch: int) -> list[bool]:
        callback.on_train_epoch_start(SimpleNamespace(current_epoch=epoch), model)
        return [all(p.requires_grad for p in group) for group in groups]

    assert trainable_groups(0) == [False, False, False]
    assert all(p.requires_grad for p in model.head.parameters())
    assert trainable_groups(1) == [False, False, True]
    assert trainable_groups(2) == [False, True, True]
    assert trainable_groups(5) == [True, True, True]


@pytest.mark.parametrize("model_class", [MVMD, MVML])
def test_a_few_steps_reduce_the_loss(tiny_bert, make_batch, model_class):
    torch.manual_seed(0)
    model = model_class(
        ChunkedEncoder(tiny_bert, max_length=16, dropout=0.0), num_views=2, labels=LABELS, optimizer=ADAMW
    )
    batch = span_batch(model.encoder, make_batch)
    optimizer = model.configure_optimizers()
    model.train()
    losses = []
    for _ in range(15):
        optimizer.zero_grad()
        loss = _loss(model, batch)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.7 * losses[0]


def _loss(model, batch) -> torch.Tensor:
    if isinstance(model, MVMD):
        return model.decoders.loss(model.emissions(batch), batch["tags"], batch["word_mask"])
    return model.head.loss(model(batch), batch["labels"])

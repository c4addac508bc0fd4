"""MVMD/MVML inside a Lightning Trainer: metric names, the collapse warning, predictions, checkpoints."""

from __future__ import annotations

import functools
import warnings

import lightning as L
import pytest
import torch

from common.checkpointing import FoldCheckpoint
from faina.formats.labels import LabelInventory
from metrics.faina_post import PostMicroScore
from metrics.faina_span import SpanOverlapScore
from models.encoder import ChunkedEncoder
from models.mvmd import MVMD
from models.mvml import MVML

LABELS = ["Doubt", "Slogan"]


@pytest.fixture
def batch(tiny_bert, word_batch):
    tokenizer = ChunkedEncoder(tiny_bert, max_length=16).tokenizer
    batch = word_batch(tokenizer, ["il gatto e il cane", "ciao mondo gatto mare"], [7, 9])
    tags = torch.zeros(2, 4, batch["input_ids"].shape[1], dtype=torch.long)
    tags[0, 0, 1], tags[0, 0, 2], tags[1, 3, 0] = 1, 2, 1
    batch["tags"] = tags
    batch["labels"] = torch.tensor([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]])
    return batch


def loader(batch):
    return torch.utils.data.DataLoader([batch], batch_size=None)


def trainer(**kwargs) -> L.Trainer:
    settings = dict(
        max_epochs=1,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    return L.Trainer(**{**settings, **kwargs})


def test_mvmd_logs_view_metrics_and_warns_when_decoders_collapse(tiny_bert, batch):
    # a huge initial O bias and no learning: every decoder says O, as in the 40-CRF collapse
    model = MVMD(
        ChunkedEncoder(tiny_bert, max_length=16),
        num_views=2,
        labels=LABELS,
        o_bias=100.0,
        head_lr=0.0,
        optimizer=functools.partial(torch.optim.AdamW, lr=0.0),
        val_metric=SpanOverlapScore(LabelInventory.load(), num_views=2),
    )
    run = trainer()
    with pytest.warns(UserWarning, match="collapsed"):
        run.fit(model, loader(batch), loader(batch))
    logged = run.callback_metrics
    for name in ("val/f1", "val/a1/precision", "val/a2/recall", "val/avg/f1", "val/loss", "train/loss"):
        assert name in logged, name
    assert float(logged["val/f1"]) == 0.0
    assert float(logged["val/predicted_spans"]) == 0 and float(logged["val/gold_spans"]) == 2


def test_mvmd_learns_the_spans_and_predicts_tags(tiny_bert, batch):
    torch.manual_seed(0)
    model = MVMD(
        ChunkedEncoder(tiny_bert, max_length=16, dropout=0.0),
        num_views=2,
        labels=LABELS,
        optimizer=functools.partial(torch.optim.AdamW, lr=1e-3),
        head_lr=5e-2,
        val_metric=SpanOverlapScore(LabelInventory.load(), num_views=2),
    )
    run = trainer(max_epochs=30, check_val_every_n_epoch=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no collapse warning once trained
        warnings.filterwarnings("ignore", message=".*(num_workers|does not have many workers|log_every_n_steps).*")
        run.fit(model, loader(batch), loader(batch))
    assert float(run.callback_metrics["val/f1"]) == pytest.approx(1.0)
    [prediction] = run.predict(model, loader(batch))
    assert prediction["post_index"].tolist() == [7, 9]
    assert torch.equal(prediction["tags"], batch["tags"])
    assert prediction["num_words"].tolist() == [5, 4]


def test_mvml_metrics_predictions_and_checkpoint_hparams(tiny_bert, batch, tmp_path):
    model = MVML(
        ChunkedEncoder(tiny_bert, max_length=16),
        num_views=2,
        labels=LABELS,
        decision={"fixed": 0.6},
        val_metric=PostMicroScore(num_views=2, labels=LABELS),
    )
    run = trainer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run.fit(model, loader(batch), loader(batch))
    assert {"val/f1", "val/a1/f1", "val/a2/precision"} <= set(run.callback_metrics)
    [prediction] = run.predict(model, loader(batch))
    assert prediction["probabilities"].shape == (2, 2, 2)
    assert torch.equal(prediction["predicted"], prediction["probabilities"] >= 0.6)
    path = tmp_path / "mvml.ckpt"
    run.save_checkpoint(path)
    hparams = torch.load(path, weights_only=True)["hyper_parameters"]
    assert hparams["labels"] == LABELS and hparams["num_views"] == 2 and hparams["decision"]["fixed"] == 0.6
    assert hparams["encoder_name"] == tiny_bert


def silent_mvml(tiny_bert, bias: float, **settings) -> MVML:
    """A post model that learns nothing and gives every label the probability ``sigmoid(bias)``."""
    model = MVML(
        ChunkedEncoder(tiny_bert, max_length=16),
        labels=LABELS,
        head_lr=0.0,
        optimizer=functools.partial(torch.optim.AdamW, lr=0.0),
        val_metric=PostMicroScore(num_views=2, labels=LABELS),  # the batch's two annotator views
        **settings,
    )
    with torch.no_grad():
        model.head.projection.weight.zero_()
        model.head.projection.bias.fill_(bias)
    return model


def collapse_warnings(model, batch) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer().fit(model, loader(batch), loader(batch))
    return [str(w.message) for w in caught if "collapsed" in str(w.message)]


def test_post_heads_are_judged_at_their_decision_rule_in_their_own_words(tiny_bert, batch):
    # probability 0.4: below τ = 0.7, so the fixed rule predicts nothing: an alarm naming the post heads' options
    [message] = collapse_warnings(silent_mvml(tiny_bert, -0.405, decision={"tuned": False, "fixed": 0.7}), batch)
    assert "post heads gave 0 labels per view at their decision rule (τ = 0.7)" in message
    assert "model.module.decision.fixed" in message and "o_bias" not in message and "decoders" not in message
    # the tuned rule may still go down to its floor 0.3: 0.4 is no collapse there
    assert collapse_warnings(silent_mvml(tiny_bert, -0.405, decision={"tuned": True, "floor": 0.3}), batch) == []
    [message] = collapse_warnings(silent_mvml(tiny_bert, -1.5, decision={"tuned": True, "floor": 0.3}), batch)
    assert "lowest threshold the tuned rule may choose" in message and "model.module.decision.floor" in message


def test_a_soft_target_post_head_is_no_collapse_when_it_predicts_few_labels(tiny_bert, batch):
    # one head of the annotators' shares: its probabilities are mostly below any threshold by design
    model = silent_mvml(tiny_bert, -1.5, num_views=1, soft_targets=True, decision={"tuned": False})
    assert collapse_warnings(model, batch) == []


@pytest.mark.parametrize("level", ["span", "post"])
def test_the_chosen_epochs_validation_outputs_are_what_a_new_dev_pass_with_its_weights_gives(
    tiny_bert, batch, tmp_path, level
):
    # the runner fits decision rules and calibrations on the kept outputs instead of a new pass: they must be the
    # same tensors, bit for bit, or a fold resumed past its best epoch (which makes the new pass) would differ
    torch.manual_seed(0)
    metric = (
        SpanOverlapScore(LabelInventory.load(), num_views=2)
        if level == "span"
        else PostMicroScore(num_views=2, labels=LABELS)
    )
    kind = MVMD if level == "span" else MVML
    settings = {"num_views": 2} if level == "span" else {}
    model = kind(
        ChunkedEncoder(tiny_bert, max_length=16),
        labels=LABELS,
        optimizer=functools.partial(torch.optim.AdamW, lr=1e-2),
        val_metric=metric,
        **settings,
    )
    model.validation_outputs.record()
    checkpoint = FoldCheckpoint(tmp_path, monitor="val/loss", mode="min")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer(max_epochs=3, callbacks=[checkpoint], enable_checkpointing=True).fit(
            model, loader(batch), loader(batch)
        )
    kept = checkpoint.best_validation_outputs[0]  # the first (only) validation loader's batches
    model.load_state_dict(checkpoint.best_weights())
    fresh = model.dev_pass(loader(batch))
    assert len(kept) == len(fresh) == 1
    assert kept[0].keys() == fresh[0].keys() and {"gold", "annotated"} < set(kept[0])
    for key, value in fresh[0].items():
        assert value is None if kept[0][key] is None else torch.equal(kept[0][key], value), key
    # a module not asked to record keeps nothing: the runner then makes the pass itself
    silent = FoldCheckpoint(tmp_path / "other", monitor="val/loss", mode="min")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.validation_outputs.record(False)
        trainer(max_epochs=1, callbacks=[silent], enable_checkpointing=True).fit(model, loader(batch), loader(batch))
    assert silent.best_epoch == 0 and silent.best_validation_outputs is None

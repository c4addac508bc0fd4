"""``common.fold_training.FoldTrainer``: the weights a fold predicts with, and when the chosen epoch's validation
outputs may serve the dev fits instead of a new pass over dev."""

from __future__ import annotations

from types import SimpleNamespace

import lightning.pytorch as pl
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from common.fold_training import FoldSettings, FoldTrainer
from helpers.tiny_regression import ScoredRegression

TRAINER = {
    "_target_": "lightning.pytorch.Trainer",
    "accelerator": "cpu",
    "enable_model_summary": False,
    "enable_progress_bar": False,
    "logger": False,
}


def trained_fold(tmp_path, scores, monkeypatch, average_last: int = 0):
    """A fold fitted over ``scores``' epochs, and the number of ``load_state_dict`` calls choosing weights made."""
    settings = FoldSettings(seed=3, trainer={**TRAINER, "max_epochs": len(scores)}, average_last=average_last)
    fold = FoldTrainer(settings, 0, tmp_path / "fold0")
    module = ScoredRegression(scores)
    data = DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)), batch_size=2)
    # the callbacks FoldTrainer.fit passes (a train.py fold's whole fit belongs to the e2e tier)
    callbacks = [c for c in (fold.average, fold.checkpoint) if c is not None]
    fold.trainer = pl.Trainer(**{k: v for k, v in settings.trainer.items() if k != "_target_"}, callbacks=callbacks)
    fold.trainer.fit(module, data)
    loads = []
    original = module.load_state_dict
    monkeypatch.setattr(module, "load_state_dict", lambda state, *a, **k: loads.append(1) or original(state, *a, **k))
    return fold, module, loads


def same_weights(module, expected) -> bool:
    return all(torch.equal(module.state_dict()[k], v) for k, v in expected.items())


def test_a_fold_whose_last_epoch_is_best_predicts_with_the_weights_it_holds_without_loading_them(tmp_path, monkeypatch):
    fold, module, loads = trained_fold(tmp_path, [0.2, 0.3, 0.5], monkeypatch)
    assert fold.load_chosen_weights(module) == "the weights of epoch 2"
    assert loads == []  # nothing trained after the copy was taken: the module already holds it
    assert same_weights(module, module.weights_at_epoch[2])


def test_a_fold_that_trained_past_its_best_epoch_goes_back_to_it(tmp_path, monkeypatch):
    fold, module, loads = trained_fold(tmp_path, [0.2, 0.5, 0.3], monkeypatch)
    assert not same_weights(module, module.weights_at_epoch[1])  # the last epoch moved the weights on
    assert fold.load_chosen_weights(module) == "the weights of epoch 1"
    assert loads == [1]
    assert same_weights(module, module.weights_at_epoch[1])


def test_averaged_weights_are_loaded_even_when_the_last_epoch_is_best(tmp_path, monkeypatch):
    fold, module, loads = trained_fold(tmp_path, [0.2, 0.3, 0.5], monkeypatch, average_last=2)
    assert fold.load_chosen_weights(module) == "the mean of the last 2 epochs' weights"
    assert loads == [1]
    mean = (module.weights_at_epoch[1]["layer.weight"] + module.weights_at_epoch[2]["layer.weight"]) / 2
    assert torch.allclose(module.state_dict()["layer.weight"], mean)


# --- when the chosen epoch's validation outputs may serve the dev fits ------------------------------------------
KEPT = {0: [{"logits": torch.zeros(2, 1)}]}


def fold_with(tmp_path, world_size=1, precision="32-true", kept=KEPT, averaged=0) -> FoldTrainer:
    """A fold trainer in the state a fit leaves, with a stand-in Lightning trainer (only what the check reads)."""
    fold = FoldTrainer(FoldSettings(seed=0, trainer=TRAINER, average_last=2 if averaged else 0), 0, tmp_path / "f")
    fold.trainer = SimpleNamespace(world_size=world_size, precision=precision)
    fold.checkpoint.best_validation_outputs = kept
    if averaged:
        fold.average.count = averaged
    return fold


def test_one_full_precision_process_with_the_best_epochs_outputs_reuses_them(tmp_path):
    assert fold_with(tmp_path).chosen_validation_outputs() is KEPT
    assert fold_with(tmp_path, precision="32").chosen_validation_outputs() is KEPT


@pytest.mark.parametrize(
    "case",
    [
        {"world_size": 2},  # each process saw a shard of dev
        {"precision": "bf16-mixed"},  # autocast: not the float32 pass the fits would make
        {"precision": "16-mixed"},
        {"kept": None},  # resumed past the best epoch: its outputs were recorded by another process
        {"averaged": 2},  # the weights that predict are a mean no validation pass saw
    ],
    ids=["ddp", "bf16", "fp16", "resumed", "averaged"],
)
def test_the_outputs_are_refused_where_a_new_pass_would_differ(tmp_path, case):
    assert fold_with(tmp_path, **case).chosen_validation_outputs() == {}


def test_a_fold_that_never_fitted_has_no_outputs_to_reuse(tmp_path):
    fold = fold_with(tmp_path)
    fold.trainer = None
    assert fold.chosen_validation_outputs() == {}

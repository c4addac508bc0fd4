"""``model.module.loss_weights=inverse_sqrt`` through ``train.run``: each fold computes its λ from its own train
posts, trains with them and saves the numbers (never the scheme's name); bad values are refused before any fold trains."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from common.errors import UserError
from faina.data.task_data import load_task_data
from faina.serving.fold_model import load_exported
from faina.training.loss_weights import decoder_span_counts, inverse_sqrt
from faina.training.run_entries import make_splits
from train import run

pytestmark = pytest.mark.e2e


def test_a_fold_trains_and_saves_the_weights_of_its_own_train_posts(make_cfg):
    cfg = make_cfg("task=span-f", "debug=fast", "cv.folds=[1]", "model.module.loss_weights=inverse_sqrt")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold1"
    saved = json.loads((fold / "model.json").read_text())["model"]["module"]["loss_weights"]
    data = load_task_data(cfg.data.train_path, None, "span", "fine", cfg.data.labels)
    split = make_splits(cfg, data)[1]
    expected = inverse_sqrt(decoder_span_counts(data.labelled, split.train, data.labels, data.model_views))
    assert saved == expected and len(saved) == 2 * 20 and len(set(saved)) > 1
    buffer = load_file(fold / "model.safetensors")["decoders.loss_weights"]
    torch.testing.assert_close(buffer, torch.tensor(expected))
    model, _ = load_exported(fold)  # the saved folder reads back with its numbers
    torch.testing.assert_close(model.decoders.loss_weights, torch.tensor(expected))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("inverse", r"'inverse' is not a weighting scheme \(known: inverse_sqrt\)"),
        ("[1.0,2.0]", r"loss_weights has 2 weight\(s\) for 40 decoders"),
    ],
)
def test_a_wrong_value_is_one_message_naming_the_key(make_cfg, value, message):
    cfg = make_cfg("task=span-f", "debug=fast", "cv.folds=[0]", f"model.module.loss_weights={value}")
    with pytest.raises(UserError, match=message):
        run(cfg)
    assert not (Path(cfg.paths.results_dir) / cfg.name / "fold0" / "metrics.json").exists()

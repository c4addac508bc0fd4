"""Model files written before the decision rule became one ``decision`` block still load, with the same rule.

The ``model`` blocks below are what ``python train.py`` wrote into a fold's ``model.json`` (``format_version`` 2)
before the change, printed from that code for the configs named in each comment; an exported folder of that time
(``config.json``, ``format_version`` 1) holds the same module settings without the optimiser and schedule. The
weights are a fresh model's (their layout did not change), with decision values set by the test, so the loaded
buffers can be told from defaults.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from common.errors import UserError
from helpers.trained import save_tiny_encoder
from models.decision_rules import PostDecisionSettings, SpanDecisionSettings

OPTIMIZER = {"name": "adamw", "lr": 0.0001, "betas": [0.9, 0.99], "eps": 1e-08, "weight_decay": 0.01, "amsgrad": False}
SCHEDULER = {"name": "slanted_triangular", "cut_frac": 0.3, "ratio": 32.0}
SHARED = {"discriminative_decay": None, "gradual_unfreezing": False, "head_lr": 0.01}
EARLIER_MODULES = {
    # task=span-f model.module.o_bias=tuned model.module.tuning_scope=shrunk model.module.tuning_confirm=true
    "span-tuned": (
        "span",
        "MVMD",
        {
            **SHARED,
            "tuning_scope": "shrunk",
            "tuning_shrinkage": 20.0,
            "tuning_confirm": True,
            "loss_weights": None,
            "o_bias": "tuned",
            "min_dev_spans": 30,
            "view_weights": None,
        },
        SpanDecisionSettings(tuned=True, fixed=0.0, min_evidence=30, scope="shrunk", shrinkage=20.0, confirm=True),
    ),
    # task=span-f model.module.o_bias=1.5 (an initial bias: no decision rule)
    "span-initial-bias": (
        "span",
        "MVMD",
        {
            **SHARED,
            "tuning_scope": "own",
            "tuning_shrinkage": 20.0,
            "tuning_confirm": False,
            "loss_weights": None,
            "o_bias": 1.5,
            "min_dev_spans": 30,
            "view_weights": None,
        },
        SpanDecisionSettings(tuned=False, fixed=0.0, min_evidence=30),
    ),
    # task=post-f (threshold: tuned, the task's default)
    "post-tuned": (
        "post",
        "MVML",
        {
            **SHARED,
            "tuning_scope": "own",
            "tuning_shrinkage": 20.0,
            "tuning_confirm": False,
            "threshold": "tuned",
            "fallback_threshold": 0.7,
            "min_dev_positives": 3,
            "threshold_floor": 0.3,
        },
        PostDecisionSettings(tuned=True, fixed=0.7, min_evidence=3, floor=0.3),
    ),
    # task=post-c model.module.threshold=0.6 model.module.fallback_threshold=0.5
    "post-fixed": (
        "post",
        "MVML",
        {
            **SHARED,
            "tuning_scope": "own",
            "tuning_shrinkage": 20.0,
            "tuning_confirm": False,
            "threshold": 0.6,
            "fallback_threshold": 0.5,
            "min_dev_positives": 3,
            "threshold_floor": 0.3,
        },
        PostDecisionSettings(tuned=False, fixed=0.6, min_evidence=3, floor=0.3),
    ),
}


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Path:
    return save_tiny_encoder(tmp_path_factory.mktemp("encoder"))


def earlier_model_json(encoder: Path, level: str, architecture: str, module: dict) -> dict:
    from faina.formats.labels import LabelInventory

    return {
        "format": "faina-fold-model",
        "format_version": 2,
        "task": f"{level}-f",
        "level": level,
        "grain": "fine",
        "labels": list(LabelInventory.load("faina").labels_of("fine")),
        "num_views": 2,
        "labels_inventory": "faina",
        "model": {
            "name": architecture.lower(),
            "architecture": architecture,
            "dropout": 0.2,
            "module": dict(module),
            "optimizer": OPTIMIZER,
            "scheduler": SCHEDULER,
        },
        "encoder": {"name": "tiny", "name_or_path": str(encoder), "max_length": 128, "trust_remote_code": False},
    }


def write_earlier_fold(folder: Path, meta: dict) -> torch.Tensor:
    """The fold folder with weights whose decision buffer holds recognisable values; returns those values."""
    from models.encoder import ChunkedEncoder
    from models.saved_model import build_model, check_model_block

    folder.mkdir(parents=True)
    (folder / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    checked = check_model_block(meta["model"], folder / "model.json")
    encoder = ChunkedEncoder(name_or_path=meta["encoder"]["name_or_path"], max_length=128)
    model = build_model(checked, encoder, meta["num_views"], meta["labels"])
    buffer = model.decision_o_bias if meta["level"] == "span" else model.thresholds
    values = torch.linspace(0.05, 0.95, buffer.numel()).view_as(buffer)
    buffer.copy_(values)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / "model.safetensors"))
    return values


@pytest.mark.parametrize("name", sorted(EARLIER_MODULES))
def test_a_fold_folder_of_the_flat_decision_keys_loads_with_the_same_rule(encoder, tmp_path, name):
    from faina.serving.fold_model import load_exported
    from faina.serving.saved_files import FOLD_FORMAT_VERSION

    level, architecture, module, expected = EARLIER_MODULES[name]
    folder = tmp_path / "fold0"
    values = write_earlier_fold(folder, earlier_model_json(encoder, level, architecture, module))
    model, meta = load_exported(folder)
    assert model.decision == expected and type(model.decision) is type(expected)
    buffer = model.decision_o_bias if level == "span" else model.thresholds
    assert torch.equal(buffer, values)  # the tuned values of the file, not the rule's defaults
    if architecture == "MVMD":  # the initial bias of the training, kept as the number it was
        assert meta["model"]["module"]["o_bias"] == (0.0 if module["o_bias"] == "tuned" else module["o_bias"])
    saved = meta["model"]["module"]
    assert saved["decision"] == expected.model_dump() and not {"tuning_scope", "threshold"} & set(saved)
    assert meta["format_version"] == FOLD_FORMAT_VERSION  # read back, it is written in today's layout


def test_an_exported_folder_of_the_flat_decision_keys_loads_and_predicts_alike(encoder, tmp_path):
    from faina.data.synthetic import default_sample_dir
    from faina.serving.fold_model import load_exported
    from faina.serving.model_folder import write_model_folder
    from faina.serving.prediction import predict_file

    level, architecture, module, expected = EARLIER_MODULES["post-tuned"]
    meta = earlier_model_json(encoder, level, architecture, module)
    write_earlier_fold(tmp_path / "fold0", meta)
    model, today_meta = load_exported(tmp_path / "fold0")
    exported = write_model_folder(model, today_meta, tmp_path / "exported")
    config = json.loads((exported / "config.json").read_text(encoding="utf-8"))
    assert config["format_version"] == 2 and config["module"]["decision"] == expected.model_dump()
    # the same folder as the earlier release wrote it: format 1, the module's flat keys
    config["format_version"] = 1
    config["module"] = dict(module)
    (exported / "config.json").write_text(json.dumps(config), encoding="utf-8")
    reloaded, _ = load_exported(exported)
    assert reloaded.decision == expected and torch.equal(reloaded.thresholds, model.thresholds)
    posts = str(default_sample_dir() / "sample-unlabelled.tsv")
    ours = predict_file(str(tmp_path / "fold0"), posts, str(tmp_path / "fold.tsv"))
    theirs = predict_file(str(exported), posts, str(tmp_path / "folder.tsv"))
    assert Path(ours).read_text(encoding="utf-8") == Path(theirs).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "key, value, named",
    [
        ("min_dev_spans", -1, "model.module.min_dev_spans"),
        ("tuning_scope", "everyone", "model.module.tuning_scope"),
        ("o_bias", [1], "model.module.o_bias"),
    ],
)
def test_a_wrong_flat_key_is_one_message_naming_the_key_the_file_holds(encoder, tmp_path, key, value, named):
    from faina.serving.fold_model import check_fold_folder

    _, architecture, module, _ = EARLIER_MODULES["span-tuned"]
    folder = tmp_path / "fold0"
    meta = earlier_model_json(encoder, "span", architecture, module)
    write_earlier_fold(folder, meta)
    meta["model"]["module"][key] = value
    (folder / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        check_fold_folder(folder)
    assert f"the field {named} is wrong" in str(caught.value) and str(folder / "model.json") in str(caught.value)


def test_a_flat_key_beside_a_decision_block_is_refused_with_its_new_name(encoder, tmp_path):
    """A file of today's layout that also holds an old key is damaged: which of the two would hold is unclear."""
    from faina.serving.fold_model import check_fold_folder

    _, architecture, module, expected = EARLIER_MODULES["span-tuned"]
    folder = tmp_path / "fold0"
    meta = earlier_model_json(encoder, "span", architecture, {"decision": expected.model_dump(), "o_bias": 0.0})
    write_earlier_fold(folder, meta)
    meta["model"]["module"]["tuning_scope"] = "own"
    (folder / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(UserError, match=r"model\.module\.tuning_scope is now model\.module\.decision\.scope"):
        check_fold_folder(folder)

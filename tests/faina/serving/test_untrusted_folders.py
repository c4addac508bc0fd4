"""Fold folders and exported folders from someone else are data: hostile or wrong files end in one message.

The reported attack (``model.module.optimizer`` of a fold's model.json turned into ``pathlib.Path.unlink`` of a
victim file) and one hostile node per family of target, in model.json (as earlier releases wrote it, with
``_target_`` nodes, and in today's named form) and in an exported config.json: each load ends in one ``UserError``
naming the file and the field, nothing is called (tripwires) and the victim file is untouched. Folders of the
earlier release still load and predict exactly what today's do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file, save_file

from common.errors import UserError
from faina.serving.fold_model import load_exported
from faina.serving.loading import load_predictor
from faina.serving.prediction import predict_file
from helpers.hostile import FAMILIES, issue_payload, tripwires, with_node
from helpers.trained import copy_of
from tests_paths import REPO
from tiers import fixture_tier

VICTIM_TEXT = "keep me\n"


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "VICTIM"
    path.write_text(VICTIM_TEXT, encoding="utf-8")
    return path


def legacy_model_json(trained) -> dict:
    """model.json exactly as the earlier release wrote it: the resolved Hydra model and encoder configs."""
    today = json.loads((trained["run"] / "fold0" / "model.json").read_text(encoding="utf-8"))
    config = yaml.safe_load((trained["run"] / "config.yaml").read_text(encoding="utf-8"))
    return {key: today[key] for key in ("task", "level", "grain", "labels", "num_views", "labels_inventory")} | {
        "model": config["model"],
        "encoder": config["encoder"],
    }


def write_json(path: Path, content: dict) -> Path:
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


@pytest.fixture
@fixture_tier("fast")  # built on the shared trained run: the fresh-clone probe does not build it
def legacy_fold(trained, tmp_path) -> Path:
    folder = copy_of(trained["run"] / "fold0", tmp_path, "legacy-fold0")
    write_json(folder / "model.json", legacy_model_json(trained))
    return folder


def test_the_saved_model_json_holds_names_and_plain_values_only(trained):
    meta = json.loads((trained["run"] / "fold0" / "model.json").read_text(encoding="utf-8"))
    text = json.dumps(meta)
    assert "_target_" not in text and "_partial_" not in text and "${" not in text
    assert meta["model"]["architecture"] == "MVMD"
    assert meta["model"]["optimizer"]["name"] == "adamw" and meta["model"]["scheduler"]["name"] == "slanted_triangular"


def test_the_issue_folder_ends_in_one_message_and_the_victim_survives(trained, legacy_fold, victim, tmp_path):
    meta = json.loads((legacy_fold / "model.json").read_text(encoding="utf-8"))
    meta["model"]["module"]["optimizer"] = issue_payload(victim)
    write_json(legacy_fold / "model.json", meta)
    out = tmp_path / "out.conll"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "faina.predict",
            str(legacy_fold),
            str(trained["sample"] / "sample-unlabelled.conll"),
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    assert str(legacy_fold / "model.json") in lines[0] and "model.module.optimizer._target_" in lines[0]
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
    assert not out.exists()


def _hostile_model_json(trained, family: str, victim: Path) -> dict:
    node = FAMILIES[family][0](victim)
    if "_target_" in node:  # the earlier release's layout: the optimizer is a Hydra node inside module
        return with_node(legacy_model_json(trained), "model.module.optimizer", node)
    today = json.loads((trained["run"] / "fold0" / "model.json").read_text(encoding="utf-8"))
    return with_node(today, "model.optimizer", node)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_target_family_runs_from_a_fold_model_json(trained, family, victim, tmp_path, monkeypatch):
    folder = copy_of(trained["run"] / "fold0", tmp_path)
    write_json(folder / "model.json", _hostile_model_json(trained, family, victim))
    calls = tripwires(monkeypatch)
    with pytest.raises(UserError) as caught:
        load_exported(folder)
    monkeypatch.undo()
    message = str(caught.value)
    assert str(folder / "model.json") in message and "optimizer" in message
    assert calls == [] and victim.read_text(encoding="utf-8") == VICTIM_TEXT


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_target_family_runs_from_an_exported_config_json(trained, family, victim, tmp_path, monkeypatch):
    folder = copy_of(trained["exported"], tmp_path)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    write_json(folder / "config.json", with_node(config, "module.head_lr", FAMILIES[family][0](victim)))
    calls = tripwires(monkeypatch)
    with pytest.raises(UserError) as caught:
        load_exported(folder)
    monkeypatch.undo()
    assert str(folder / "config.json") in str(caught.value) and "module.head_lr" in str(caught.value)
    assert calls == [] and victim.read_text(encoding="utf-8") == VICTIM_TEXT


def test_an_exported_architecture_is_a_name_never_an_import_path(trained, tmp_path):
    folder = copy_of(trained["exported"], tmp_path)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    write_json(folder / "config.json", {**config, "architecture": "pathlib.Path"})
    with pytest.raises(UserError, match="architecture"):
        load_exported(folder)


def test_a_results_folder_with_one_hostile_fold_is_refused(trained, victim, tmp_path):
    run = copy_of(trained["run"], tmp_path, "run")
    write_json(run / "fold1" / "model.json", _hostile_model_json(trained, "os.system", victim))
    with pytest.raises(UserError) as caught:
        load_predictor(run)
    assert str(run / "fold1" / "model.json") in str(caught.value)
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT


def test_a_fold_folder_of_the_earlier_release_predicts_what_todays_predicts(trained, legacy_fold, tmp_path):
    posts = str(trained["sample"] / "sample-unlabelled.conll")
    today = predict_file(str(trained["run"] / "fold0"), posts, str(tmp_path / "today.conll"))
    before = predict_file(str(legacy_fold), posts, str(tmp_path / "legacy.conll"))
    assert Path(before).read_text(encoding="utf-8") == Path(today).read_text(encoding="utf-8")
    _, meta = load_exported(legacy_fold)
    assert meta["model"]["optimizer"]["name"] == "adamw" and "_target_" not in json.dumps(meta)


def assert_wrong_field_named(folder: Path, file_name: str, key: str, value, field: str) -> None:
    """``key`` of ``folder/file_name`` set to ``value``: loading the folder is one message naming the file and
    ``field``."""
    path = folder / file_name
    write_json(path, with_node(json.loads(path.read_text(encoding="utf-8")), key, value))
    with pytest.raises(UserError) as caught:
        load_exported(folder)
    assert str(path) in str(caught.value) and field in str(caught.value)


@pytest.mark.parametrize(
    "key, value, field",
    [
        ("num_views", 0, "num_views"),
        ("num_views", True, "num_views"),
        ("num_views", 10**6, "num_views"),
        ("level", "word", "level"),
        ("model.optimizer.lr", -1.0, "model.optimizer.lr"),
        ("model.optimizer.lr", "1e-4", "model.optimizer.lr"),
        ("model.optimizer.name", "lbfgs", "model.optimizer.name"),
        ("model.scheduler.cut_frac", 1.5, "model.scheduler.cut_frac"),
        ("model.dropout", 1.0, "model.dropout"),
        ("model.module.o_bias", [1], "model.module.o_bias"),
        ("model.module.threshold", 0.5, "model.module.threshold"),  # an MVML setting in an MVMD model
        ("model.module.loss_weights", [1.0], "loss_weights"),
        ("model.architecture", "models.mvmd.MVMD", "model.architecture"),
        ("encoder.max_length", 0, "encoder.max_length"),
        ("encoder._target_", "models.encoder.ChunkedEncoder", "encoder._target_"),
        ("encoder.trust_remote_code", True, "encoder.trust_remote_code"),
        ("labels", ["Vagueness", "Vagueness"], "labels"),
        ("labels", ["No such label"], "labels"),
        ("labels_inventory", 3, "labels_inventory"),
    ],
)
def test_a_wrong_model_json_field_is_one_message_naming_it(trained, tmp_path, key, value, field):
    assert_wrong_field_named(copy_of(trained["run"] / "fold0", tmp_path), "model.json", key, value, field)


def test_labels_in_another_order_than_the_inventory_are_refused(trained, tmp_path):
    folder = copy_of(trained["run"] / "fold0", tmp_path)
    meta = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    write_json(folder / "model.json", {**meta, "labels": list(reversed(meta["labels"]))})
    with pytest.raises(UserError, match="labels does not match"):
        load_exported(folder)


def test_model_json_that_is_not_an_object_or_holds_nan_is_one_message(trained, tmp_path):
    folder = copy_of(trained["run"] / "fold0", tmp_path)
    for content in (b"[1, 2]", b'{"num_views": NaN}', b"{", b"\xff\xfe{}"):
        (folder / "model.json").write_bytes(content)
        with pytest.raises(UserError, match="model.json"):
            load_exported(folder)


def _rewrite_weights(folder: Path, change) -> None:
    state = load_file(str(folder / "model.safetensors"))
    change(state)
    save_file(state, str(folder / "model.safetensors"))


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda s: s.update({"decoders.projection.weight": s["decoders.projection.weight"][:-3]}), "has shape"),
        (lambda s: s.update({"extra.weight": torch.zeros(2)}), "'extra.weight'"),
        (lambda s: s.pop("decoders.projection.bias"), "do not fit"),
        (lambda s: s["decoders.projection.bias"].fill_(float("nan")), "NaN"),
    ],
)
def test_weights_that_do_not_fit_the_config_are_one_message(trained, tmp_path, change, expected):
    folder = copy_of(trained["run"] / "fold0", tmp_path)
    _rewrite_weights(folder, change)
    with pytest.raises(UserError, match=expected) as caught:
        load_exported(folder)
    assert str(folder / "model.safetensors") in str(caught.value)


def test_a_pickle_in_place_of_the_weights_is_never_unpickled(trained, tmp_path, victim, monkeypatch):
    folder = copy_of(trained["run"] / "fold0", tmp_path)
    torch.save({"weights": torch.zeros(1)}, folder / "model.safetensors")
    calls = tripwires(monkeypatch)
    with pytest.raises(UserError, match="not a readable safetensors file"):
        load_exported(folder)
    monkeypatch.undo()
    assert calls == []


@pytest.mark.parametrize(
    "key, value, field",
    [
        ("thresholds", {"threshold": 1.5}, "thresholds.threshold"),
        ("views", ["b1"], "views"),
        ("encoder.path", "../../elsewhere", "encoder.path"),
        ("encoder.max_length", -5, "encoder.max_length"),
        ("module.decision.min_evidence", -1, "module.decision.min_evidence"),
        ("format_version", 99, "newer"),
    ],
)
def test_a_wrong_exported_config_field_is_one_message_naming_it(trained, tmp_path, key, value, field):
    assert_wrong_field_named(copy_of(trained["exported"], tmp_path), "config.json", key, value, field)


def test_an_encoder_folder_with_custom_code_is_refused_without_running_it(trained, tmp_path):
    """An exported encoder/config.json asking for its own configuration class (auto_map) needs trust_remote_code,
    which stays off: the module beside it is never imported."""
    folder = copy_of(trained["exported"], tmp_path)
    marker = tmp_path / "ran"
    (folder / "encoder" / "configuration_evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nfrom transformers import BertConfig\n"
        "class EvilConfig(BertConfig):\n    model_type = 'evil'\n",
        encoding="utf-8",
    )
    config = json.loads((folder / "encoder" / "config.json").read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoConfig": "configuration_evil.EvilConfig"}
    config["model_type"] = "evil"
    write_json(folder / "encoder" / "config.json", config)
    with pytest.raises(UserError, match="custom code"):
        load_exported(folder)
    assert not marker.exists()


def test_a_label_inventory_with_python_tags_is_refused_without_running_them(trained, tmp_path, victim):
    folder = copy_of(trained["exported"], tmp_path)
    (folder / "labels.yaml").write_text(f"fine: !!python/object/apply:os.remove [{str(victim)!r}]\n", encoding="utf-8")
    with pytest.raises(UserError, match="labels.yaml"):
        load_exported(folder)
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT

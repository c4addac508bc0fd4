"""Fuzzing the readers of saved Faina models: a fold's ``model.json`` and an exported folder's ``config.json``.

The readers are what ``faina.serving.fold_model.load_exported`` and ``faina.serving.model_folder.load_model_folder``
run before they build anything (``check_fold_folder``, ``check_model_folder``). Valid files written by the
project's writers (``fold_model_json``, ``write_model_folder``; the earlier release's Hydra layout of model.json
too) read back to exactly their values; junk at every JSON path, deleted keys, NaN/inf, huge numbers, deep
nesting, broken bytes and hostile ``_target_`` / ``_partial_`` / ``${...}`` nodes planted anywhere end in one
``UserError``, and no planted target is ever called (every family's callable is replaced by a recorder).
"""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.model_files import (
    FAINA_INVENTORY,
    TINY_BLOCK,
    as_bytes,
    encoders,
    exported_folder,
    flat_module,
    hostile_documents,
    hydra_form,
    inventory,
    model_blocks,
    spoiled_documents,
    tiny_fold_json,
    tiny_weights,
)
from fuzz.support import SCRATCH, fuzz_settings, outcome, spoiled_bytes, tried
from helpers.hostile import tripwires
from models.encoder_settings import EncoderSettings

FOLD = "fold model.json (check_fold_folder)"
FOLDER = "exported config.json (check_model_folder)"
VICTIM_TEXT = "keep me\n"
# the header fields a model trained with data.context reads, each once, in any order
contexts = st.lists(st.sampled_from(("topic", "date")), unique=True, max_size=2)


@pytest.fixture(scope="module", autouse=True)
def artefacts():
    """The tiny model, its weights and its exported folder, built before hypothesis draws anything."""
    tiny_weights()
    exported_folder()


def victim_file():
    victim = SCRATCH / "victim" / "VICTIM"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text(VICTIM_TEXT, encoding="utf-8")
    return victim


def fold_folder(model_json: bytes):
    folder = SCRATCH / "fold0"
    folder.mkdir(parents=True, exist_ok=True)
    weights = folder / "model.safetensors"
    if not weights.exists():
        weights.write_bytes(tiny_weights())
    (folder / "model.json").write_bytes(model_json)
    return folder


def read_fold(model_json: bytes):
    from faina.serving.fold_model import check_fold_folder

    tried(FOLD)
    return outcome(lambda: check_fold_folder(fold_folder(model_json)))


def unguarded_read(read, victim):
    """``read()`` with every hostile family's callable replaced by a recorder: nothing may be called."""
    with pytest.MonkeyPatch.context() as patch:
        calls = tripwires(patch)
        result = read()
    assert calls == [], calls
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
    return result


@st.composite
def fold_files(draw) -> tuple[dict, dict]:
    """``(model.json as written, the named model block it holds)``: today's format or the earlier Hydra one."""
    block = draw(model_blocks())
    meta = tiny_fold_json(block, num_views=draw(st.integers(1, 4)))
    meta["encoder"] = draw(encoders)
    if draw(st.booleans()):  # a model trained with data.context (absent: earlier releases, or none)
        meta["context"] = draw(contexts)
    flat = flat_module(block)
    if flat is not None and draw(st.booleans()):  # format 2: the decision rule as flat module keys
        meta = {**meta, "format_version": 2, "model": {**meta["model"], "module": flat}}
    if draw(st.booleans()):  # format 1: no format keys, the resolved Hydra model config
        model = hydra_form({**block, "module": meta["model"]["module"]})
        meta = {k: v for k, v in meta.items() if k not in ("format", "format_version")} | {"model": model}
    return meta, block


# --- fold model.json ----------------------------------------------------------------------------------------
@fuzz_settings(250)
@given(fold_files())
def test_valid_fold_model_json_reads_back_to_its_values(drawn):
    meta, block = drawn
    result, err = read_fold(json.dumps(meta).encode("utf-8"))
    assert err is None, err
    top, named, encoder, labels = result
    assert named.saved() == block
    assert top.context == meta.get("context", [])
    assert encoder.model_dump() == EncoderSettings(**meta["encoder"]).model_dump()  # absent keys: the defaults
    assert {key: encoder.model_dump()[key] for key in meta["encoder"]} == meta["encoder"]
    assert (top.task, top.level, top.grain, top.num_views) == (
        meta["task"],
        meta["level"],
        meta["grain"],
        meta["num_views"],
    )
    assert top.labels == list(labels.labels_of("fine")) == meta["labels"]


def _same_values_where_accepted(result, spoiled: dict):
    """An accepted spoiled model.json holds exactly what the file says (no coercion, no silent default)."""
    top, named, encoder, _ = result
    for key in ("task", "level", "grain", "labels", "num_views", "labels_inventory"):
        assert getattr(top, key) == spoiled[key]
    for key, value in spoiled["encoder"].items():
        assert written_as_read(value, encoder.model_dump()[key]), key
    module = spoiled["model"].get("module")
    if "architecture" in spoiled["model"] and isinstance(module, dict) and "decision" in module:  # today's form
        saved = named.saved()  # every written setting is the one read
        for part in ("module", "optimizer", "scheduler"):
            for key, value in spoiled["model"].get(part, {}).items():
                read = saved[part][key]
                # a partial decision / calibration block (a key deleted): the level's defaults for the rest
                assert ({k: read[k] for k in value} if isinstance(value, dict) else read) == value, key


@fuzz_settings(400)
@given(fold_files(), st.data())
def test_junk_in_a_fold_model_json_ends_in_one_user_error(drawn, data):
    meta, _ = drawn
    kind, spoiled = data.draw(spoiled_documents(meta))
    result, err = read_fold(as_bytes(spoiled))
    if kind in ("nan", "nested", "not-an-object"):
        assert err is not None
    if result is not None and isinstance(spoiled, dict):
        _same_values_where_accepted(result, spoiled)


@fuzz_settings(250)
@given(fold_files(), st.data())
def test_hostile_nodes_in_a_fold_model_json_are_refused_and_never_called(drawn, data):
    victim = victim_file()
    hostile = data.draw(hostile_documents(drawn[0], victim))
    _, err = unguarded_read(lambda: read_fold(json.dumps(hostile).encode("utf-8")), victim)
    assert err is not None and "model.json" in str(err)


@fuzz_settings(100)
@given(fold_files(), st.data())
def test_broken_bytes_in_a_fold_model_json_end_in_one_user_error(drawn, data):
    kind, spoiled = data.draw(spoiled_bytes(json.dumps(drawn[0], ensure_ascii=False).encode("utf-8")))
    result, err = read_fold(spoiled)
    if kind in ("utf-16", "invalid-utf8", "empty", "blank"):
        assert err is not None


# --- exported config.json -------------------------------------------------------------------------------------
def template_config() -> dict:
    return json.loads((exported_folder() / "config.json").read_text(encoding="utf-8"))


@st.composite
def folder_configs(draw) -> dict:
    """An exported config.json: the one ``write_model_folder`` wrote, with every free setting drawn anew."""
    config = template_config()
    num_views = draw(st.integers(1, 6))
    config.update(num_views=num_views, views=[f"a{v + 1}" for v in range(num_views)], dropout=draw(st.floats(0, 0.9)))
    if draw(st.booleans()):
        config["context"] = draw(contexts)
    if draw(st.booleans()):
        config["architecture"] = "MVML"
        config["module"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "decision": st.fixed_dictionaries(
                        {}, optional={"fixed": st.floats(0.01, 0.99), "min_evidence": st.integers(0, 9)}
                    ),
                    "gradual_unfreezing": st.booleans(),
                },
            )
        )
        config["thresholds"] = {"threshold": draw(st.floats(0, 1))}
    else:
        config["module"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "o_bias": st.floats(-5, 5),
                    "decision": st.fixed_dictionaries(
                        {}, optional={"tuned": st.booleans(), "min_evidence": st.integers(0, 9)}
                    ),
                    "head_lr": st.floats(1e-4, 1),
                },
            )
        )
        config["thresholds"] = {"o_bias": draw(st.lists(st.floats(-5, 5), max_size=3))}
    config["encoder"] = {
        **config["encoder"],
        "max_length": draw(st.integers(2, 512)),
        "name": draw(st.none() | st.sampled_from(("tiny", "alberto"))),
    }
    return config


def read_folder(config: bytes):
    from faina.serving.model_folder import check_model_folder

    folder = SCRATCH / "exported-copy"
    if not folder.exists():
        shutil.copytree(exported_folder(), folder)
    (folder / "config.json").write_bytes(config)
    tried(FOLDER)
    return outcome(lambda: check_model_folder(folder))


def test_the_exported_template_is_the_writers_output():
    config = template_config()
    assert config["format"] == "faina-model" and config["architecture"] == "MVMD"
    assert config["labels"] == list(inventory().labels_of("fine")) and FAINA_INVENTORY


@fuzz_settings(250)
@given(folder_configs())
def test_valid_exported_config_reads_back_to_its_values(config):
    result, err = read_folder(json.dumps(config).encode("utf-8"))
    assert err is None, err
    checked, named, _ = result
    dumped = checked.model_dump()
    for key in (
        "format",
        "format_version",
        "architecture",
        "task",
        "level",
        "grain",
        "labels",
        "views",
        "num_views",
        "thresholds",
        "module",
        "dropout",
    ):
        assert dumped[key] == config[key], key
    assert dumped["context"] == config.get("context", [])
    assert dumped["encoder"] == config["encoder"]
    saved = named.saved()
    assert saved["architecture"] == config["architecture"] and saved["dropout"] == config["dropout"]
    for key, value in config["module"].items():  # a partial decision block: the level's defaults for the rest
        read = saved["module"][key]
        assert ({k: read[k] for k in value} if key == "decision" else read) == value, key


@fuzz_settings(400)
@given(folder_configs(), st.data())
def test_junk_in_an_exported_config_ends_in_one_user_error(config, data):
    kind, spoiled = data.draw(spoiled_documents(config))
    result, err = read_folder(as_bytes(spoiled))
    if kind in ("nan", "nested", "not-an-object"):
        assert err is not None
    if result is not None and isinstance(spoiled, dict):
        dumped = result[0].model_dump()
        for key, value in spoiled.items():
            assert written_as_read(value, dumped[key]) if key == "encoder" else dumped[key] == value, key


def written_as_read(written, read) -> bool:
    """Every value the file writes is the one read; a mapping with keys deleted (the encoder block, its lora block)
    is compared on the keys it has, the rest being the schema's defaults."""
    if isinstance(written, dict) and isinstance(read, dict):
        return all(key in read and written_as_read(value, read[key]) for key, value in written.items())
    return written == read


@fuzz_settings(250)
@given(folder_configs(), st.data())
def test_hostile_nodes_in_an_exported_config_are_refused_and_never_called(config, data):
    victim = victim_file()
    hostile = data.draw(hostile_documents(config, victim))
    _, err = unguarded_read(lambda: read_folder(json.dumps(hostile).encode("utf-8")), victim)
    assert err is not None and "config.json" in str(err)


@fuzz_settings(100)
@given(folder_configs(), st.data())
def test_broken_bytes_in_an_exported_config_end_in_one_user_error(config, data):
    kind, spoiled = data.draw(spoiled_bytes(json.dumps(config, ensure_ascii=False).encode("utf-8")))
    _, err = read_folder(spoiled)
    if kind in ("utf-16", "invalid-utf8", "empty", "blank"):
        assert err is not None


@fuzz_settings(100)
@given(st.lists(st.text(max_size=8) | st.sampled_from(("topic", "date")), min_size=1, max_size=3))
def test_a_context_other_than_distinct_header_fields_is_one_user_error(fields):
    from faina.data.post_context import CONTEXT_FIELDS

    meta = tiny_fold_json(TINY_BLOCK) | {"context": fields}
    result, err = read_fold(json.dumps(meta).encode("utf-8"))
    valid = set(fields) <= set(CONTEXT_FIELDS) and len(set(fields)) == len(fields)
    assert (err is None) == valid, (fields, err)
    if not valid:
        assert "model.json" in str(err) and "context" in str(err)

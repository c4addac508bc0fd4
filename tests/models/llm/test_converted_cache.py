"""The GGUF -> safetensors cache: converted once, reused by hash, never trusted half-written, relocatable and
switchable off. The conversion itself is replaced by a tiny model (no GGUF file of a tiny model ships)."""

from __future__ import annotations

import json

import pytest
import torch

import models.llm.converted_cache as cache
from helpers.llm import tiny_spec
from models.llm.loading import CausalLMSpec, load_causal_lm


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    """A model folder holding a fake ``model.gguf``; converting it writes a tiny Llama + MiniLM tokenizer."""
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "model.gguf").write_bytes(b"GGUF not really" * 100)
    calls = []

    def convert(gguf_path, destination):
        calls.append(gguf_path)
        model, tokenizer = load_causal_lm(tiny_spec())
        model.save_pretrained(str(destination), safe_serialization=True)
        tokenizer.save_pretrained(str(destination))

    monkeypatch.setattr(cache, "convert_gguf", convert)
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    spec = CausalLMSpec(str(folder), gguf_file="model.gguf", device="cpu", converted_cache=str(tmp_path / "cache"))
    return spec, calls


def logits(model, tokenizer):
    with torch.no_grad():
        return model(**tokenizer("a premise and a claim", return_tensors="pt")).logits


def test_second_load_reads_the_cache_and_gives_the_same_model(fake_gguf, tmp_path):
    spec, calls = fake_gguf
    first = load_causal_lm(spec)
    second = load_causal_lm(spec)
    assert len(calls) == 1
    entries = [p for p in (tmp_path / "cache").iterdir()]
    assert [p.name for p in entries] == [cache.file_digest(tmp_path / "models" / "model.gguf")]  # no leftovers
    marker = json.loads((entries[0] / cache.MARKER).read_text())
    assert "model.safetensors" in marker["files"] and marker["sha256"] == entries[0].name
    assert torch.equal(logits(*first), logits(*second))
    assert second[1].padding_side == "left"


def test_a_changed_file_gets_a_new_entry(fake_gguf, tmp_path):
    spec, calls = fake_gguf
    load_causal_lm(spec)
    (tmp_path / "models" / "model.gguf").write_bytes(b"another GGUF" * 50)
    load_causal_lm(spec)
    assert len(calls) == 2 and len(list((tmp_path / "cache").iterdir())) == 2


@pytest.mark.parametrize("damage", ["no marker", "truncated weights", "garbled marker"])
def test_a_half_written_entry_is_never_trusted(fake_gguf, tmp_path, damage):
    spec, calls = fake_gguf
    expected = logits(*load_causal_lm(spec))
    [entry] = (tmp_path / "cache").iterdir()
    if damage == "no marker":
        (entry / cache.MARKER).unlink()
    elif damage == "truncated weights":
        weights = entry / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:1000])
    else:
        (entry / cache.MARKER).write_text("{not json")
    assert not cache.entry_is_complete(entry)
    again = load_causal_lm(spec)
    assert len(calls) == 2 and cache.entry_is_complete(entry)
    assert torch.equal(logits(*again), expected)


def test_a_failed_conversion_leaves_nothing_behind(fake_gguf, tmp_path, monkeypatch):
    spec, _ = fake_gguf

    def crash(gguf_path, destination):
        (destination / "model.safetensors").write_bytes(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(cache, "convert_gguf", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        load_causal_lm(spec)
    assert list((tmp_path / "cache").iterdir()) == []


def test_the_env_var_relocates_or_switches_off(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "elsewhere"))
    assert cache.cache_root() == tmp_path / "elsewhere"
    assert cache.cache_root(str(tmp_path / "config")) == tmp_path / "config"  # the config value wins
    for off in ("off", "0", "false", "none"):
        monkeypatch.setenv(cache.ENV_VAR, off)
        assert cache.cache_root() is None
    monkeypatch.delenv(cache.ENV_VAR)
    assert cache.cache_root("off") is None
    assert cache.cache_root().parts[-2:] == ("fallacy-framework", "converted")


def test_switched_off_the_gguf_file_is_loaded_directly(fake_gguf, tmp_path):
    from dataclasses import replace

    from models.llm.loading import model_source

    spec, calls = fake_gguf
    reference, kwargs = model_source(replace(spec, converted_cache="off"))
    assert reference == str(tmp_path / "models") and kwargs == {"gguf_file": "model.gguf"} and not calls


def test_a_missing_gguf_file_is_one_clear_error(fake_gguf):
    from dataclasses import replace

    from common.errors import UserError

    spec, _ = fake_gguf
    with pytest.raises(UserError, match="GGUF file 'absent.gguf'"):
        load_causal_lm(replace(spec, gguf_file="absent.gguf"))

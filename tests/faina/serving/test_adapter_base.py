"""Where an adapter folder's base encoder loads from (``faina.serving.model_folder.adapter_base``): a local base named
by its last component is found in the current directory or beside the model folder, and a base found in neither is
one message naming the folder's config.json and both places."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import UserError
from faina.serving.model_folder import adapter_base
from faina.serving.saved_files import FolderEncoder


def adapter_encoder(source: str | None) -> FolderEncoder:
    return FolderEncoder(name="my-llama", source=source, max_length=64, peft="lora")


@pytest.fixture
def shipped(tmp_path):
    """A received bundle: ``models/my-model`` (the adapter folder) and ``models/My-Llama-8B`` (its base)."""
    base = tmp_path / "models" / "My-Llama-8B"
    base.mkdir(parents=True)
    (base / "config.json").write_text("{}", encoding="utf-8")
    folder = tmp_path / "models" / "my-model"
    folder.mkdir()
    return folder, base


def test_a_local_base_is_found_beside_the_model_folder(shipped, tmp_path, monkeypatch):
    folder, base = shipped
    monkeypatch.chdir(tmp_path)  # the base is not in the current directory
    assert Path(adapter_base(adapter_encoder("My-Llama-8B"), folder)) == base


def test_a_base_in_the_current_directory_comes_first(shipped, tmp_path, monkeypatch):
    folder, _ = shipped
    here = tmp_path / "work"
    (here / "My-Llama-8B").mkdir(parents=True)
    monkeypatch.chdir(here)
    assert adapter_base(adapter_encoder("My-Llama-8B"), folder) == "My-Llama-8B"


@pytest.mark.parametrize("source", ["..", "."])
def test_a_source_that_walks_out_of_the_folder_is_never_looked_up_beside_it(shipped, tmp_path, monkeypatch, source):
    folder, _ = shipped
    monkeypatch.chdir(tmp_path / "models")
    resolved = adapter_base(adapter_encoder(source), folder)
    assert Path(resolved) == Path(source)  # as written, relative to where the user stands; never folder.parent/..


def test_a_missing_base_is_one_message_naming_both_places(shipped, tmp_path, monkeypatch):
    folder, _ = shipped
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError) as raised:
        adapter_base(adapter_encoder("Other-Base"), folder)
    assert "config.json" in str(raised.value.path)
    assert "current directory or beside the model folder" in raised.value.fix
    with pytest.raises(UserError, match="names no base model"):
        adapter_base(adapter_encoder(None), folder)

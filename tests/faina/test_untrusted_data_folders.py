"""Dataset and tokenizer folders are data: a loading script or custom tokenizer code beside them never runs."""

from __future__ import annotations

import json

import pytest

from common.errors import UserError


def test_a_dataset_folder_with_a_loading_script_is_refused_and_the_script_never_runs(tmp_path):
    from faina.data.hf_datasets import open_dataset

    folder = tmp_path / "posts"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "posts.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    (folder / "train.jsonl").write_text(json.dumps({"tokens": ["ciao"], "tags_a1": ["O"]}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="loading script"):
        open_dataset(str(folder), "train")
    assert not marker.exists()


def test_a_tokenizer_folder_with_custom_code_is_refused_and_the_code_never_runs(tmp_path):
    from transformers import AutoTokenizer

    from faina.serving.fold_model import load_tokenizer
    from models.encoder import offline_encoder_path

    folder = tmp_path / "tokenizer"
    AutoTokenizer.from_pretrained(offline_encoder_path()).save_pretrained(folder)
    marker = tmp_path / "ran"
    (folder / "tokenization_evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nfrom transformers import BertTokenizerFast as EvilTokenizer\n",
        encoding="utf-8",
    )
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoTokenizer": [None, "tokenization_evil.EvilTokenizer"]}
    config["tokenizer_class"] = "EvilTokenizer"
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(UserError, match="tokenizer"):
        load_tokenizer({"name_or_path": str(folder)})
    assert not marker.exists()

"""Each replica has its hub repository's file layout, formats, tokenizer kind and config fields, reproducibly."""

from __future__ import annotations

import json

import pytest

from models.hub_replicas.layouts import REPLICAS
from replica_cli import assert_ran, run_cli

EXPECTED = {
    # name: (model_type, tokenizer files present, tokenizer files absent)
    "alberto": ("bert", {"vocab.txt"}, {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}),
    "umberto": ("camembert", {"sentencepiece.bpe.model"}, {"tokenizer.json", "tokenizer_config.json"}),
    "llama2-chat": ("llama", {"tokenizer.model", "tokenizer.json", "tokenizer_config.json"}, set()),
    "llama3-instruct": ("llama", {"tokenizer.json", "tokenizer_config.json"}, {"tokenizer.model"}),
    "mixtral-instruct": ("mixtral", {"tokenizer.model", "tokenizer.json", "tokenizer_config.json"}, set()),
}


@pytest.mark.parametrize("name", sorted(REPLICAS))
def test_files_formats_and_config_match_the_hub_record(replicas, name):
    folder, replica = replicas[name], REPLICAS[name]
    assert sorted(p.name for p in folder.iterdir()) == sorted(replica.files)
    model_type, present, absent = EXPECTED[name]
    assert present <= set(replica.files) and not absent & set(replica.files)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == model_type and config["architectures"] == [replica.architecture]
    assert config["num_hidden_layers"] == 2 and config["hidden_size"] == 32
    for name_ in replica.files:
        if name_.endswith(".bin"):  # old-style pickled state dicts, as these hubs ship them
            assert (folder / name_).read_bytes()[:2] == b"PK"
        if name_.endswith(".safetensors"):
            header = int.from_bytes((folder / name_).read_bytes()[:8], "little")
            assert json.loads((folder / name_).read_bytes()[8 : 8 + header])["__metadata__"] == {"format": "pt"}
        if name_.endswith(".index.json"):
            weight_map = json.loads((folder / name_).read_text(encoding="utf-8"))["weight_map"]
            assert set(weight_map.values()) == {f for f in replica.files if f.startswith(name_.split(".")[0] + "-")}


def test_llm_configs_keep_the_hub_fields(replicas):
    llama3 = json.loads((replicas["llama3-instruct"] / "config.json").read_text(encoding="utf-8"))
    assert llama3["num_key_value_heads"] < llama3["num_attention_heads"] and llama3["rope_theta"] == 500000.0
    generation = json.loads((replicas["llama3-instruct"] / "generation_config.json").read_text(encoding="utf-8"))
    tokenizer_config = json.loads((replicas["llama3-instruct"] / "tokenizer_config.json").read_text(encoding="utf-8"))
    ids = {int(i): t["content"] for i, t in tokenizer_config["added_tokens_decoder"].items()}
    assert [ids[i] for i in generation["eos_token_id"]] == ["<|end_of_text|>", "<|eot_id|>"]
    assert tokenizer_config["eos_token"] == "<|eot_id|>" and "pad_token" not in tokenizer_config
    mixtral = json.loads((replicas["mixtral-instruct"] / "config.json").read_text(encoding="utf-8"))
    assert (mixtral["num_local_experts"], mixtral["num_experts_per_tok"], mixtral["sliding_window"]) == (8, 2, None)
    index = json.loads((replicas["mixtral-instruct"] / "model.safetensors.index.json").read_text(encoding="utf-8"))
    assert "model.layers.0.block_sparse_moe.experts.7.w2.weight" in index["weight_map"]  # the hub's expert keys
    llama2 = json.loads((replicas["llama2-chat"] / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert llama2["pad_token"] is None and llama2["legacy"] is False and "<<SYS>>" in llama2["chat_template"]


def test_the_same_command_writes_the_same_files(replicas, tmp_path):
    """Seeded weights and single-threaded tokenizer training: a second build is byte-identical."""
    from models.hub_replicas.layouts import write_replicas

    again = write_replicas(tmp_path, only=["umberto", "llama3-instruct"])
    for name, folder in again.items():
        for file in REPLICAS[name].files:
            assert (folder / file).read_bytes() == (replicas[name] / file).read_bytes(), f"{name}/{file} differs"


@pytest.mark.slow  # the replicas command in fresh processes
def test_command_line_help_and_only(tmp_path):
    shown = run_cli("-m", "models.replicas", "--help")
    assert_ran(shown)
    assert shown.stdout.startswith("usage: python -m models.replicas") and "OUT_DIR" in shown.stdout.upper()
    assert "--only" in shown.stdout
    written = run_cli("-m", "models.replicas", str(tmp_path), "--only", "alberto")
    assert_ran(written)
    assert [p.name for p in tmp_path.iterdir()] == ["alberto"]
    assert "m-polignano-uniba/bert_uncased_L-12_H-768_A-12_italian_alb3rt0" in written.stdout

"""Missci and Faina with the LLaMA 2 chat, Llama 3 Instruct and Mixtral Instruct replicas, through train.py and
``python -m missci.predict_lora``: zero-shot answers generated through each chat template and parsed, LoRA
adapters trained on a model without a pad token, saved and reloaded in a fresh process, and ``load_in_4bit``
(on in these configs, as in the papers) skipped on a CPU machine with one notice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replica_cli import assert_ran, run_cli

FOUR_BIT = "load_in_4bit=true is skipped"
LLM_CONFIG = {
    "llama2-chat": "llama2-7b",
    "llama3-instruct": "llama3-8b-instruct",
    "mixtral-instruct": "mixtral-8x7b-instruct",
}


def llm_overrides(replicas, name: str) -> list[str]:
    """The hub config of the model (hub id and 4-bit as shipped), pointed at the replica like a download."""
    return [f"llm={LLM_CONFIG[name]}", f"llm.name_or_path={replicas[name]}"]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def assert_parsed_predictions(rows: list[dict]) -> None:
    assert rows
    for row in rows:
        assert isinstance(row["raw_output"], str) and isinstance(row["predictions"], list)
        assert all({"class", "premise"} <= set(p) for p in row["predictions"])


def missci_zero_shot(replicas, tmp_path: Path, name: str, *extra: str):
    return run_cli(
        "train.py",
        "task=missci-gen",
        *llm_overrides(replicas, name),
        "mode=zero-shot",
        "task.data_dir=sample",
        "task.split=dev",
        "task.max_arguments=1",
        "task.generation.max_new_tokens=8",
        "task.premise_metrics=null",
        f"paths.root_dir={tmp_path}",
        f"name=zs-{name}",
        *extra,
    )


@pytest.mark.parametrize(
    "name", [pytest.param("llama3-instruct"), pytest.param("mixtral-instruct", marks=pytest.mark.slow)]
)
def test_missci_zero_shot(replicas, tmp_path, name):
    result = missci_zero_shot(replicas, tmp_path, name)
    assert_ran(result)
    assert result.stderr.count(FOUR_BIT) == 1
    out = tmp_path / "results" / f"zs-{name}"
    assert_parsed_predictions(read_jsonl(out / "predictions-dev.jsonl"))
    metrics = json.loads((out / "metrics-dev.json").read_text(encoding="utf-8"))
    assert 0.0 <= metrics["metrics"]["p@1"] <= 1.0 and metrics["counts"]["fallacies"] == 1
    assert metrics["llm"] == LLM_CONFIG[name]


def test_missci_zero_shot_mixtral_with_a_system_prompt_stops_with_one_message(replicas, tmp_path):
    result = missci_zero_shot(replicas, tmp_path, "mixtral-instruct", "+task.generation.system_prompt=Sei un esperto")
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "system" in errors[0] and "task.generation.system_prompt=null" in errors[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "name", [pytest.param("mixtral-instruct"), pytest.param("llama3-instruct", marks=pytest.mark.slow)]
)
def test_faina_zero_shot(replicas, tmp_path, name):
    result = run_cli(
        "train.py",
        "task=post-c",
        *llm_overrides(replicas, name),
        "mode=zero-shot",
        "task.zero_shot.limit=2",
        "task.zero_shot.max_new_tokens=8",
        f"paths.root_dir={tmp_path}",
    )
    assert_ran(result)
    assert result.stderr.count(FOUR_BIT) == 1 and "Output audit (2 outputs" in result.stdout
    [out] = (tmp_path / "results").glob(f"post-c-sample-zeroshot-{LLM_CONFIG[name]}-*")
    assert list(out.glob("*.tsv")) and list(out.glob("*.json"))


def test_lora_finetune_and_candidates_with_llama2_chat(replicas, tmp_path):
    """LLaMA 2 chat ships no pad token; training pads with EOS, the adapter reloads in a fresh process."""
    assert json.loads((replicas["llama2-chat"] / "tokenizer_config.json").read_text())["pad_token"] is None
    trained = run_cli(
        "train.py",
        "task=missci-gen",
        *llm_overrides(replicas, "llama2-chat"),
        "cv=official",
        "task.data_dir=sample",
        "task.lora.max_train_examples=4",
        "task.lora.max_steps=2",
        "task.max_fallacies=1",
        "task.lora.candidates.max_new_tokens=6",
        "task.lora.candidates.num_candidates=2",
        "task.lora.max_length=512",
        "task.premise_metrics=null",
        f"paths.root_dir={tmp_path}",
        "name=lora-llama2",
    )
    assert_ran(trained)
    assert trained.stderr.count(FOUR_BIT) == 1
    fold = tmp_path / "results" / "lora-llama2" / "fold0"
    adapter = fold / "adapter"
    assert (adapter / "adapter_model.safetensors").is_file()
    assert json.loads((adapter / "adapter_config.json").read_text())["base_model_name_or_path"] == str(
        replicas["llama2-chat"]
    )
    assert_parsed_predictions(read_jsonl(fold / "predictions.jsonl"))

    out = tmp_path / "reloaded.jsonl"
    predicted = run_cli(
        "-m",
        "missci.predict_lora",
        str(adapter),
        "--out",
        str(out),
        "--data",
        "sample",
        "--split",
        "dev",
        "--max-fallacies",
        "1",
        "--max-new-tokens",
        "6",
        "--evaluate",
        "--no-premise-metrics",
        "--json",
    )
    assert_ran(predicted)
    rows = read_jsonl(out)
    assert_parsed_predictions(rows)
    assert all(len(row["candidate_outputs"]) == 2 for row in rows)
    assert json.loads(predicted.stdout)["predictions"] == str(out)

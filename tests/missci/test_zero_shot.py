"""Zero-shot reconstruction end to end: a tiny random Llama (fast), the Hydra wiring, and SmolLM2 (slow)."""

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from helpers.configs import compose_train
from missci.dataset.prediction_file import read_predictions
from missci.dataset.reader import load_split
from missci.zero_shot.reconstruction import run_zero_shot, select

CONF = Path(__file__).resolve().parents[2] / "conf"
NO_MODEL_METRICS = {"meteor": True, "sbert_model": "minilm", "bertscore_model": None, "nli_model": None}


def first_fallacy_ids(data_dir, split: str, count: int) -> list[str]:
    """The ids of the first ``count`` R_i of a split, in file order."""
    return [f.id for a in load_split(split, data_dir) for f in a.fallacies][:count]


def llm_config(name: str) -> dict:
    return OmegaConf.to_container(OmegaConf.load(CONF / "llm" / f"{name}.yaml"), resolve=True)


def run_on_first_fallacies(tmp_path, data_dir, llm: str, max_new_tokens: int, count: int, **options) -> dict:
    """``run_zero_shot`` of ``conf/llm/<llm>.yaml`` on the first ``count`` R_i of dev, two prompts a batch, with the
    premise metrics that need no model download; its files go to ``tmp_path``."""
    return run_zero_shot(
        llm=llm_config(llm),
        split="dev",
        data_dir=str(data_dir),
        generation={"max_new_tokens": max_new_tokens, "batch_size": 2},
        output_dir=tmp_path,
        max_fallacies=count,
        premise_metrics=NO_MODEL_METRICS,
        **options,
    )


def test_select_limits_fallacies(data_dir):
    arguments = load_split("dev", data_dir)
    chosen = select(arguments, max_fallacies=3)
    assert sum(len(a.fallacies) for a in chosen) == 3
    assert [a.id for a in chosen] == [a.id for a in arguments[: len(chosen)]]
    assert [f.id for a in chosen for f in a.fallacies] == first_fallacy_ids(data_dir, "dev", 3)
    two = select(arguments, max_arguments=2)
    assert [a.id for a in two] == [a.id for a in arguments[:2]] and two[1].fallacies == arguments[1].fallacies


def test_tiny_model_end_to_end(tmp_path, data_dir, capsys, monkeypatch):
    for module in ("common.progress", "common.progress_bar"):  # as on a terminal: the generation bars show
        monkeypatch.setattr(f"{module}.on_terminal", lambda: True)
    metrics = run_on_first_fallacies(tmp_path, data_dir, "tiny-llama", 6, 3, consistency=True)
    predictions = read_predictions(tmp_path / "predictions-dev.jsonl")
    assert [p.fallacy_id for p in predictions] == first_fallacy_ids(data_dir, "dev", 3)
    assert all(p.raw_output is not None and p.predictions and p.reclassified for p in predictions)
    saved = json.loads((tmp_path / "metrics-dev.json").read_text())
    assert saved["counts"]["fallacies"] == 3 and saved["llm"] == "tiny-llama"
    assert 0.0 <= metrics["dev/p@1"] <= 1.0 and "dev/meteor" in metrics and "dev/consistency" in metrics
    assert all(isinstance(v, float) for v in metrics.values())
    progress = capsys.readouterr().err  # 3 prompts in batches of 2, then the consistency pass
    assert "generating for 3 prompts" in progress and "2/2" in progress


def train_zero_shot(task: str, tmp_path, data_dir, *overrides: str) -> dict:
    """``train.run`` of the composed config ``task=<task> llm=tiny-llama mode=zero-shot`` on the first two R_i of
    dev (four new tokens an answer), writing to ``tmp_path``; ``overrides`` are added last."""
    import train

    common = [
        f"task={task}",
        "llm=tiny-llama",
        "mode=zero-shot",
        "task.split=dev",
        "task.max_fallacies=2",
        f"task.data_dir={data_dir}",
        f"task.output_dir={tmp_path}",
        "task.generation.max_new_tokens=4",
    ]
    return train.run(compose_train(*common, *overrides))


def test_hydra_composed_config_runs(tmp_path, data_dir, capsys):
    metrics = train_zero_shot("missci-gen", tmp_path, data_dir, "task.premise_metrics=null")
    assert set(metrics) >= {"dev/p@1", "dev/arg@1", "dev/f1_micro"}
    assert len(read_predictions(tmp_path / "predictions-dev.jsonl")) == 2
    out = capsys.readouterr().out  # the results on stdout, as the command contract says
    assert out.startswith("### missci-gen · zero-shot · tiny-llama · dev")
    assert f"{'dev/p@1':<42} {metrics['dev/p@1']}" in out and f"results: {tmp_path}" in out


def test_hydra_classification_task(tmp_path, data_dir, capsys):
    metrics = train_zero_shot("missci-cls", tmp_path, data_dir)
    assert set(metrics) == {"dev/cls/accuracy", "dev/cls/f1_macro"}
    out = capsys.readouterr().out
    assert out.startswith("### missci-cls · zero-shot · tiny-llama · dev") and "dev/cls/accuracy" in out
    rows = [json.loads(line) for line in (tmp_path / "classify-dev.jsonl").read_text().splitlines()]
    chosen = select(load_split("dev", data_dir), max_fallacies=2)
    alternatives = [alt for a in chosen for f in a.fallacies for alt in f.interchangeable]
    assert [r["id"] for r in rows] == [alt.id for alt in alternatives]  # one row per interchangeable fallacy
    assert [r["gold"] for r in rows] == [alt.fallacy_class for alt in alternatives]
    saved = json.loads((tmp_path / "metrics-classify-dev.json").read_text())
    labels = saved["confusion"]["labels"]
    assert labels[-1] == "Other" and len(labels) >= 10 and sum(map(sum, saved["confusion"]["matrix"])) == len(rows)
    first = rows[0]["gold"]
    gold_row = saved["confusion"]["matrix"][labels.index(first)]
    assert sum(gold_row) == sum(r["gold"] == first for r in rows)
    assert saved["per_class"][first]["support"] == sum(gold_row)
    assert saved["paper"]["rows"]["GPT-4 (L+E)"] == {"accuracy": 0.771, "f1_macro": 0.682}


@pytest.mark.slow
def test_smollm2_zero_shot_few_fallacies(tmp_path, data_dir):
    metrics = run_on_first_fallacies(tmp_path, data_dir, "smollm2", 40, 2)
    predictions = read_predictions(tmp_path / "predictions-dev.jsonl")
    assert len(predictions) == 2 and all(p.raw_output.strip() for p in predictions)
    assert {"dev/p@1", "dev/arg@1", "dev/f1_micro", "dev/meteor"} <= set(metrics)

"""The finetune runner through Hydra on a tiny random Llama: folds, adapters, pooled scores, reruns, the CLI."""

import json
import logging

import pytest
import torch

import train
from helpers.lora import QUICK_RUN, compose
from missci.dataset.prediction_file import read_predictions
from missci.dataset.reader import load_split
from missci.predict_lora import main as predict_main

pytestmark = pytest.mark.e2e


def run(tmp_path, data_dir, *overrides):
    cfg = compose(
        [
            "task=missci-gen",
            f"task.data_dir={data_dir}",
            f"paths.results_dir={tmp_path}",
            "task.premise_metrics=null",
            *QUICK_RUN,
            *overrides,
        ]
    )
    return cfg, train.run(cfg)


def test_official_run_trains_saves_predicts_and_reruns(tmp_path, data_dir, capsys, caplog):
    caplog.set_level(logging.INFO)
    cfg, metrics = run(tmp_path, data_dir, "cv=official", "name=official", "checkpoint.keep=true")
    fold = tmp_path / "official" / "fold0"
    result = json.loads((fold / "metrics.json").read_text())
    dev, test = load_split("dev", data_dir), load_split("test", data_dir)
    assert result["train_examples"] == 4 and result["train_arguments"] == len(dev)
    assert {"test/p@1", "test/arg@1", "test/f1_micro", "folds/p@1_mean"} <= set(metrics)
    assert "all/p@1" not in metrics  # cv=official has one view: the test split
    predictions = read_predictions(fold / "predictions.jsonl")
    assert [p.fallacy_id for p in predictions] == [f.id for a in test for f in a.fallacies][:2]
    assert all(len(p.extra["candidate_outputs"]) == 2 for p in predictions)
    bundle = json.loads((fold / "adapter" / "missci_lora.json").read_text())
    assert bundle["task"] == "missci-gen" and bundle["llm"]["name"] == "tiny-llama"
    assert set(bundle["trained_on_arguments"]) == {a.id for a in dev}
    checkpoint = torch.load(fold / "checkpoints" / "last.ckpt", weights_only=True)
    assert checkpoint["state_dict"] and all("lora_" in k for k in checkpoint["state_dict"])
    assert "| p@1 |" in (tmp_path / "official" / "results.md").read_text()

    stamp = (fold / "metrics.json").stat().st_mtime_ns
    caplog.clear()
    _, again = run(tmp_path, data_dir, "cv=official", "name=official", "checkpoint.keep=true")
    assert "finished earlier" in caplog.text and (fold / "metrics.json").stat().st_mtime_ns == stamp
    assert again == metrics

    # the saved adapter, reloaded by the CLI, predicts exactly what the run predicted
    out = tmp_path / "cli.jsonl"
    result = predict_main(
        [
            str(fold / "adapter"),
            "--out",
            str(out),
            "--data",
            str(data_dir),
            "--split",
            "test",
            "--max-fallacies",
            "2",
            "--evaluate",
            "--no-premise-metrics",
            "--json",
        ]
    )
    assert out.read_text() == (fold / "predictions.jsonl").read_text()
    assert result["held_out"] is True and result["metrics"]["p@1"] == metrics["test/p@1"]


def test_kfold_pools_held_out_predictions(tmp_path, data_dir):
    from missci.dataset.selection import select
    from missci.lora.runner import fold_plans

    cfg, metrics = run(tmp_path, data_dir, "cv=kfold", "task.max_fallacies=8", "name=cv")
    results = json.loads((tmp_path / "cv" / "results.json").read_text())
    # a reduced run trains only the folds that hold one of the chosen R_i (the first 8 of the test split)
    holding = [p.index for p in fold_plans(cfg.cv, 42, str(data_dir), None, 8) if p.predict]
    assert [f["fold"] for f in results["folds"]] == holding and 1 <= len(holding) < 5
    assert {"all/p@1", "test/p@1", "folds/p@1_mean", "folds/p@1_std"} <= set(metrics)
    assert results["evaluated"]["test"] == results["evaluated"]["all"] and results["evaluated"]["all"]["fallacies"] == 8
    predicted = set()
    for fold in results["folds"]:
        bundle = json.loads((tmp_path / "cv" / f"fold{fold['fold']}" / "adapter" / "missci_lora.json").read_text())
        ids = {p.argument_id for p in read_predictions(fold["prediction_file"])}
        assert ids and not ids & set(bundle["trained_on_arguments"])
        predicted |= {p.fallacy_id for p in read_predictions(fold["prediction_file"])}
    assert predicted == {f.id for a in select(load_split("test", data_dir), None, 8) for f in a.fallacies}


def test_other_configuration_in_same_folder_is_refused(tmp_path, data_dir):
    run(tmp_path, data_dir, "cv=official", "name=guarded")
    from common.errors import UserError

    with pytest.raises(UserError, match="another configuration"):
        run(tmp_path, data_dir, "cv=official", "name=guarded", "task.lora.rank=4")


def test_weight_averaging_is_refused_for_an_adapter(tmp_path, data_dir):
    """checkpoint.average_last is the encoders' option: a LoRA fold says so before loading its model."""
    from common.errors import UserError

    with pytest.raises(UserError, match="checkpoint.average_last"):
        run(tmp_path, data_dir, "cv=official", "name=averaged", "checkpoint.average_last=2")


def test_early_stopping_is_refused_for_an_adapter(tmp_path, data_dir):
    """early_stopping.patience stops on a dev metric, which a LoRA fold does not have: it says so before training."""
    from common.errors import UserError

    with pytest.raises(UserError, match="early_stopping.patience stops on a dev metric") as info:
        run(tmp_path, data_dir, "cv=official", "name=stopping", "early_stopping.patience=2")
    assert "drop early_stopping.patience" in info.value.fix


def test_classification_task_finetunes(tmp_path, data_dir):
    cfg = compose(
        [
            "task=missci-cls",
            f"task.data_dir={data_dir}",
            f"paths.results_dir={tmp_path}",
            "cv=official",
            "name=cls",
            *QUICK_RUN,
        ]
    )
    metrics = train.run(cfg)
    assert set(metrics) >= {"test/accuracy", "test/f1_macro", "folds/accuracy_mean"}
    rows = [json.loads(line) for line in (tmp_path / "cls" / "fold0" / "classify.jsonl").read_text().splitlines()]
    from missci.dataset.selection import select

    alternatives = [
        alt
        for a in select(load_split("test", data_dir), max_fallacies=2)
        for f in a.fallacies
        for alt in f.interchangeable
    ]
    assert [(r["id"], r["gold"]) for r in rows] == [(alt.id, alt.fallacy_class) for alt in alternatives]
    assert all("predicted" in r for r in rows)
    classes = json.loads((tmp_path / "cls" / "results.json").read_text())["classes"]["test"]
    assert sum(map(sum, classes["confusion"]["matrix"])) == len(rows) and "Table 3" in classes["paper"]["source"]
    assert sum(c["support"] for c in classes["per_class"].values()) == len(rows)


def test_cli_rejects_a_folder_without_adapter(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        predict_main([str(tmp_path), "--out", str(tmp_path / "x.jsonl")])
    assert exit_info.value.code == 2
    assert "missci_lora.json is missing" in capsys.readouterr().err


def test_results_say_why_a_premise_metric_is_missing(tmp_path, data_dir):
    """An NLI model that cannot be loaded leaves NLI-A/S out of results.json with the reason, which
    missci.report prints instead of 'not computed'; METEOR is computed and its model named."""
    from missci.analysis.report_table import load_rows

    cfg = compose(
        [
            "task=missci-gen",
            f"task.data_dir={data_dir}",
            f"paths.results_dir={tmp_path}",
            *QUICK_RUN,
            "cv=official",
            "name=nli",
            "task.premise_metrics.bertscore_model=null",
            f"task.premise_metrics.nli_model={tmp_path / 'no-such-nli-model'}",
        ]
    )
    train.run(cfg)
    results = json.loads((tmp_path / "nli" / "results.json").read_text())
    assert set(results["unavailable"]) == {"nli_a", "nli_s"}
    assert "meteor" in results["pooled"]["test"] and "meteor" in results["models"]
    assert (
        json.loads((tmp_path / "nli" / "fold0" / "metrics.json").read_text())["unavailable"] == results["unavailable"]
    )
    [row] = load_rows(tmp_path / "nli")
    assert row.unavailable["nli_a"] == results["unavailable"]["nli_a"]
    assert "not computed" not in row.unavailable["nli_a"]

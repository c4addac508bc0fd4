"""SmolLM2 end to end (slow): a few LoRA steps, generation, parsing and evaluation through the Hydra runner."""

import json

import pytest

import train
from helpers.lora import compose
from missci.dataset.prediction_file import read_predictions


@pytest.mark.slow
def test_smollm2_finetune_few_steps(tmp_path, data_dir):
    cfg = compose(
        [
            "task=missci-gen",
            "llm=smollm2",
            "cv=official",
            "name=smol",
            "callbacks=none",
            "logger=csv",
            f"task.data_dir={data_dir}",
            f"paths.results_dir={tmp_path}",
            "task.prompt.definitions=false",
            "task.lora.max_train_examples=4",
            "task.lora.batch_size=2",
            "task.lora.max_steps=2",
            "task.max_fallacies=2",
            "task.lora.candidates.num_candidates=2",
            "task.lora.candidates.max_new_tokens=24",
            "task.premise_metrics.bertscore_model=null",
            "task.premise_metrics.nli_model=null",
        ]
    )
    metrics = train.run(cfg)
    fold = tmp_path / "smol" / "fold0"
    predictions = read_predictions(fold / "predictions.jsonl")
    assert len(predictions) == 2 and all(p.raw_output.strip() and p.predictions for p in predictions)
    assert {"test/p@1", "test/arg@1", "test/f1_micro", "test/meteor"} <= set(metrics)
    saved = json.loads((fold / "metrics.json").read_text())
    assert saved["train_examples"] == 4 and 0 < saved["trainable_parameters"] < saved["total_parameters"] / 50
    assert (fold / "adapter" / "adapter_model.safetensors").is_file()

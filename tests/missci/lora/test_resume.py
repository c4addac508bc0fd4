"""The LoRA runner shares the fold loop: a fold resumed after a crash ends like an uninterrupted one."""

import json
import logging

import pytest

import train
from helpers.lora import compose
from runner_helpers import SimulatedCrash

pytestmark = pytest.mark.e2e

QUICK = [
    "llm=tiny-llama",
    "callbacks=none",
    "logger=none",
    "task.lora.max_steps=-1",
    "task.lora.max_epochs=2",
    "task.lora.batch_size=2",
    "task.lora.max_train_examples=4",
    "task.lora.candidates.max_new_tokens=4",
    "task.lora.candidates.num_candidates=2",
    "task.max_fallacies=2",
    "task.premise_metrics=null",
    "cv=official",
]


def test_resumed_lora_fold_ends_like_an_uninterrupted_one(tmp_path, data_dir, caplog):
    caplog.set_level(logging.INFO)

    def cfg(name, *extra):
        return compose(
            [
                "task=missci-gen",
                f"task.data_dir={data_dir}",
                f"paths.results_dir={tmp_path}",
                *QUICK,
                f"name={name}",
                "checkpoint.resume_every_n_epochs=1",
                *extra,
            ]
        )

    crash = [
        "+callbacks.crash._target_=runner_helpers.CrashAfterEpoch",
        "+callbacks.crash.epoch=1",
    ]  # after epoch 0's checkpoint
    with pytest.raises(SimulatedCrash):
        train.run(cfg("resumed", *crash))
    assert (tmp_path / "resumed" / "fold0" / "checkpoints" / "last.ckpt").is_file()
    caplog.clear()
    resumed = train.run(cfg("resumed"))
    assert "fold 0: resuming from" in caplog.text
    straight = train.run(cfg("straight"))
    assert resumed == straight
    a, b = tmp_path / "resumed" / "fold0", tmp_path / "straight" / "fold0"
    for name in ("predictions.jsonl", "adapter/adapter_model.safetensors"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert json.loads((a / "metrics.json").read_text())["test"] == json.loads((b / "metrics.json").read_text())["test"]

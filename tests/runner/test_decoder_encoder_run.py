"""A decoder LLM as the shared encoder, end to end through the commands: ``train.py task=span-f encoder=tiny-llama
encoder.peft=lora encoder.attention=bidirectional`` and its post-f twin train one short fold, save an adapter-sized
fold folder (the adapter and the heads, no base weight), and ``faina.export``, ``faina.predict`` and ``faina.tag``
reload it in fresh processes, the exported folder predicting exactly what the fold folder predicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors import safe_open

from replica_cli import assert_ran, run_cli, train_short_fold
from tests_paths import REPO

pytestmark = pytest.mark.e2e
POST = "Studio americano: la mutazione è pericolosa... l'Italia agli italiani! #vaccini e i governi parlano"


def train(root: Path, task: str) -> Path:
    overrides = (f"task={task}", "encoder=tiny-llama", "encoder.peft=lora", "encoder.attention=bidirectional")
    return train_short_fold(root, f"llm-{task}", *overrides, "encoder.max_length=16")


@pytest.mark.parametrize("task", ["span-f", "post-f"])
def test_a_lora_llm_encoder_trains_saves_its_adapter_and_reloads_in_fresh_processes(tmp_path, task):
    fold = train(tmp_path, task)
    with safe_open(str(fold / "model.safetensors"), framework="pt") as weights:
        names = list(weights.keys())
    encoder_tensors = [name for name in names if name.startswith("encoder.")]
    assert encoder_tensors and all(".lora_" in name for name in encoder_tensors)  # adapters, no base weight
    assert any(not name.startswith("encoder.") for name in names)  # and the heads
    saved = json.loads((fold / "model.json").read_text(encoding="utf-8"))["encoder"]
    assert (saved["name_or_path"], saved["peft"], saved["attention"]) == ("tiny-llama", "lora", "bidirectional")

    export = tmp_path / "export"
    assert_ran(run_cli("-m", "faina.export", str(fold), str(export)))
    config = json.loads((export / "config.json").read_text(encoding="utf-8"))["encoder"]
    assert (config["source"], config["peft"], config["attention"]) == ("tiny-llama", "lora", "bidirectional")
    assert "adapter: lora (rank 8" in (export / "README.md").read_text(encoding="utf-8")
    assert (export / "model.safetensors").stat().st_size < 200_000  # a 2-layer adapter and heads: kilobytes

    ext = "conll" if task.startswith("span") else "tsv"
    unlabelled = REPO / "faina" / "sample_data" / f"sample-unlabelled.{ext}"
    predicted = {}
    for source in (fold, export):
        out = tmp_path / f"{source.name}.{ext}"
        assert_ran(run_cli("-m", "faina.predict", str(source), str(unlabelled), str(out)))
        predicted[source.name] = out.read_text(encoding="utf-8")
    assert predicted["fold0"] == predicted["export"]

    tagged = run_cli("-m", "faina.tag", str(export), "--text", POST, "--json")
    assert_ran(tagged)
    [post] = [json.loads(line) for line in tagged.stdout.splitlines() if line.strip()]
    assert "".join(post["tokens"]) == POST.replace(" ", "")


@pytest.mark.slow
def test_the_encoder_benchmark_prints_a_row_per_configuration():
    done = run_cli(
        "scripts/benchmark_encoders.py",
        "--configs",
        "tiny-llama-lora-causal",
        "tiny-llama-lora-bidirectional",
        "--posts",
        "8",
        "--batch-size",
        "4",
        "--steps",
        "1",
        "--threads",
        "1",
    )
    assert_ran(done)
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith("| tiny-llama")]
    assert [row[1].strip() for row in rows] == ["tiny-llama-lora-causal", "tiny-llama-lora-bidirectional"]
    for row in rows:
        assert float(row[2]) > 0 and float(row[6]) > 0  # seconds per step, peak RSS
        assert row[4].strip().endswith("M") and " / " in row[4]  # trainable / all parameters


@pytest.mark.parametrize(
    "overrides, words",
    [
        (["encoder.attention=sideways"], ["encoder.attention='sideways'", "bidirectional-top-K"]),
        (["encoder.lora.target_modules=[query_key]"], ["LoRA cannot be attached", "encoder.lora.target_modules"]),
        (
            ["encoder=minilm", "encoder.attention=bidirectional"],
            ["already attends both ways", "encoder.attention=null"],
        ),
    ],
)
def test_a_bad_encoder_setting_is_one_line_before_anything_trains(tmp_path, overrides, words):
    done = run_cli("train.py", "task=span-f", "encoder=tiny-llama", *overrides, f"paths.root_dir={tmp_path}")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert all(word in line for word in words), line
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("metrics.json"))

"""What one training step costs with each encoder: seconds per step and peak memory, side by side.

Each configuration trains, in its own child process (so that its peak resident memory is its own), the framework's
model of the task (MVMD span-f or MVML post-f, built as ``train.py`` builds it) on the same posts of the synthetic
sample (or any Faina-format file) in the same batches, for ``steps`` optimiser steps after one warm-up step; the
figure is the median wall time of a step (forward, backward, AdamW), with the process's CPU time beside it, and
the child's peak RSS. The encoders are ``conf/encoder/<name>.yaml`` with overrides (``CONFIGURATIONS``): MiniLM
fine-tuned whole, SmolLM2 with LoRA keeping its causal mask or without it, and tiny-llama's twins (the tests').

    python scripts/benchmark_encoders.py [--task span-f] [--configs minilm smollm2-lora-causal ...]
        [--posts 32] [--batch-size 8] [--steps 5] [--threads 2]

Measured figures: docs/models.md. This is a benchmark, not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "faina" / "sample_data" / "sample.conll"
# name -> (conf/encoder file, overrides of its keys)
CONFIGURATIONS: dict[str, tuple[str, dict]] = {
    "minilm": ("minilm", {}),
    "smollm2-lora-causal": ("smollm2", {}),
    "smollm2-lora-bidirectional": ("smollm2", {"attention": "bidirectional"}),
    "tiny-llama-lora-causal": ("tiny-llama", {}),
    "tiny-llama-lora-bidirectional": ("tiny-llama", {"attention": "bidirectional"}),
}
DEFAULT_CONFIGURATIONS = ("minilm", "smollm2-lora-causal", "smollm2-lora-bidirectional")
MODEL_OF_TASK = {"span-f": ("mvmd", "span"), "post-f": ("mvml", "post")}


def encoder_block(name: str) -> dict:
    """The encoder config of a configuration, as ``train.py encoder=<file> encoder.KEY=VALUE`` resolves it."""
    from omegaconf import OmegaConf

    from models.encoder import offline_encoder_path

    file, overrides = CONFIGURATIONS[name]
    block = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "encoder" / f"{file}.yaml"), resolve=False)
    if str(block["name_or_path"]).startswith("${"):  # the offline MiniLM's resolver
        block["name_or_path"] = offline_encoder_path()
    return {**block, **overrides}


def measure(name: str, task: str, posts: int, batch_size: int, steps: int, data: Path = SAMPLE) -> dict:
    """Train ``steps`` steps of the configuration in this process; its step times, parameters and peak RSS."""
    import torch
    from omegaconf import OmegaConf

    from faina.data.features import Collator
    from faina.data.levels import LEVELS
    from faina.data.task_data import load_task_data
    from faina.formats.labels import LabelInventory
    from faina.serving.fold_model import load_tokenizer
    from faina.training.model_building import build_model

    model_name, level = MODEL_OF_TASK[task]
    encoder_cfg = OmegaConf.create(encoder_block(name))
    model_cfg = OmegaConf.load(REPO / "conf" / "model" / f"{model_name}.yaml")
    corpus = load_task_data(str(data), None, level, "fine")
    tokenizer = load_tokenizer(OmegaConf.to_container(encoder_cfg))
    features = LEVELS[level].encode(corpus.labelled, tokenizer, corpus.labels, corpus.num_views)[:posts]
    collate = Collator(tokenizer.pad_token_id)
    batches = [collate(features[i : i + batch_size]) for i in range(0, len(features), batch_size)]
    inventory = LabelInventory.load("faina")
    model = build_model(model_cfg, encoder_cfg, level, corpus.labels, corpus.num_views, inventory)
    groups, _ = model.parameter_groups()
    optimizer = torch.optim.AdamW([group for group in groups if group["params"]], lr=1e-4)
    walls, cpus = [], []
    for step in range(steps + 1):
        batch = batches[step % len(batches)]
        started, cpu = time.perf_counter(), time.process_time()
        optimizer.zero_grad()
        model.training_loss(batch).backward()
        optimizer.step()
        if step:  # the first step warms up (allocations, lazy initialisation)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {
        "configuration": name,
        "task": task,
        "seconds_per_step": statistics.median(walls),
        "cpu_seconds_per_step": statistics.median(cpus),
        "trainable_parameters": trainable,
        "parameters": sum(p.numel() for p in model.parameters()),
        "saved_tensors_mb": sum(t.numel() * t.element_size() for t in model.state_dict().values()) / 2**20,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def measure_in_child(name: str, options: dict) -> dict:
    """``measure`` in a fresh Python process (its peak memory is the configuration's alone)."""
    command = [sys.executable, "-m", "faina.benchmarks.encoder_cost", name, json.dumps(options)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        return {"configuration": name, "error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(names: Sequence[str], task: str, posts: int, batch_size: int, steps: int, threads: int) -> list[dict]:
    options = {"task": task, "posts": posts, "batch_size": batch_size, "steps": steps, "threads": threads}
    return [measure_in_child(name, options) for name in names]


def table(rows: list[dict], task: str, posts: int, batch_size: int, steps: int, threads: int) -> str:
    lines = [
        f"Training step of {task}: batches of {batch_size} of the first {posts} posts, median of {steps} steps after "
        f"one warm-up, torch threads {threads}; each configuration in its own process",
        "| encoder | s/step | CPU s/step | trainable / all parameters | saved state MB | peak RSS GB |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['configuration']} | failed: {row['error']} | | | | |")
            continue
        lines.append(
            f"| {row['configuration']} | {row['seconds_per_step']:.3f} | {row['cpu_seconds_per_step']:.3f} | "
            f"{row['trainable_parameters'] / 1e6:.2f} M / {row['parameters'] / 1e6:.1f} M | "
            f"{row['saved_tensors_mb']:.1f} | {row['peak_rss_gb']:.2f} |"
        )
    return "\n".join(lines)


def _child(argv: list[str]) -> None:
    import torch

    name, options = argv[0], json.loads(argv[1])
    torch.set_num_threads(options.pop("threads"))
    torch.manual_seed(0)
    print(json.dumps(measure(name, **options)))


if __name__ == "__main__":
    _child(sys.argv[1:])

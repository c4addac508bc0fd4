"""The GPU check (``fallacy.gpu_check``, the command ``bash scripts/gpu_check.sh``): the plan it runs on a GPU, its
table and exit status (exercised here on CPU)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from common.errors import UserError
from fallacy import gpu_check
from tests_paths import REPO


def dry_run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "scripts/gpu_check.py", "--dry-run", *args], cwd=REPO, capture_output=True, text=True
    )


def test_dry_run_plans_bf16_gpu_training_and_4bit_qlora():
    done = dry_run("--missci-data", str(REPO.parent / "shared" / "data" / "missci"))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    runs = [line for line in lines if not line.startswith("#")]
    assert len(runs) == 4 + (importlib.util.find_spec("vllm") is not None)
    assert all("trainer=gpu" in line for line in runs)
    assert "experiment=demo" in runs[0] and "task=post-f" in runs[1]
    assert "encoder=llama-7b-shape" in runs[2] and "encoder.attention=bidirectional" in runs[2]
    assert "llm.load_in_4bit=true" in runs[3] and "task.lora.max_steps=8" in runs[3]
    if importlib.util.find_spec("vllm") is None:
        assert lines[-1].startswith("# skipped (vllm not installed)") and "llm.backend=vllm" in lines[-1]


def test_the_cpu_plan_drops_the_gpu_settings_and_fast_runs_one_batch(tmp_path):
    options = gpu_check.CheckOptions(
        out=tmp_path, only="mvmd,llm-encoder,qlora,vllm", cpu=True, fast=True, overrides=("a=1",)
    )
    steps = gpu_check.plan(options)
    assert [step.key for step in steps] == ["mvmd", "llm-encoder", "qlora", "vllm"]
    assert gpu_check.skip_reason(steps[1], options) == "needs a GPU"  # a 7B encoder on a CPU: not a check
    steps = [steps[0], *steps[2:]]
    mvmd, qlora = (gpu_check.command(step, options, tmp_path) for step in steps[:2])
    assert "trainer=default" in mvmd and "++trainer.fast_dev_run=true" in mvmd and mvmd[-1] == "a=1"
    assert "llm.load_in_4bit=true" not in qlora and "task.lora.max_steps=1" in qlora
    assert gpu_check.skip_reason(steps[2], options) == "needs a GPU"


def test_without_a_gpu_it_stops_with_one_message(monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_check, "gpu_memory_mb", lambda: None)
    with pytest.raises(UserError, match="no GPU found") as caught:
        gpu_check.run_checks(gpu_check.CheckOptions(out=tmp_path))
    assert "use --cpu" in caught.value.fix


def test_unknown_step_is_refused():
    with pytest.raises(UserError, match="nope") as caught:
        gpu_check.plan(gpu_check.CheckOptions(only="mvmd,nope"))
    assert "mvmd, mvml, llm-encoder, qlora, vllm" in caught.value.fix
    done = dry_run("--only", "mvmd,nope")
    assert done.returncode == 2 and "nope" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_cpu_run_prints_the_table_and_fails_loudly(tmp_path, tiny_encoder):
    """One real step on CPU (one batch per stage), then a step that fails: exit 1 and a FAILED row."""
    base = [
        sys.executable,
        "scripts/gpu_check.py",
        "--cpu",
        "--fast",
        "--out",
        str(tmp_path),
        "--set",
        f"encoder.name_or_path={tiny_encoder}",
        "--set",
        "loader.batch_size=4",
    ]
    done = subprocess.run([*base, "--only", "mvml"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| MVML"))
    assert "| ok |" in row and "strict avg F1 0." in row and "GiB RSS" in row
    broken = subprocess.run(
        [*base, "--only", "mvmd,vllm", "--set", "data.train_path=/nonexistent.conll"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert broken.returncode == 1
    assert "| MVMD span-f, 1 fold (sample) | FAILED (2) |" in broken.stdout
    assert "| skipped | - | - | needs a GPU |" in broken.stdout
    assert "data file not found" in (tmp_path / "mvmd.log").read_text()

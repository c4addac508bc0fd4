"""scripts/gpu_check.sh: the plan it runs on a GPU, its table and exit status (exercised here on CPU)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests_paths import REPO

spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(spec)
sys.modules["gpu_check"] = gpu_check  # dataclasses look their module up there
spec.loader.exec_module(gpu_check)


def test_dry_run_plans_bf16_gpu_training_and_4bit_qlora(capsys):
    assert gpu_check.main(["--dry-run", "--missci-data", str(REPO.parent / "shared" / "data" / "missci")]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    runs = [line for line in lines if not line.startswith("#")]
    assert len(runs) == 3 + (importlib.util.find_spec("vllm") is not None)
    assert all("trainer=gpu" in line for line in runs)
    assert "experiment=demo" in runs[0] and "task=post-f" in runs[1]
    assert "llm.load_in_4bit=true" in runs[2] and "task.lora.max_steps=8" in runs[2]
    if importlib.util.find_spec("vllm") is None:
        assert lines[-1].startswith("# skipped (vllm not installed)") and "llm.backend=vllm" in lines[-1]


def test_without_a_gpu_it_stops_with_one_message(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(gpu_check, "gpu_memory_mb", lambda: None)
    assert gpu_check.main(["--out", str(tmp_path)]) == 2
    assert "use --cpu" in capsys.readouterr().err


def test_unknown_step_is_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        gpu_check.main(["--dry-run", "--only", "mvmd,nope"])
    assert stop.value.code == 2 and "nope" in capsys.readouterr().err


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

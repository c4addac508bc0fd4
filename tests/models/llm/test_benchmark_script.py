"""scripts/benchmark_generation.py on the tiny random Llama and the synthetic Missci sample: the table it prints
compares batch sizes within a dtype, and dtypes with each other, on the same prompts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the generation benchmark script, in fresh processes

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "benchmark_generation.py"
SAMPLE = REPO / "missci" / "sample_data"


def run_benchmark(*args: str) -> tuple[int, dict]:
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--llm",
            "tiny-llama",
            "--data",
            str(SAMPLE),
            "--prompts",
            "3",
            "--max-new-tokens",
            "4",
            "--skip-load",
            "--json",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    start = done.stdout.index("{")
    return done.returncode, json.loads(done.stdout[start:])


def test_batched_answers_match_batch_size_one():
    code, result = run_benchmark("--batch-sizes", "1,2")
    rows = result["generate"]["rows"]
    assert code == 0
    assert [row["batch_size"] for row in rows] == [1, 2]
    assert all(row["differ_from_first"] == [] for row in rows)
    assert rows[0]["tokens"] == rows[1]["tokens"] > 0
    assert result["generate"]["dtype"] == "float32" and len(result["generate"]["answers"]) == 3


def test_each_dtype_is_generated_and_compared_with_the_first():
    code, result = run_benchmark("--batch-sizes", "2", "--dtypes", "float32,bfloat16")
    assert code == 0
    by_dtype = result["generate_by_dtype"]
    assert [gen["dtype"] for gen in by_dtype] == ["float32", "bfloat16"]
    assert by_dtype[0]["differ_from_first_dtype"] == []
    differ = [i for i, (a, b) in enumerate(zip(by_dtype[0]["answers"], by_dtype[1]["answers"])) if a != b]
    assert by_dtype[1]["differ_from_first_dtype"] == differ


def test_step_costs_are_reported_per_batch_size():
    code, result = run_benchmark(
        "--batch-sizes", "1", "--step-sizes", "1,3", "--step-prompt-tokens", "12", "--steps", "2"
    )
    assert code == 0
    (steps,) = result["steps_by_dtype"]
    assert [row["batch_size"] for row in steps["rows"]] == [1, 3]
    for row in steps["rows"]:
        assert row["prefill_s_per_prompt"] > 0
        assert row["step_ms_per_token"] == row["step_ms"] / row["batch_size"]


def test_beam_candidates_are_timed_with_and_without_the_shared_prefill():
    code, result = run_benchmark("--batch-sizes", "1", "--beams", "2")
    assert code == 0
    beams = result["beams"]
    assert [row["shared_prefill"] for row in beams["rows"]] == [False, True]
    assert beams["same_candidates"] is True and beams["beams"] == 2 and beams["prompts"] == 3

"""scripts/benchmark_decision_rules.py on a tiny dev split: both methods run in their child processes, give the
same sums (exit 0), and the table has a row per method."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests_paths import REPO

pytestmark = pytest.mark.slow


def test_the_benchmark_runs_both_methods_and_finds_them_equal():
    done = subprocess.run(
        [sys.executable, "scripts/benchmark_decision_rules.py", "--posts", "4", "--decoders", "2", "--words", "6"]
        + ["--rounds", "1", "--budget", "100"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "identical sums: True" in done.stdout
    rows = [
        line for line in done.stdout.splitlines() if line.startswith("| one by one") or line.startswith("| batched")
    ]
    assert len(rows) == 2

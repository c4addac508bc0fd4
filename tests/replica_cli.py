"""Running the project's commands on the hub replicas (tests/replicas/): offline, single-threaded, captured."""

from __future__ import annotations

import os
import subprocess
import sys

from tests_paths import REPO

CLI_ENV = {
    "OMP_NUM_THREADS": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "WANDB_MODE": "offline",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONWARNINGS": "ignore",
}


def run_cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``python ARGS`` from the repository root, offline, single-threaded; stdout and stderr captured."""
    env = {**os.environ, **CLI_ENV}
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def assert_ran(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def train_short_fold(root, name: str, *overrides: str):
    """One fold of ``train.py OVERRIDES`` (one batch per stage, batches of 8) under ``root``; its fold folder."""
    result = run_cli(
        "train.py",
        *overrides,
        "cv.folds=[0]",
        "debug=fast",
        "loader.batch_size=8",
        f"paths.root_dir={root}",
        f"name={name}",
    )
    assert_ran(result)
    fold = root / "results" / name / "fold0"
    assert (fold / "metrics.json").is_file() and (fold / "model.safetensors").is_file()
    return fold

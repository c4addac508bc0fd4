"""Hydra multirun with the Optuna sweeper: trials run as separate experiments and maximise the mean dev F1; at the
end the sweep prints its trials, the best value and parameters, and names the file (``common.sweep_report``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from tests_paths import REPO


@pytest.mark.slow
def test_optuna_sweep_runs_trials(tiny_encoder, small_sample, tmp_path):
    command = [
        sys.executable,
        "train.py",
        "-m",
        "hparams_search=optuna",
        "hydra.sweeper.n_trials=2",
        "task=post-c",
        "cv.num_folds=2",
        "cv.folds=[0]",
        "trainer.max_epochs=1",
        "callbacks=none",
        "logger=none",
        "loader.batch_size=16",
        f"paths.root_dir={tmp_path}",
        f"encoder.name_or_path={tiny_encoder}",
        "data=custom",
        f"data.train_path={small_sample / 'sample.tsv'}",
    ]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    trials = sorted((tmp_path / "results").glob("sweep-post-c-minilm-custom/trial*/results.json"))
    assert len(trials) == 2
    optimization = list((tmp_path / "results" / "multirun").rglob("optimization_results.yaml"))
    assert optimization and "best_params" in optimization[0].read_text()
    assert "model.module.optimizer.lr" in optimization[0].read_text()
    # the sweep says what it found, on stdout: a row per trial, the best value and parameters, and the file
    saved = yaml.safe_load(optimization[0].read_text())
    out = result.stdout
    assert "### multirun: 2 jobs" in out and "| job | overrides | val/f1_mean | status | results |" in out
    for trial in (0, 1):
        value = json.loads(trials[trial].read_text())["folds"][0]["best_dev_f1"]
        row = next(line for line in out.splitlines() if line.startswith(f"| {trial} | "))
        assert f"| {value:.4f} | COMPLETED |" in row and f"trial{trial}/results.md" in row
        assert "model.module.optimizer.lr=" in row and "cv.num_folds" not in row  # only what differs per trial
    assert f"best value: {saved['best_value']}" in out
    params = " ".join(f"{key}={value}" for key, value in saved["best_params"].items())
    assert f"best parameters: {params}" in out and f"written: {optimization[0]}" in out
    assert "\x1b[" not in result.stderr  # Optuna's log lines carry no colour codes in a redirected log

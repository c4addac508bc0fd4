"""Hydra multirun with the Optuna sweeper: trials run as separate experiments and maximise the mean dev F1."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    trials = sorted((tmp_path / "results").glob("sweep-post-c-minilm-custom/trial*/results.json"))
    assert len(trials) == 2
    optimization = list((tmp_path / "results" / "multirun").rglob("optimization_results.yaml"))
    assert optimization and "best_params" in optimization[0].read_text()
    assert "model.module.optimizer.lr" in optimization[0].read_text()

"""W&B logging (offline): one run per fold, grouped by experiment, config and prediction artifact logged."""

from __future__ import annotations

from pathlib import Path

import pytest

from train import run

pytestmark = pytest.mark.e2e


def test_wandb_offline_one_run_per_fold(make_cfg, monkeypatch, tmp_path):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = make_cfg(
        "task=post-f",
        "logger=wandb",
        "cv.num_folds=2",
        "trainer.max_epochs=1",
        "+trainer.limit_train_batches=2",
        "+trainer.limit_val_batches=1",
    )
    run(cfg)
    exp = Path(cfg.paths.results_dir) / cfg.name
    for fold in (0, 1):
        runs = list((exp / f"fold{fold}" / "wandb").glob("offline-run-*"))
        assert len(runs) == 1, runs
        # wandb 0.31 keeps an offline run's records in one binary transaction log (synced later by `wandb sync`)
        log = next(runs[0].glob("*.wandb")).read_bytes()
        assert cfg.name.encode() in log  # the group: one per experiment
        assert f"{cfg.name}-fold{fold}".encode() in log  # the run: one per fold
        for key in (b"threshold", b"seed", b"val/f1", b"test/strict/avg/f1", b"predictions-"):
            assert key in log, key

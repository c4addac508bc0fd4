"""W&B logging (offline): one run per fold holding the selected epoch, one per experiment holding mean ± std.

The runs are read back from their offline files (``helpers.wandb_records``), what ``wandb sync`` would upload;
docs/training.md#weights--biases is checked against the same files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers.wandb_records import offline_runs
from tests_paths import REPO
from tiers import fixture_tier
from train import run

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
@fixture_tier("e2e")
def wandb_experiment(tmp_path_factory, tiny_encoder, small_sample):
    """A 2-fold, 2-epoch post-f experiment logged to offline W&B runs: (cfg, returned metrics, experiment folder)."""
    from hydra import compose, initialize_config_dir

    from train import register_config_resolvers

    root = tmp_path_factory.mktemp("wandb_run")
    register_config_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(REPO / "conf")):
        cfg = compose(
            config_name="train",
            overrides=[
                f"paths.root_dir={root}",
                "callbacks=none",
                "logger=wandb",
                "loader.batch_size=8",
                f"encoder.name_or_path={tiny_encoder}",
                "data=custom",
                f"data.train_path={small_sample / 'sample.tsv'}",
                "task=post-f",
                "cv.num_folds=2",
                "trainer.max_epochs=2",
                "+trainer.limit_train_batches=2",
            ],
        )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WANDB_MODE", "offline")
        patch.setenv("WANDB_SILENT", "true")
        metrics = run(cfg)
    return cfg, metrics, Path(cfg.paths.results_dir) / cfg.name


@pytest.mark.e2e
def test_each_fold_run_summarises_the_selected_epoch(wandb_experiment):
    cfg, _, exp = wandb_experiment
    for fold in (0, 1):
        (fold_run,) = offline_runs(exp / f"fold{fold}")
        saved = json.loads((exp / f"fold{fold}" / "metrics.json").read_text())
        assert (fold_run.group, fold_run.name, fold_run.job_type) == (cfg.name, f"{cfg.name}-fold{fold}", "post-f")
        assert len([row for row in fold_run.history if "val/f1" in row]) == 2  # both epochs' dev scores are logged
        # the summary holds the epoch whose weights predicted, not the last one
        assert fold_run.summary["best_dev_f1"] == pytest.approx(saved["best_dev_f1"])
        assert fold_run.summary["val/f1"] == pytest.approx(saved["best_dev_f1"])
        best = [row for row in fold_run.history if row.get("val/f1") == pytest.approx(saved["best_dev_f1"])]
        assert fold_run.summary["best_epoch"] == best[0]["epoch"]
        assert fold_run.summary["test/strict/avg/f1"] == pytest.approx(saved["test"]["strict"]["avg"]["f1"])
        assert fold_run.config["seed"] == cfg.seed and fold_run.config["model"]["module"]["decision"]["tuned"] is True
        assert b"predictions-" in next((exp / f"fold{fold}" / "wandb").glob("offline-run-*/*.wandb")).read_bytes()


@pytest.mark.e2e
def test_the_experiment_run_holds_mean_and_std_over_folds(wandb_experiment):
    cfg, metrics, exp = wandb_experiment
    (summary_run,) = offline_runs(exp)
    assert (summary_run.group, summary_run.name, summary_run.job_type) == (
        cfg.name,
        f"{cfg.name}-summary",
        "experiment",
    )
    results = json.loads((exp / "results.json").read_text())
    dev = [fold["best_dev_f1"] for fold in results["folds"]]
    assert summary_run.summary["val/f1_mean"] == pytest.approx(sum(dev) / 2) == pytest.approx(metrics["val/f1_mean"])
    assert summary_run.summary["val/f1_std"] == pytest.approx(abs(dev[0] - dev[1]) / 2)
    strict = results["summary"]["strict"]["avg"]["f1"]
    assert summary_run.summary["test/strict/avg/f1_mean"] == pytest.approx(strict["mean"])
    assert summary_run.summary["test/strict/avg/f1_std"] == pytest.approx(strict["std"])
    assert summary_run.summary["folds"] == 2
    # the swept settings are in its config, so W&B's parallel-coordinates view can put them beside val/f1_mean
    assert summary_run.config["model"]["module"]["optimizer"]["lr"] == cfg.model.module.optimizer.lr
    assert summary_run.config["loader"]["batch_size"] == 8


def _wandb_section() -> str:
    text = (REPO / "docs" / "training.md").read_text(encoding="utf-8")
    return text.split("## Weights & Biases", 1)[1].split("\n## ", 1)[0]


@pytest.mark.e2e
def test_the_docs_name_the_offline_run_folders_and_summary_keys_a_run_writes(wandb_experiment):
    cfg, _, exp = wandb_experiment
    section = _wandb_section()
    sync = re.search(r"^wandb sync (.+)$", section, re.M).group(1).split()
    for pattern in sync:  # e.g. results/<name>/fold*/wandb/offline-run-*
        relative = pattern.replace("results/<name>/", "")
        assert list(exp.glob(relative)), f"the docs' {pattern} matches no folder of a real run"
    fold_keys = re.findall(r"^\| fold run \| .*$", section, re.M)
    experiment_keys = re.findall(r"^\| experiment run \| .*$", section, re.M)
    assert fold_keys and experiment_keys
    (fold_run,) = offline_runs(exp / "fold0")
    (summary_run,) = offline_runs(exp)
    for rows, logged in ((fold_keys, fold_run.summary), (experiment_keys, summary_run.summary)):
        summary_cells = " ".join(row.split("|")[3] for row in rows)  # | run | name, job type | summary |
        for key in re.findall(r"`([a-z_]+(?:/[a-z0-9_]+)*)`", summary_cells):
            assert key in logged, f"the docs say {key} is in the summary; it is not"

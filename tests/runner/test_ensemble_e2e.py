"""Ensembles and tuned decision rules through ``train.run`` and ``faina.predict`` on a tiny encoder."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from common.errors import UserError
from faina.formats.conll import read_conll
from faina.formats.tsv import read_post_tsv
from faina.serving.loading import load_predictor
from models.ensemble import MVMDEnsemble, MVMLEnsemble
from tests_paths import REPO
from train import run

pytestmark = pytest.mark.e2e


@pytest.mark.slow  # trains two models and predicts in a subprocess (~25 s CPU)
def test_cv_ensemble_trains_k_models_and_writes_the_ensembled_submission(make_cfg, small_sample, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    cfg = make_cfg(
        "task=span-f", "cv=official", "cv.ensemble=2", "trainer.max_epochs=1", "model.module.decision.tuned=true"
    )
    run(cfg)
    exp = Path(cfg.paths.results_dir) / cfg.name
    folds = [json.loads((exp / f"fold{k}" / "metrics.json").read_text()) for k in range(2)]
    # two different train/dev splits of the same labelled posts
    assert all(f["train_posts"] + f["dev_posts"] == 60 for f in folds)
    splits = [sorted(read_split_posts(exp, k)) for k in range(2)]
    assert splits[0] != splits[1]
    # each model tuned its own O biases on its own dev set and reports them
    assert set(folds[0]["tuned_on_dev"]["o_bias"]) == {"a1", "a2"}
    ensembled = exp / "submission-ensemble.conll"
    assert "ensemble of 2 models, submission written" in caplog.text
    unlabelled = read_conll(small_sample / "sample-unlabelled.conll")
    corpus = read_conll(ensembled)
    assert corpus.labelled and [p.tokens for p in corpus.posts] == [p.tokens for p in unlabelled.posts]
    # its probabilities beside it, and each model's beside its own submission (docs/soft-labels.md)
    from faina.formats.probability_file import read_probabilities

    for path in (exp / "probabilities-ensemble.jsonl.gz", exp / "fold0" / "probabilities.jsonl.gz"):
        assert [p.tokens for p in read_probabilities(path).posts] == [p.tokens for p in unlabelled.posts]
    model, meta = load_predictor(exp)
    assert isinstance(model, MVMDEnsemble) and len(model) == 2 and len(meta["ensemble"]) == 2
    # the CLI given the results folder reproduces the runner's ensembled submission byte for byte
    out = tmp_path / "again.conll"
    result = subprocess.run(
        [sys.executable, "-m", "faina.predict", str(exp), str(small_sample / "sample-unlabelled.conll"), str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == ensembled.read_bytes()


def read_split_posts(exp: Path, k: int) -> list[int]:
    """The dev posts of model ``k``, recomputed from the experiment's saved config (seed, ensemble size)."""
    import yaml

    from faina.data.folds import label_matrix, official_split
    from faina.data.task_data import load_task_data

    cfg = yaml.safe_load((exp / "config.yaml").read_text())
    data = load_task_data(cfg["data"]["train_path"], None, "span", "fine")
    union = [sorted({label for view in post for label in view}) for post in data.label_sets()]
    return list(official_split(label_matrix(union, data.labels), 0.2, cfg["seed"], 2)[k].dev)


@pytest.mark.slow  # trains two folds and predicts in a subprocess (~20 s CPU)
def test_results_folder_ensemble_of_post_models_and_tuned_thresholds(make_cfg, small_sample, tmp_path):
    cfg = make_cfg(
        "task=post-f",
        "cv.num_folds=2",
        "trainer.max_epochs=1",
        "model.module.decision.tuned=true",
        "model.module.decision.min_evidence=2",
    )
    run(cfg)
    exp = Path(cfg.paths.results_dir) / cfg.name
    from safetensors.torch import load_file

    for k in range(2):
        saved = json.loads((exp / f"fold{k}" / "metrics.json").read_text())["tuned_on_dev"]["thresholds"]
        stored = load_file(str(exp / f"fold{k}" / "model.safetensors"))["thresholds"]
        # the tuned thresholds are the exported model's buffer, and the reloaded model uses them
        assert stored[0].tolist() == pytest.approx(list(saved["a1"].values()))
        single, _ = load_predictor(exp / f"fold{k}")
        assert torch.equal(single.thresholds, stored)
    model, meta = load_predictor(exp)
    assert isinstance(model, MVMLEnsemble) and meta["level"] == "post"
    out = tmp_path / "pred.tsv"
    result = subprocess.run(
        [sys.executable, "-m", "faina.predict", str(exp), str(small_sample / "sample.tsv"), str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert len(read_post_tsv(out).rows) == 60


def test_results_folder_with_an_unfinished_fold_is_one_clear_error(make_cfg, small_sample, tmp_path):
    cfg = make_cfg("task=post-c", "cv.num_folds=3", "cv.folds=[0]", "debug=fast")
    run(cfg)
    exp = Path(cfg.paths.results_dir) / cfg.name
    with pytest.raises(UserError, match=r"unfinished folds: fold1, fold2 \(of 3") as info:
        load_predictor(exp)
    assert "rerun the same training command" in info.value.fix
    # a fold folder that was started but not finished counts as unfinished too
    shutil.copytree(exp / "fold0", exp / "fold1")
    (exp / "fold1" / "metrics.json").unlink()
    result = subprocess.run(
        [sys.executable, "-m", "faina.predict", str(exp), str(small_sample / "sample.tsv"), str(tmp_path / "p.tsv")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and "unfinished folds: fold1, fold2" in result.stderr
    # one finished fold folder still predicts on its own, as before
    single, meta = load_predictor(exp / "fold0")
    assert "ensemble" not in meta and not isinstance(single, MVMLEnsemble)


def test_a_folder_that_is_no_model_is_one_clear_error(tmp_path):
    with pytest.raises(UserError, match="neither an exported model folder"):
        load_predictor(tmp_path)

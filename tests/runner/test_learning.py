"""With the offline MiniLM encoder, a short training run on synthetic posts learns: F1 rises well above untrained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from train import run


@pytest.fixture(scope="module")
def learning_sample(tmp_path_factory) -> Path:
    from faina.data.synthetic import write_sample

    folder = tmp_path_factory.mktemp("sample150")
    write_sample(folder, posts=150, seed=5)
    return folder


def fold_f1(cfg) -> float:
    metrics = json.loads((Path(cfg.paths.results_dir) / cfg.name / "fold0" / "metrics.json").read_text())
    return metrics["test"]["strict"]["avg"]["f1"]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["span-f", "post-f"])
def test_training_beats_an_untrained_model(make_cfg, learning_sample, task):
    ext = "conll" if task.startswith("span") else "tsv"
    common = [
        f"task={task}",
        "cv.folds=[0]",
        "loader.batch_size=16",
        "data=custom",
        f"data.train_path={learning_sample / f'sample.{ext}'}",
    ]
    if task == "post-f":  # a fixed decision rule, so only the weights differ (a dev-tuned τ helps an untrained model)
        common.append("model.module.decision.tuned=false")
    untrained = make_cfg(*common, "trainer.max_epochs=0", "name=untrained", sample=False, tiny=False)
    run(untrained)
    trained = make_cfg(*common, "trainer.max_epochs=3", "name=trained", sample=False, tiny=False)
    run(trained)
    before, after = fold_f1(untrained), fold_f1(trained)
    assert after > before + 0.05 and after > 2 * before, (before, after)

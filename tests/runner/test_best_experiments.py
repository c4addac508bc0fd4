"""``experiment=best-span-f`` / ``best-post-f``: the recipes docs/benchmark-quality.md measured, as configs that
compose to exactly those settings and train end to end (tiny encoder, small sample)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.test_configs import compose_train
from train import run


def test_best_span_f_is_the_measured_recipe():
    cfg = compose_train("experiment=best-span-f")
    assert cfg.task.name == "span-f" and cfg.encoder.name == "minilm" and cfg.data.targets == "views"
    assert cfg.model.module.decision.tuned and cfg.model.module.decision.min_evidence == 30
    assert cfg.trainer.max_epochs == 6 and cfg.model.module.head_lr == 1e-2
    assert cfg.name == "best-span-f-minilm-sample"


def test_best_post_f_is_the_measured_recipe():
    cfg = compose_train("experiment=best-post-f")
    assert cfg.task.name == "post-f" and cfg.encoder.name == "minilm" and cfg.data.targets == "views"
    module = cfg.model.module
    assert module.decision.tuned and module.decision.scope == "own" and module.decision.floor == 0.3
    assert cfg.trainer.max_epochs == 6 and cfg.name == "best-post-f-minilm-sample"


def test_a_best_recipe_keeps_the_users_data_and_targets():
    cfg = compose_train("experiment=best-span-f", "data=custom", "data.train_path=/x.conll", "data.targets=majority")
    assert cfg.data.train_path == "/x.conll" and cfg.data.targets == "majority"
    assert cfg.name == "best-span-f-minilm-custom-majority"


@pytest.mark.e2e
@pytest.mark.parametrize("task", ["span-f", "post-f"])
def test_a_best_recipe_trains_and_tunes_its_rule_on_dev(make_cfg, task):
    cfg = make_cfg(f"experiment=best-{task}", f"task={task}", "cv=official", "trainer.max_epochs=1")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    saved = json.loads((fold / "metrics.json").read_text())
    assert "tuned_on_dev" in saved
    assert (fold / ("submission.conll" if task == "span-f" else "submission.tsv")).is_file()
    decision = json.loads((fold / "model.json").read_text())["model"]["module"]["decision"]
    if task == "span-f":
        assert decision["tuned"] and decision["min_evidence"] == 30 and "o_bias" in saved["tuned_on_dev"]
    else:
        assert decision["tuned"] and decision["floor"] == 0.3
        tuned = [t for view in saved["tuned_on_dev"]["thresholds"].values() for t in view.values()]
        assert min(tuned) >= 0.3 and any(t != 0.7 for t in tuned)

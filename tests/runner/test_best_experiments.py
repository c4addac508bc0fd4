"""``experiment=best-span-f``: the recipe docs/benchmark-quality.md measured, as a config that composes to exactly
those settings and trains end to end (tiny encoder, small sample); the withdrawn ``best-post-f`` is one message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.test_configs import compose_train
from tests_paths import REPO
from train import refuse_withdrawn_experiments, run


def test_best_span_f_is_the_measured_recipe():
    cfg = compose_train("experiment=best-span-f")
    assert cfg.task.name == "span-f" and cfg.encoder.name == "minilm" and cfg.data.targets == "views"
    assert cfg.model.module.decision.tuned and cfg.model.module.decision.min_evidence == 30
    # the task's own length, not a shorter one of its own
    assert cfg.trainer.max_epochs == compose_train("task=span-f").trainer.max_epochs
    assert cfg.model.module.head_lr == 1e-2 and cfg.name == "best-span-f-minilm-sample"


def test_a_withdrawn_recipe_is_one_message_with_what_to_run_instead(capsys):
    with pytest.raises(SystemExit) as stop:
        refuse_withdrawn_experiments(["data=custom", "experiment=best-post-f"])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("error: experiment=best-post-f was withdrawn: ") and "Fix: run task=post-f" in error
    assert error.count("\n") == 1
    refuse_withdrawn_experiments(["experiment=best-span-f", "task=post-f"])  # a recipe that stands passes
    assert not (REPO / "conf" / "experiment" / "best-post-f.yaml").exists()  # withdrawn: no config to compose


def test_a_best_recipe_keeps_the_users_data_and_targets():
    cfg = compose_train("experiment=best-span-f", "data=custom", "data.train_path=/x.conll", "data.targets=majority")
    assert cfg.data.train_path == "/x.conll" and cfg.data.targets == "majority"
    assert cfg.name == "best-span-f-minilm-custom-majority"


@pytest.mark.e2e
def test_the_best_recipe_trains_and_tunes_its_rule_on_dev(make_cfg):
    task = "span-f"
    cfg = make_cfg(f"experiment=best-{task}", f"task={task}", "cv=official", "trainer.max_epochs=1")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    saved = json.loads((fold / "metrics.json").read_text())
    assert "tuned_on_dev" in saved
    assert (fold / ("submission.conll" if task == "span-f" else "submission.tsv")).is_file()
    decision = json.loads((fold / "model.json").read_text())["model"]["module"]["decision"]
    assert decision["tuned"] and decision["min_evidence"] == 30 and "o_bias" in saved["tuned_on_dev"]

"""The quality benchmark's multi-task recipes end to end: ``scripts/benchmark_quality.py --quick`` trains the
``joint`` recipe (span-f and post-f of the corpus in one ``task=multi`` run) and the auxiliary recipes (the synthetic
sample as a second corpus) beside ``views``, and scores the target head of each like any other run. A file of its own
so that pytest-xdist's ``--dist loadfile`` runs these long commands on another worker than the grid of
``test_benchmark_quality.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from faina.benchmarks import quality_runs, quality_scores
from faina.benchmarks.quality_runs import Length
from helpers.quality_benchmark import REPO, SCRIPT, overrides, run_dir, write_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.mark.e2e
def test_the_joint_recipe_is_trained_and_scored_like_the_others(corpus, tiny_encoder, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, str(SCRIPT), "--quick", "--corpus", str(corpus), "--out", str(out)]
    command += ["--tasks", "span-f", "--recipes", "views", "joint", "--ensembles"]
    for override in overrides(tiny_encoder):
        command += ["--override", override]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {(row["recipe"], row["rule"]) for row in json.loads((out / "report.json").read_text())["rows"]}
    assert {rule for recipe, rule in rows if recipe == "joint"} == set(quality_scores.SPAN_RULES)
    joint = run_dir(out, tiny_encoder, 1, "joint")
    assert (joint / "fold0" / "span_f" / "model.json").is_file() and (
        joint / "fold0" / "post_f" / "model.json"
    ).is_file()
    saved = json.loads((joint / "results.json").read_text())
    assert set(saved["entries"]) == {"span_f", "post_f"}  # both levels' test figures from the one run


@pytest.mark.e2e
def test_the_auxiliary_recipes_train_with_the_sample_and_score_the_target_head(corpus, tiny_encoder, tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, str(SCRIPT), "--quick", "--corpus", str(corpus), "--out", str(out)]
    command += ["--tasks", "span-f", "--recipes", "views", "aux-proportional", "aux-sequential", "--epochs", "2"]
    for override in overrides(tiny_encoder):
        command += ["--override", override]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {(row["recipe"], row["rule"]) for row in json.loads((out / "report.json").read_text())["rows"]}
    for recipe in ("aux-proportional", "aux-sequential"):
        assert {rule for name, rule in rows if name == recipe} == set(quality_scores.SPAN_RULES)
        run = out / "runs" / quality_runs.run_name("span-f", recipe, Length(2), 1, overrides(tiny_encoder))
        assert (run / "fold0" / "span_f" / "model.json").is_file() and (
            run / "fold0" / "second" / "model.json"
        ).is_file()
        metrics = json.loads((run / "fold0" / "metrics.json").read_text())
        assert metrics["entries"]["second"]["train_posts"] + metrics["entries"]["second"]["dev_posts"] == 300
    sequential = out / "runs" / quality_runs.run_name("span-f", "aux-sequential", Length(2), 1, overrides(tiny_encoder))
    config = (sequential / "config.yaml").read_text()
    assert "strategy: sequential" in config and "auxiliary_epochs: 1" in config

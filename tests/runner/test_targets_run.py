"""``data.targets``: an aggregated model trains one view, is scored against every gold view, has its own folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.errors import UserError
from faina.formats.conll import read_conll
from faina.formats.tsv import read_post_tsv
from faina.scoring.official import evaluate_files
from train import run

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("task", "rule"), [("span-f", "model.module.decision.tuned=true"), ("post-c", "model.module.decision.tuned=true")]
)
def test_union_target_predicts_one_view_scored_against_both(make_cfg, task, rule):
    cfg = make_cfg(f"task={task}", "debug=fast", "cv.folds=[0]", "data.targets=union", rule)
    assert cfg.name.endswith("-union")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    # the one view's rule was fitted on dev against both gold views (models.base.scoring_targets): one set of values
    tuned = json.loads((fold / "metrics.json").read_text())["tuned_on_dev"]
    assert set(tuned["o_bias" if task == "span-f" else "thresholds"]) == {"a1"}
    ext = "conll" if task.startswith("span") else "tsv"
    read = read_conll if ext == "conll" else read_post_tsv
    assert read(fold / f"gold.{ext}").num_views == 2  # gold keeps every annotator
    assert read(fold / f"predictions.{ext}").num_views == 1  # one aggregated prediction
    saved = json.loads((fold / "metrics.json").read_text())
    assert set(saved["test"]["strict"]) == {"a1", "a2", "avg"}
    exact = ext == "conll"
    assert (
        evaluate_files(
            cfg.task.eval_task, fold / f"gold.{ext}", fold / f"predictions.{ext}", one_pred=True, exact=exact
        )
        == saved["test"]
    )


def test_majority_with_two_views_stops_with_one_message(make_cfg):
    with pytest.raises(UserError, match="majority needs three or more"):
        run(make_cfg("task=span-f", "debug=fast", "data.targets=majority"))

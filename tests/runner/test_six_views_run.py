"""Six annotators on every post, a custom label inventory and missing annotations (``?``), end to end at post level:
``train.py task=post-f data=custom data.train_path=... data.labels=...`` for ``data.targets=views|majority|soft``,
the fold files scored again with ``faina.evaluate`` (hard and ``--soft``). Also ``soft`` on a span task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from faina.data.synthetic_views import LABELS, write_many_views_sample
from faina.formats.labels import LabelInventory
from faina.formats.probability_file import read_probabilities
from faina.formats.tsv import read_post_tsv
from faina.scoring.official import evaluate_files
from train import run

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
VIEWS = 6


@pytest.fixture(scope="module")
def six_view_file(tmp_path_factory):
    return write_many_views_sample(tmp_path_factory.mktemp("six_views"), views=VIEWS)


@pytest.mark.parametrize("targets", ["views", "majority", "soft"])
def test_six_views_custom_labels_and_missing_annotations_train_and_score(make_cfg, six_view_file, targets):
    tsv, labels_yaml = six_view_file
    assert any(None in row.labels for row in read_post_tsv(tsv, LabelInventory.load(labels_yaml)).rows)
    cfg = make_cfg(
        "task=post-f",
        "data=custom",
        f"data.train_path={tsv}",
        f"data.labels={labels_yaml}",
        f"data.targets={targets}",
        "cv.folds=[0]",
        "trainer.max_epochs=1",
        sample=False,
    )
    assert cfg.name.endswith("" if targets == "views" else f"-{targets}")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    inventory = LabelInventory.load(labels_yaml)
    gold, predicted = read_post_tsv(fold / "gold.tsv", inventory), read_post_tsv(fold / "predictions.tsv", inventory)
    model_views = VIEWS if targets == "views" else 1
    assert gold.num_views == VIEWS and predicted.num_views == model_views
    assert json.loads((fold / "model.json").read_text())["num_views"] == model_views
    probabilities = read_probabilities(fold / "probabilities.jsonl.gz")
    assert len(probabilities.views) == model_views and set(probabilities.labels) == set(LABELS)
    saved = json.loads((fold / "metrics.json").read_text())
    assert set(saved["test"]["strict"]) == {f"a{v + 1}" for v in range(VIEWS)} | {"avg"}
    gold_cells = sum(not row.annotated(v) for row in gold.rows for v in range(VIEWS))
    assert gold_cells > 0 and saved["pairs_not_annotated"] == gold_cells  # left out of the scores, and counted
    one_pred = model_views == 1
    again = evaluate_files("post-fine", fold / "gold.tsv", fold / "predictions.tsv", one_pred, inventory=inventory)
    assert again == saved["test"]
    command = [sys.executable, "-m", "faina.evaluate", "-T", "post-fine", "-G", str(fold / "gold.tsv")]
    command += ["-P", str(fold / "predictions.tsv"), "--soft", str(fold / "probabilities.jsonl.gz")]
    command += ["--labels", str(labels_yaml), "--json", *(["-O"] if one_pred else [])]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["soft_labels"]["gold_views"] == VIEWS
    for measure, value in saved["soft_labels"][
        "model"
    ].items():  # the file holds the probabilities to 4 significant digits
        assert printed["soft_labels"]["model"][measure] == pytest.approx(value, abs=1e-4)


def test_soft_targets_on_a_span_task_train_one_decoder_set(make_cfg):
    cfg = make_cfg("task=span-f", "debug=fast", "cv.folds=[0]", "data.targets=soft")
    assert cfg.name.endswith("-soft")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    assert json.loads((fold / "model.json").read_text())["num_views"] == 1
    saved = json.loads((fold / "metrics.json").read_text())
    assert set(saved["test"]["strict"]) == {"a1", "a2", "avg"}  # the one view against both annotators
    assert saved["soft_labels"]["prediction_views"] == ["a1"] and saved["soft_labels"]["gold_views"] == 2
    # the exported model reads back for faina.predict as a one-view model with one decoder per label
    from faina.serving.fold_model import load_exported

    model, meta = load_exported(fold)
    assert model.decoders.num_decoders == len(model.labels) and meta["num_views"] == 1


@pytest.mark.parametrize(
    ("targets", "weights", "message"),
    [("views", "[1.0,0.5]", "has 2 weight.*data.targets=not soft"), ("soft", "[1,1,1]", "has 3 weight.*2 view")],
)
def test_view_weights_other_than_one_per_view_of_soft_targets_is_one_clear_error(make_cfg, targets, weights, message):
    from common.errors import UserError

    overrides = ("task=span-f", "debug=fast", "cv.folds=[0]", f"data.targets={targets}")
    with pytest.raises(UserError, match=message):
        run(make_cfg(*overrides, f"model.module.view_weights={weights}"))

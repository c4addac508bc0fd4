"""``cv=official`` with a labelled test file scores it like a fold's test split (hard scores, probability scores
before and after calibration, ``reliability.json`` and the experiment's ``reliability.png``, the printed table), and says so; an unlabelled test file is
only predicted, and the run says that instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from train import run

OFFICIAL = ("task=post-f", "cv=official", "trainer.max_epochs=1", "loader.batch_size=4")


@pytest.mark.e2e
def test_a_labelled_test_file_is_scored_and_an_unlabelled_one_only_predicted(make_cfg, small_sample, capsys):
    labelled = make_cfg(*OFFICIAL, f"data.test_path={small_sample / 'sample.tsv'}", "name=labelled")
    run(labelled)
    printed = capsys.readouterr().out
    folder = Path(labelled.paths.results_dir) / "labelled"
    fold = json.loads((folder / "fold0" / "metrics.json").read_text())
    assert "the test file carries labels: scored like a fold's test split" in printed
    assert "avg" in fold["test"]["strict"] and fold["test_posts"] == 60  # post tasks: strict scores only
    assert fold["probability_scores"]["items"] == 60 and fold["probability_scores"]["prior_from"] == "train"
    assert "probability_scores_uncalibrated" in fold and fold["calibrated_on_dev"]["method"] == "temperature"
    assert fold["phases"]["notes"]["dev_pass"] == "validation"  # fitted on the chosen epoch's validation pass
    assert (folder / "fold0" / "submission.tsv").is_file() and (folder / "fold0" / "gold.tsv").is_file()
    assert (folder / "fold0" / "reliability.json").is_file() and (folder / "reliability.png").stat().st_size > 10_000
    results = json.loads((folder / "results.json").read_text())
    assert results["summary"] and set(results["probability_summary"]) >= {"model", "prior", "oracle"}
    assert (folder / "results.md").read_text() in printed

    unlabelled = make_cfg(*OFFICIAL, "name=unlabelled")  # the sample's test file has empty label cells
    run(unlabelled)
    printed = capsys.readouterr().out
    folder = Path(unlabelled.paths.results_dir) / "unlabelled"
    fold = json.loads((folder / "fold0" / "metrics.json").read_text())
    assert "the test file is unlabelled: predicted only (submission written)" in printed
    assert "test" not in fold and "probability_scores" not in fold and not (folder / "results.md").exists()
    assert "summary" not in json.loads((folder / "results.json").read_text())  # only the folds' records
    assert (folder / "fold0" / "submission.tsv").is_file() and (folder / "fold0" / "probabilities.jsonl.gz").is_file()

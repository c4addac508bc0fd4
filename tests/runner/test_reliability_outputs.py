"""What a run writes for its reliability diagrams and probabilities: every scored fold's ``reliability.json`` (the
ECE of its ``metrics.json``, bin sums that pool exactly over folds), the experiment's ``reliability.png`` drawn once
by the report, ``outputs.reliability_plot`` drawing what it says, the folds' compact ``probabilities.jsonl.gz``, and
run folders written before either (plain ``probabilities.jsonl``, no reliability data) still rerun and score."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from common.errors import UserError
from faina.analysis.reliability import FILE_NAME as DATA_FILE
from faina.analysis.reliability import pool_reliability, read_reliability_data
from faina.evaluate import main as evaluate_main
from faina.formats.any_file import read_any
from faina.formats.probability_file import FILE_NAME, FORMER_FILE_NAME, probability_file_in, read_probabilities
from helpers.configs import compose_train
from helpers.trained import compose_run, copy_of
from train import run

PLOT = "reliability.png"


def test_each_fold_writes_the_reliability_data_of_its_scores(trained_runs):
    for fold in ("fold0", "fold1"):
        folder = trained_runs.span / fold
        metrics = json.loads((folder / "metrics.json").read_text())
        data = read_reliability_data(folder / DATA_FILE)
        assert (
            data["level"] == "span"
            and data["bins"] == 10
            and list(data["labels"]) == list(metrics["probability_scores"]["per_label"])
        )
        for label, row in data["labels"].items():
            scored = metrics["probability_scores"]["per_label"][label]["model"]["ece"]
            raw = metrics["probability_scores_uncalibrated"]["per_label"][label]["model"]["ece"]
            assert row["reported"]["ece"] == scored and row["uncalibrated"]["ece"] == raw  # the very same numbers
            assert sum(row["reported"]["counts"]) == row["items"] == metrics["probability_scores"]["items"]
            assert [n for *_, n in row["reported"]["points"]] == [n for n in row["reported"]["counts"] if n]
            assert 0.0 <= row["prior"] <= 1.0  # the train part's mean share: the dashed line
        assert not (folder / PLOT).exists()  # outputs.reliability_plot=experiment: no figure per fold
        assert (folder / FILE_NAME).is_file() and not (folder / FORMER_FILE_NAME).exists()


def test_the_experiment_diagram_pools_every_fold_over_all_test_items(trained_runs):
    pooled = pool_reliability([read_reliability_data(trained_runs.span / f / DATA_FILE) for f in ("fold0", "fold1")])
    tokens = sum(len(post.tokens) for post in read_any(trained_runs.sample / "sample.conll", level="span").posts)
    assert pooled["folds"] == 2
    for row in pooled["labels"].values():  # two folds of cross-validation test every post once
        assert sum(row["reported"]["counts"]) == sum(row["uncalibrated"]["counts"]) == row["items"] == tokens
    assert (trained_runs.span / PLOT).stat().st_size > 10_000
    for entry in ("span_f", "post_f"):  # a run of several entries: one diagram per entry, data per entry and fold
        assert (trained_runs.multi / f"reliability-{entry}.png").stat().st_size > 10_000
        assert (trained_runs.multi / "fold0" / entry / DATA_FILE).is_file()


def test_a_fold_writes_its_probabilities_compressed_and_rounded(trained_runs):
    path = trained_runs.span / "fold0" / FILE_NAME
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    values = json.loads(lines[0])["probabilities"]["a1"]
    assert all(round(x, 4) == x for label in values.values() for x in label)
    assert len(read_probabilities(path)) == len(lines)
    metrics = json.loads((trained_runs.span / "fold0" / "metrics.json").read_text())
    assert metrics["probability_file"].endswith(FILE_NAME)


def rerun(trained_runs, root: Path, *overrides: str):
    """Run the span experiment again from ``root`` (a copy of the shared run in ``root/results``), with the one
    resolved path of the identity that names the shared run's root kept as it was."""
    saved = json.loads((root / "results" / trained_runs.span.name / "experiment.json").read_text())
    kept = f"task.zero_shot.output_dir={saved['task']['zero_shot']['output_dir']}"
    cfg = compose_run(root, trained_runs.encoder, trained_runs.sample, "span-f", "cv.num_folds=2", kept, *overrides)
    run(cfg)
    return Path(cfg.paths.results_dir) / cfg.name


def copied_run(trained_runs, tmp_path) -> Path:
    return copy_of(trained_runs.span, tmp_path / "results", trained_runs.span.name)


@pytest.mark.parametrize("choice, drawn", [("experiment", True), ("none", False)])
def test_a_rerun_draws_the_experiment_diagram_as_reliability_plot_says(trained_runs, tmp_path, choice, drawn):
    folder = copied_run(trained_runs, tmp_path)
    (folder / PLOT).unlink()
    assert rerun(trained_runs, tmp_path, f"outputs.reliability_plot={choice}") == folder  # finished folds reused
    assert (folder / PLOT).is_file() is drawn
    assert not (folder / "fold0" / PLOT).exists() and (folder / "fold0" / DATA_FILE).is_file()


def test_an_unknown_reliability_plot_is_refused_before_anything_runs(tmp_path):
    from faina.training.run_settings import output_settings

    with pytest.raises(UserError, match="outputs.reliability_plot=folds is not one of experiment, fold, none"):
        output_settings(compose_train(f"paths.root_dir={tmp_path}", "outputs.reliability_plot=folds"))


@pytest.mark.e2e
def test_reliability_plot_fold_draws_each_new_fold_and_the_experiment(trained_runs, tmp_path):
    folder = copied_run(trained_runs, tmp_path)
    (folder / PLOT).unlink()
    shutil.rmtree(folder / "fold1")  # trained again, under outputs.reliability_plot=fold
    rerun(trained_runs, tmp_path, "outputs.reliability_plot=fold")
    assert (folder / "fold1" / PLOT).stat().st_size > 10_000 and (folder / "fold1" / DATA_FILE).is_file()
    assert not (folder / "fold0" / PLOT).exists()  # finished before: not drawn again
    assert (folder / PLOT).stat().st_size > 10_000


def test_a_run_folder_written_before_compact_outputs_still_reruns_and_scores(trained_runs, tmp_path, capsys):
    folder = copied_run(trained_runs, tmp_path)
    before = (folder / "results.md").read_text()
    for fold in ("fold0", "fold1"):  # the former layout: plain probabilities, no reliability data or figure
        packed = folder / fold / FILE_NAME
        (folder / fold / FORMER_FILE_NAME).write_bytes(gzip.decompress(packed.read_bytes()))
        packed.unlink()
        (folder / fold / DATA_FILE).unlink()
    (folder / PLOT).unlink()
    capsys.readouterr()
    rerun(trained_runs, tmp_path)
    assert (folder / "results.md").read_text() == before and before in capsys.readouterr().out
    assert not (folder / PLOT).exists()  # no fold has the data of a diagram
    fold = folder / "fold0"
    assert probability_file_in(fold) == fold / FORMER_FILE_NAME
    metrics = json.loads((fold / "metrics.json").read_text())
    arguments = ["-T", "span-fine", "-G", str(fold / "gold.conll"), "-P", str(fold / "predictions.conll")]
    scores = evaluate_main([*arguments, "--probabilities", str(probability_file_in(fold)), "--json"])
    capsys.readouterr()
    for measure in ("manhattan", "ece"):
        expected = metrics["probability_scores"]["model"][measure]
        assert scores["probability_scores"]["model"][measure] == pytest.approx(expected, abs=1e-4)

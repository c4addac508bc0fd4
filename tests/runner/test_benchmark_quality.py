"""The quality benchmark: ``scripts/benchmark_quality.py --quick`` run as a command on a corpus cut from the
synthetic sample, with the tiny encoder (the grid trains through train.py, every rule is scored with the project's
scorer, the default rule reproduces the run's own submission file, a rerun trains nothing), and its package
modules (``faina.benchmarks``): run names, recipes as train.py configs, the gain verdict, the score cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from common.errors import UserError
from faina.benchmarks import quality_report, quality_runs, quality_scores, seed_spread
from faina.benchmarks.quality_runs import Length
from helpers.configs import compose_train
from tiers import fixture_tier

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "benchmark_quality.py"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """train-dev.conll / test.conll / labels.yaml in the layout the script reads (the sample's first and last posts)."""
    from faina.data.levels import subset
    from faina.formats.conll import read_conll, write_conll
    from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
    from faina.sample import default_sample_dir

    folder = tmp_path_factory.mktemp("corpus")
    corpus = read_conll(default_sample_dir() / "sample.conll", LabelInventory.load(DEFAULT_LABELS_FILE))
    write_conll(subset(corpus, range(200)), folder / "train-dev.conll")
    write_conll(subset(corpus, range(260, 300)), folder / "test.conll")
    shutil.copy(DEFAULT_LABELS_FILE, folder / "labels.yaml")
    return folder


def overrides(tiny_encoder: str) -> list[str]:
    return [f"encoder.name_or_path={tiny_encoder}", "debug=fast"]


def run(corpus: Path, out: Path, tiny_encoder: str, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), "--quick", "--corpus", str(corpus), "--out", str(out)]
    # views and soft: the two scoring paths (a decoder set per view / one set met by every view); the other recipes
    # are train.py overrides, composed below (test_every_recipe_is_a_valid_train_config), not trained here
    command += ["--tasks", "span-f", "--recipes", "views", "soft", "--ensembles", "2"]
    for override in overrides(tiny_encoder):
        command += ["--override", override]
    return subprocess.run([*command, *extra], cwd=REPO, capture_output=True, text=True)


def run_dir(out: Path, tiny_encoder: str, seed: int, recipe: str = "views") -> Path:
    return out / "runs" / quality_runs.run_name("span-f", recipe, Length(1), seed, overrides(tiny_encoder))


@pytest.fixture(scope="module")
@fixture_tier("e2e")
def finished(corpus, tiny_encoder, tmp_path_factory):
    out = tmp_path_factory.mktemp("benchmark")
    done = run(corpus, out, tiny_encoder)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done


def test_grid_report_has_every_rule_and_the_ensemble(finished, tiny_encoder):
    out, done = finished
    span_rules = quality_scores.SPAN_RULES
    report = json.loads((out / "report.json").read_text())
    rows = {(row["recipe"], row["rule"]): row for row in report["rows"]}
    assert {rule for recipe, rule in rows if recipe == "views"} == set(span_rules)
    assert all(rows[("views", rule)]["seeds"] == 2 for rule in span_rules)
    # an ensemble gets every rule too: each member's fitted on its own dev split, averaged (cv.ensemble=K's rule)
    assert {rule for recipe, rule in rows if recipe == "views ensemble2"} == set(span_rules)
    ensemble = json.loads(
        next((out / "runs").glob("span-f-views-e1-*ensemble2-s1-2")).joinpath("benchmark-scores.json").read_text()
    )
    assert ensemble["member_rules"] is True and len(ensemble["scores"]["own"]["rule"]["members"]) == 2
    # a soft model has one decoder set: its rules are fitted against every view of dev, each view once
    assert {rule for recipe, rule in rows if recipe == "soft"} == set(span_rules)
    assert {rule for recipe, rule in rows if recipe == "soft ensemble2"} == set(span_rules)
    assert set(rows[("soft", "crf")]) >= {"strict F1", "exact F1", "cross-entropy", "verdict"}
    assert report["quick"] is True and report["overrides"] == overrides(tiny_encoder)
    assert report["lengths"] == {"span-f": ["1 epoch"]} and {row["length"] for row in report["rows"]} == {"1 epoch"}
    # a rule's paired difference is taken against the fixed rule of the same models
    per_seed = [
        json.loads((run_dir(out, tiny_encoder, seed) / "benchmark-scores.json").read_text())["scores"]
        for seed in (1, 2)
    ]
    differences = [scores["shared"]["strict"]["f1"] - scores["crf"]["strict"]["f1"] for scores in per_seed]
    assert rows[("views", "shared")]["paired Δ"][0] == pytest.approx(sum(differences) / 2)
    assert rows[("views", "shared")]["wins"] == f"{sum(d > 0 for d in differences)}/2"
    assert "paired Δ" not in rows[("views", "crf")]
    # a trained recipe is paired with the default recipe's model of the same seed
    assert rows[("soft", "crf")]["paired Δ"][0] == pytest.approx(
        rows[("soft", "crf")]["strict F1"][0] - rows[("views", "crf")]["strict F1"][0]
    )
    assert (out / "report.md").read_text() in done.stdout and (out / "report.png").stat().st_size > 1000


def test_the_calibration_report_scores_each_run_before_and_after_each_calibration(finished, tiny_encoder):
    from faina.benchmarks.calibration_scores import CALIBRATIONS

    out, _ = finished
    [saved] = list(out.glob("calibration-report-span-f-e1-o*.json"))
    rows = {(row["recipe"], row["calibration"]): row for row in json.loads(saved.read_text())["rows"]}
    assert set(rows) == {(recipe, name) for recipe in ("views", "soft") for name in CALIBRATIONS["span"]}
    assert {row["length"] for row in rows.values()} == {"1 epoch"} and all(r["seeds"] == 2 for r in rows.values())
    assert saved.with_suffix(".md").read_text().count("| span-f | views | 1 epoch |") == len(CALIBRATIONS["span"])
    for recipe in ("views", "soft"):
        per_seed = [
            json.loads((run_dir(out, tiny_encoder, seed, recipe) / "benchmark-calibration.json").read_text())
            for seed in (1, 2)
        ]
        for seed, run in zip((1, 2), per_seed):
            # the run's own calibration is the benchmark's "temperature": the same fit on the same dev split
            fold = json.loads((run_dir(out, tiny_encoder, seed, recipe) / "fold0" / "metrics.json").read_text())
            scores = run["scores"]
            assert scores["temperature"]["fit"]["dev_log_loss"] == fold["calibrated_on_dev"]["dev_log_loss"]
            raw_ce = fold["probability_scores_uncalibrated"]["model"]["cross_entropy"]
            assert scores["uncalibrated"]["model"]["cross_entropy"] == pytest.approx(raw_ce)
            assert scores["temperature"]["model"]["cross_entropy"] == pytest.approx(
                fold["probability_scores"]["model"]["cross_entropy"]
            )
        deltas = [
            run["scores"]["temperature"]["model"]["cross_entropy"]
            - run["scores"]["uncalibrated"]["model"]["cross_entropy"]
            for run in per_seed
        ]
        assert rows[(recipe, "temperature")]["paired Δ CE"][0] == pytest.approx(sum(deltas) / 2)
        assert rows[(recipe, "temperature")]["verdict"] in {"gain", "loss", "within spread"}
        assert "paired Δ CE" not in rows[(recipe, "uncalibrated")]


def test_default_rule_reproduces_the_runs_own_submission(finished, corpus, tiny_encoder):
    """The benchmark decodes from the model's emissions itself; with no rule its file must be train.py's."""
    from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
    from faina.scoring.official import evaluate_files

    out, _ = finished
    for seed in (1, 2):
        folder = run_dir(out, tiny_encoder, seed)
        ours = folder / "benchmark" / "pred-crf.conll"
        assert ours.read_text() == (folder / "fold0" / "submission.conll").read_text()
        saved = json.loads((folder / "benchmark-scores.json").read_text())["scores"]["crf"]
        inventory = LabelInventory.load(DEFAULT_LABELS_FILE)
        figures = evaluate_files("span-fine", out / "corpus" / "test.conll", ours, inventory=inventory, exact=True)
        assert saved["strict"] == figures["strict"]["avg"] and saved["exact"] == figures["exact"]["avg"]
        assert set(saved["soft_labels"]) == {"model", "prior", "oracle"}


def test_a_rerun_reuses_finished_runs_and_scores(finished, corpus, tiny_encoder):
    out, _ = finished
    scores = run_dir(out, tiny_encoder, 1) / "benchmark-scores.json"
    before = scores.stat().st_mtime_ns
    again = run(corpus, out, tiny_encoder)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "training" not in again.stderr and "scoring" not in again.stderr
    assert scores.stat().st_mtime_ns == before


@pytest.mark.slow  # the script in a fresh process
def test_a_corpus_without_its_files_is_one_clear_error(tmp_path, tiny_encoder):
    done = run(tmp_path, tmp_path / "out", tiny_encoder)
    assert done.returncode == 2 and "train-dev.conll" in done.stderr and "Traceback" not in done.stderr


def test_one_seed_is_reported_without_a_verdict(finished, corpus, tiny_encoder, tmp_path):
    """One model a session: ``--seeds 1`` reuses the finished seed, and no row of either report calls a difference
    a gain or a loss without a spread to judge it by."""
    out = tmp_path / "out"
    shutil.copytree(finished[0], out)
    done = run(corpus, out, tiny_encoder, "--seeds", "1", "--report-only")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "training" not in done.stderr and "Traceback" not in done.stderr
    rows = json.loads((out / "report.json").read_text())["rows"]
    assert {row["seeds"] for row in rows} == {1} and not any("ensemble" in row["recipe"] for row in rows)
    judged = [row for row in rows if "verdict" in row]
    assert judged and {row["verdict"] for row in judged} == {seed_spread.ONE_SEED}
    [saved] = list(out.glob("calibration-report-span-f-e1-o*.json"))
    calibrated = [row for row in json.loads(saved.read_text())["rows"] if "verdict" in row]
    assert calibrated and {row["verdict"] for row in calibrated} == {seed_spread.ONE_SEED}


@pytest.mark.parametrize("task", ["span-f", "post-f"])
def test_every_recipe_is_a_valid_train_config(task, tmp_path):
    """Each recipe's command composes as train.py would compose it, with the setting the recipe names."""
    files = {name: tmp_path / name for name in ("train-dev.conll", "test.conll", "train-dev.tsv", "test.tsv")}
    files["labels"] = tmp_path / "labels.yaml"
    for recipe, settings in quality_runs.RECIPES.items():
        if recipe in quality_runs.AUXILIARY_RECIPES and task not in quality_runs.AUXILIARY_TASKS:
            with pytest.raises(UserError, match=f"the recipe {recipe} trains span-f"):
                quality_runs.train_command(task, recipe, Length(6), 1, files, tmp_path / "runs", [])
            continue
        command = quality_runs.train_command(task, recipe, Length(6), 1, files, tmp_path / "runs", [])
        assert command[1] == "train.py" and command[len(command) - len(settings) :] == settings
        cfg = compose_train(*command[2:])
        assert cfg.data.get("targets", "views") == next(
            (s.split("=")[1] for s in settings if s.startswith("data.targets=")), "views"
        ), recipe
        assert cfg.checkpoint.average_last == (3 if recipe.endswith("-avg3") else 0), recipe
        assert cfg.name == quality_runs.run_name(task, recipe, Length(6), 1) and cfg.trainer.max_epochs == 6
        assert cfg.early_stopping.patience is None, recipe
    stopping = quality_runs.train_command(task, "views", Length(20, 5), 1, files, tmp_path / "runs", [])
    cfg = compose_train(*stopping[2:])
    assert cfg.trainer.max_epochs == 20 and cfg.early_stopping.patience == 5 and cfg.name.endswith("-e20p5-s1")


def test_overrides_name_their_own_runs():
    run_name = quality_runs.run_name
    assert run_name("span-f", "views", Length(6), 1) == "span-f-views-e6-s1"
    with_lr = run_name("span-f", "views", Length(6), 1, ["model.optimizer.lr=5e-05"])
    other_lr = run_name("span-f", "views", Length(6), 1, ["model.optimizer.lr=2e-05"])
    assert len({with_lr, other_lr, "span-f-views-e6-s1"}) == 3
    assert with_lr.startswith("span-f-views-e6-o") and with_lr.endswith("-s1")


def test_each_training_length_names_its_own_runs_and_fixed_lengths_keep_their_old_names():
    """Runs trained before lengths were options (``span-f-views-e20-s1``) are found again; early stopping and
    another epoch count are runs of their own."""
    names = {quality_runs.run_name("span-f", "views", length, 1) for length in (Length(20), Length(20, 5), Length(6))}
    assert names == {"span-f-views-e20-s1", "span-f-views-e20p5-s1", "span-f-views-e6-s1"}
    assert Length(20).label == "20 epochs" and Length(1).label == "1 epoch"
    assert Length(20, 5).label == "≤ 20 epochs, patience 5"
    assert Length(20).overrides() == ["trainer.max_epochs=20"]
    assert Length(20, 5).overrides() == ["trainer.max_epochs=20", "early_stopping.patience=5"]


@pytest.mark.parametrize("task", ["span-f", "post-f"])
def test_the_default_length_is_what_train_py_trains_for_the_task(task):
    assert quality_runs.default_epochs(task) == compose_train(f"task={task}").trainer.max_epochs
    assert quality_runs.lengths_of(task, None, [0]) == [quality_runs.default_length(task)]
    assert quality_runs.lengths_of(task, [6, 20], [0, 5]) == [Length(6), Length(6, 5), Length(20), Length(20, 5)]


@pytest.mark.parametrize("epochs, patiences", [([0], [0]), ([20], [-1])])
def test_a_length_of_no_epochs_or_a_negative_patience_is_one_clear_error(epochs, patiences):
    from common.errors import UserError

    with pytest.raises(UserError, match="epochs ≥ 1 and a patience ≥ 0"):
        quality_runs.lengths_of("span-f", epochs, patiences)


def _report_row(rule: str, f1: tuple[float, float], length: Length) -> dict:
    """A summarised span-f ``views`` row over three seeds, as ``quality_report.summarise`` writes one."""
    return {"task": "span-f", "seeds": 3, "recipe": "views", "rule": rule, "strict F1": f1, "_length": length}


def test_gain_needs_more_than_the_seeds_spread():
    at = Length(20)
    rows = [
        _report_row("crf", (0.40, 0.02), at),
        _report_row("a", (0.43, 0.01), at),  # +3 > 2: gain
        _report_row("b", (0.41, 0.03), at),  # +1 < 3: within
        _report_row("c", (0.35, 0.01), at),  # -5: loss
    ]
    verdicts = [row.get("verdict") for row in quality_report.mark_gains(rows, {"span-f": at})]
    assert verdicts == [None, "gain", "within spread", "loss"]
    assert not any("verdict at default length" in row for row in rows)


def test_a_row_is_judged_at_its_own_length_and_against_the_default_length_it_would_replace():
    """A tuned rule at 6 epochs gains on the 6-epoch default recipe, and still loses to the 20-epoch default: both
    verdicts are in its row; a row at the default length has only the first."""
    short, full = Length(6), Length(20)
    rows = [
        _report_row("crf", (0.33, 0.01), short),
        _report_row("own-min30", (0.38, 0.01), short),
        _report_row("crf", (0.42, 0.01), full),
        _report_row("own-min30", (0.43, 0.02), full),
    ]
    short_crf, short_tuned, full_crf, full_tuned = quality_report.mark_gains(rows, {"span-f": full})
    assert short_tuned["verdict"] == "gain" and short_tuned["vs default"] == pytest.approx(0.05)
    assert short_tuned["verdict at default length"] == "loss"
    assert short_tuned["vs default length"] == pytest.approx(-0.04)
    assert short_crf["verdict at default length"] == "loss" and "verdict" not in short_crf
    assert full_tuned["verdict"] == "within spread" and "verdict at default length" not in full_tuned
    assert "verdict" not in full_crf and "verdict at default length" not in full_crf


def _scored_run(recipe: str, length: Length, seed: int, crf: float, tuned: float, epochs: int | None = None) -> dict:
    entry = {"strict": {"f1": crf, "precision": crf, "recall": crf}, "rule": {}}
    tuned_entry = {"strict": {"f1": tuned, "precision": tuned, "recall": tuned}, "rule": {"scope": "own"}}
    return {
        "task": "span-f",
        "recipe": recipe,
        "seed": seed,
        "train_seconds": 60.0 * (epochs or length.epochs),
        "scores": {"crf": entry, "own-min30": tuned_entry},
        "length": length,
        "epochs_trained": epochs or length.epochs,
    }


def test_a_difference_between_single_seeds_gets_no_verdict_until_a_second_seed():
    full = Length(20)
    one = [_scored_run("views", full, 1, 0.40, 0.45)]
    tuned = {r["rule"]: r for r in quality_report.summarise(one, [], {"span-f": full})}["own-min30"]
    assert tuned["verdict"] == seed_spread.ONE_SEED and tuned["vs default"] == pytest.approx(0.05)
    two = [*one, _scored_run("views", full, 2, 0.40, 0.45)]
    tuned = {r["rule"]: r for r in quality_report.summarise(two, [], {"span-f": full})}["own-min30"]
    assert tuned["verdict"] == "gain"  # the same difference, now over a spread (of 0) measured on two seeds


def _calibrated_run(seed: int, uncalibrated: float, temperature: float) -> dict:
    """One run's ``benchmark-calibration.json`` content, reduced to what the calibration report reads."""

    def scores(cross_entropy: float) -> dict:
        measures = {"cross_entropy": cross_entropy, "manhattan": 0.1, "ece": cross_entropy / 10}
        prior = {"cross_entropy": 0.3, "manhattan": 0.2, "ece": 0.0}
        return {
            "model": measures,
            "prior": prior,
            "oracle": prior,
            "per_label": {"Threat": {"model": measures, "prior": prior, "oracle": prior}},
        }

    return {
        "task": "post-f",
        "recipe": "views",
        "seed": seed,
        "length": "10 epochs",
        "scores": {"uncalibrated": scores(uncalibrated), "temperature": scores(temperature)},
    }


def test_the_calibration_report_gives_one_seed_no_verdict_and_two_seeds_one():
    from faina.benchmarks.calibration_report import calibration_rows

    one = [_calibrated_run(1, 0.40, 0.25)]
    [_, tempered] = calibration_rows(one)
    assert tempered["verdict"] == seed_spread.ONE_SEED and tempered["paired Δ CE"] == pytest.approx((-0.15, 0.0))
    [_, tempered] = calibration_rows([*one, _calibrated_run(2, 0.42, 0.26)])
    assert tempered["verdict"] == "gain" and tempered["CE wins"] == "2/2"


def test_rows_carry_their_length_and_are_paired_with_the_same_seed_at_the_default_length():
    full, stopped = Length(20), Length(20, 5)
    runs = [
        _scored_run("views", full, 1, 0.40, 0.42),
        _scored_run("views", full, 2, 0.36, 0.39),
        _scored_run("views", stopped, 1, 0.40, 0.41, epochs=12),
        _scored_run("views", stopped, 2, 0.33, 0.36, epochs=15),
    ]
    rows = {(r["length"], r["rule"]): r for r in quality_report.summarise(runs, [], {"span-f": full})}
    stopped_crf = rows[("≤ 20 epochs, patience 5", "crf")]
    assert stopped_crf["paired Δ at default length"][0] == pytest.approx(((0.40 - 0.40) + (0.33 - 0.36)) / 2)
    assert stopped_crf["wins at default length"] == "0/2"
    assert stopped_crf["epochs trained"] == pytest.approx((13.5, 2.1213203))
    assert stopped_crf["train minutes"][0] == pytest.approx(13.5)
    # a rule at the stopped length: paired with its own model's fixed rule, and with the default-length default
    stopped_tuned = rows[("≤ 20 epochs, patience 5", "own-min30")]
    assert stopped_tuned["paired Δ"][0] == pytest.approx(((0.41 - 0.40) + (0.36 - 0.33)) / 2)
    assert stopped_tuned["paired Δ at default length"][0] == pytest.approx(((0.41 - 0.40) + (0.36 - 0.36)) / 2)
    # the default length's rows: no second pairing, and a fixed length reports no epochs trained of its own
    assert "paired Δ at default length" not in rows[("20 epochs", "own-min30")]
    assert "epochs trained" not in rows[("20 epochs", "crf")]
    table = quality_report.markdown(list(rows.values()), "Machine: test.", (), {"span-f": full})
    assert "| ≤ 20 epochs, patience 5 | crf |" in table and "span-f 20 epochs" in table


def test_a_training_that_exits_0_without_results_is_refused(tmp_path, monkeypatch):
    """A train.py stopped early (e.g. Lightning's SIGTERM stop used to exit 0) must not be scored as finished."""
    from common.errors import UserError

    monkeypatch.setattr(
        quality_runs.subprocess, "run", lambda command, **kwargs: subprocess.CompletedProcess(command, 0)
    )
    files = {name: tmp_path / name for name in ("train-dev.conll", "test.conll", "labels")}
    with pytest.raises(UserError, match="without its results.json"):
        quality_runs.train("span-f", "views", Length(6), 1, files, tmp_path / "runs", [], print)
    assert not (tmp_path / "runs" / "span-f-views-e6-s1" / quality_runs.TIME_FILE).exists()


def test_old_score_files_are_kept_only_where_version_2_fits_the_same_rules(tmp_path):
    """Version 2 fits a one-view model's rules against every view of dev; a ``views`` recipe's rules always were."""
    path = tmp_path / "benchmark-scores.json"
    for version, recipe, kept in [(1, "views", True), (1, "views-avg3", True), (1, "union", False), (1, "soft", False)]:
        path.write_text(json.dumps({"version": version, "scores": {}}))
        assert (quality_scores.cached_scores(path, recipe) is not None) is kept, (version, recipe)
    path.write_text(json.dumps({"version": quality_scores.SCORES_VERSION, "scores": {}}))
    assert quality_scores.cached_scores(path, "union") is not None


def test_the_task_data_is_read_once_per_corpus_and_afresh_when_a_file_changes(corpus, tmp_path, monkeypatch):
    """Every member and seed of a recipe shares one read of the corpus; a rewritten file is not served stale."""
    import os

    import faina.data.task_data as task_data

    shutil.copytree(corpus, tmp_path / "corpus")
    files = quality_runs.prepare_corpus(tmp_path / "corpus", tmp_path / "out", quick=False)
    reads = []
    real = task_data.load_task_data
    monkeypatch.setattr(task_data, "load_task_data", lambda *a, **k: reads.append(a) or real(*a, **k))
    first_dev, data = quality_runs.dev_corpus_of("span-f", files, "views", 1)
    second_dev, same = quality_runs.dev_corpus_of("span-f", files, "views", 2)
    assert len(reads) == 1 and same is data
    assert {p.post_id for p in first_dev.posts} != {p.post_id for p in second_dev.posts}  # each seed its own split
    quality_runs.dev_corpus_of("span-f", files, "union", 1)  # other targets: another read
    assert len(reads) == 2
    stamp = os.stat(files["train-dev.conll"]).st_mtime_ns
    os.utime(files["train-dev.conll"], ns=(stamp + 10**9, stamp + 10**9))
    quality_runs.dev_corpus_of("span-f", files, "views", 1)
    assert len(reads) == 3


def test_ensembles_alone_asks_for_none(finished, corpus, tiny_encoder, tmp_path):
    """``--ensembles`` with no size scores no ensemble (the docs' grid commands use it to save that time); a size
    asks for that ensemble. Both on the finished grid, reused: nothing trains or is scored again."""
    out, _ = finished
    copy = tmp_path / "benchmark"
    shutil.copytree(out, copy)
    for sizes, expected in (((), {"views", "soft"}), (("2",), {"views", "soft", "views ensemble2", "soft ensemble2"})):
        done = run(corpus, copy, tiny_encoder, "--report-only", "--ensembles", *sizes)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "training" not in done.stderr and "scoring" not in done.stderr
        assert {row["recipe"] for row in json.loads((copy / "report.json").read_text())["rows"]} == expected


@pytest.mark.e2e
def test_each_length_trains_runs_of_its_own_judged_at_it_and_at_the_default_length(corpus, tiny_encoder, tmp_path):
    """``--epochs 1 3 --patience 0 2``: four lengths, each its own train.py runs with its own settings; every row
    says its length, the early-stopped ones how many epochs they trained, and the rows at 3 epochs are also judged
    against the default length (``--quick``: 1 epoch)."""
    out = tmp_path / "lengths"
    command = [sys.executable, str(SCRIPT), "--quick", "--corpus", str(corpus), "--out", str(out)]
    command += ["--tasks", "post-f", "--recipes", "views", "--epochs", "1", "3", "--patience", "0", "2"]
    command += ["--ensembles", "--override", f"encoder.name_or_path={tiny_encoder}"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    labels = ["1 epoch", "≤ 1 epoch, patience 2", "3 epochs", "≤ 3 epochs, patience 2"]
    assert report["lengths"] == {"post-f": labels} and report["default lengths"] == {"post-f": "1 epoch"}
    rows = {(row["length"], row["rule"]): row for row in report["rows"]}
    assert {length for length, _ in rows} == set(labels)
    tag = quality_runs.overrides_tag([f"encoder.name_or_path={tiny_encoder}"])
    for seed in (1, 2):
        stopped = out / "runs" / f"post-f-views-e3p2{tag}-s{seed}"
        config = (stopped / "config.yaml").read_text()
        assert "max_epochs: 3" in config and "patience: 2" in config
        trained = json.loads((stopped / "fold0" / "metrics.json").read_text())["early_stopping"]["epochs_trained"]
        assert 1 <= trained <= 3
        assert "early_stopping" not in json.loads(
            (out / "runs" / f"post-f-views-e3{tag}-s{seed}" / "fold0" / "metrics.json").read_text()
        )
    assert "epochs trained" in rows[("≤ 3 epochs, patience 2", "tau0.7")]
    assert "epochs trained" not in rows[("3 epochs", "tau0.7")]
    assert "verdict at default length" in rows[("3 epochs", "tau0.7")] and "verdict" not in rows[("3 epochs", "tau0.7")]
    assert "paired Δ at default length" in rows[("3 epochs", "tau0.7")]
    assert (
        "verdict at default length" not in rows[("1 epoch", "own-floor0.3")]
        and "verdict" in rows[("1 epoch", "own-floor0.3")]
    )
    assert "| 3 epochs |" in (out / "report.md").read_text()


@pytest.mark.parametrize("task", ["span-f", "post-f"])
def test_a_joint_recipe_trains_the_task_with_the_other_level_of_the_corpus(task, tmp_path):
    files = {name: tmp_path / name for name in ("train-dev.conll", "test.conll", "train-dev.tsv", "test.tsv")}
    files["labels"] = tmp_path / "labels.yaml"
    command = quality_runs.train_command(task, "joint", Length(6), 1, files, tmp_path / "runs", [])
    cfg = compose_train(*command[2:])
    entries = cfg.task.entries
    assert cfg.task.name == "multi" and cfg.trainer.max_epochs == 6 and cfg.cv.name == "official"
    assert [name for name, entry in entries.items() if entry.target] == [quality_runs.ENTRY_OF[task]]
    assert {entry.data.train_path for entry in entries.values()} == {str(files["train-dev.conll"])}
    assert (entries.span_f.data.test_path, entries.post_f.data.test_path) == (
        str(files["test.conll"]),
        str(files["test.tsv"]),
    )
    run = tmp_path / "runs" / "x"
    assert quality_runs.model_dir(run, task, "joint") == run / "fold0" / quality_runs.ENTRY_OF[task]
    assert quality_runs.model_dir(run, task, "views") == run / "fold0"


@pytest.mark.parametrize("recipe, strategy", [("aux-proportional", "proportional"), ("aux-sequential", "sequential")])
def test_an_auxiliary_recipe_trains_span_f_with_the_sample_as_a_second_corpus(recipe, strategy, tmp_path):
    files = {name: tmp_path / name for name in ("train-dev.conll", "test.conll", "train-dev.tsv", "test.tsv")}
    files["labels"] = tmp_path / "labels.yaml"
    command = quality_runs.train_command("span-f", recipe, Length(6), 1, files, tmp_path / "runs", [])
    cfg = compose_train(*command[2:])
    entries = {name: entry for name, entry in cfg.task.entries.items() if entry is not None}  # post_f: switched off
    assert set(entries) == {"span_f", "second"} and cfg.task.sampling.strategy == strategy
    assert [name for name, entry in entries.items() if entry.target] == ["span_f"]
    span_f, second = entries["span_f"], entries["second"]
    assert (span_f.data.train_path, span_f.data.test_path, span_f.data.labels) == (
        str(files["train-dev.conll"]),
        str(files["test.conll"]),
        str(files["labels"]),
    )
    assert second.data.train_path == str(quality_runs.sample_conll()) and second.data.labels == "faina"
    assert quality_runs.sample_conll().is_file()
    assert quality_runs.model_dir(tmp_path, "span-f", recipe) == tmp_path / "fold0" / "span_f"


def test_an_auxiliary_recipe_of_post_f_is_one_message_before_anything_trains(tmp_path):
    command = [sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path / "out")]
    command += ["--tasks", "span-f", "post-f", "--recipes", "views", "aux-sequential"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "the recipe aux-sequential trains span-f with the synthetic sample" in done.stderr
    assert "Fix: run the aux- recipes with --tasks span-f" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # checked before the corpus is prepared or a run trains


def test_the_joint_recipe_is_trained_and_scored_like_the_others(finished, corpus, tiny_encoder, tmp_path):
    """Beside the finished grid's ``views`` runs (reused, so only the joint runs train), each joint run is one
    ``task=multi`` run of both levels whose span head is scored under every rule and paired with ``views``."""
    out = tmp_path / "out"
    shutil.copytree(finished[0], out)
    command = [sys.executable, str(SCRIPT), "--quick", "--corpus", str(corpus), "--out", str(out)]
    command += ["--tasks", "span-f", "--recipes", "views", "joint", "--ensembles"]
    for override in overrides(tiny_encoder):
        command += ["--override", override]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    trained = {line.split()[2] for line in done.stderr.splitlines() if line.startswith("[benchmark] training ")}
    assert trained == {run_dir(out, tiny_encoder, seed, "joint").name for seed in (1, 2)}
    report = json.loads((out / "report.json").read_text())["rows"]
    rows = {(row["recipe"], row["rule"]) for row in report}
    assert {rule for recipe, rule in rows if recipe == "joint"} == set(quality_scores.SPAN_RULES)
    assert all("paired Δ" in row for row in report if row["recipe"] == "joint")  # against views, seed by seed
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
    command += ["--tasks", "span-f", "--recipes", "aux-proportional", "aux-sequential", "--epochs", "2"]
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

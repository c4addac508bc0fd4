"""``scripts/permuted_label_control.py`` as a command: a corpus cut from the synthetic sample with one label permuted,
one tiny run trained on it through train.py, and its test probabilities scored under every calibration, with and
without the prior fallback (the figures themselves are measured on a real corpus: docs/soft-labels.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from faina.benchmarks.calibration_scores import CALIBRATIONS
from faina.benchmarks.seed_spread import ONE_SEED

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "permuted_label_control.py"


@pytest.fixture
def corpus(tmp_path) -> Path:
    from faina.data.levels import subset
    from faina.formats.conll import read_conll, write_conll
    from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
    from faina.sample import default_sample_dir

    folder = tmp_path / "corpus"
    folder.mkdir()
    corpus = read_conll(default_sample_dir() / "sample.conll", LabelInventory.load(DEFAULT_LABELS_FILE))
    write_conll(subset(corpus, range(120)), folder / "train-dev.conll")
    write_conll(subset(corpus, range(260, 300)), folder / "test.conll")
    shutil.copy(DEFAULT_LABELS_FILE, folder / "labels.yaml")
    return folder


def _control_command(corpus: Path, out: Path, task: str, overrides: list[str], *extra: str) -> list[str]:
    """The script on the cut corpus, Slogan permuted, one epoch, with the given train.py overrides."""
    command = [sys.executable, str(SCRIPT), "--label", "Slogan", "--corpus", str(corpus), "--out", str(out)]
    command += ["--task", task, "--epochs", "1", *extra]
    for override in overrides:
        command += ["--override", override]
    return command


def _post_overrides(tiny_encoder) -> list[str]:
    return [f"encoder.name_or_path={tiny_encoder}", "debug=fast", "model.module.calibration.fallback=prior"]


@pytest.mark.e2e
def test_the_control_trains_once_and_scores_every_calibration_against_the_prior(corpus, tiny_encoder, tmp_path):
    out = tmp_path / "out"
    command = _control_command(corpus, out, "post-f", _post_overrides(tiny_encoder))
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    control = json.loads((out / "control.json").read_text())
    assert control["permuted"] == "Slogan" and control["length"] == "1 epoch" and control["reference"] == "temperature"
    assert control["seeds"] == [1] and set(control["runs"]) == {"1"}  # the default: one seed
    table = control["runs"]["1"]
    assert set(table["gap_to_prior"]) == set(CALIBRATIONS["post"])
    row = table["per_label"]["Slogan"]
    assert table["gap_to_prior"]["platt+prior"] == pytest.approx(row["platt+prior"] - row["prior"])
    assert table["fits"]["temperature+prior"]["fit_seconds"] >= 0
    assert "| Slogan (permuted) |" in done.stdout
    # every calibration paired item by item with the prior and with today's temperature: the differences are those
    # of the reported cross-entropies, today's against itself is 0 with no spread
    for name, pairs in table["paired"].items():
        for label, row in table["per_label"].items():
            assert pairs["vs_prior"][label]["difference"] == pytest.approx(row[name] - row["prior"], abs=2e-6)
            assert pairs["vs_temperature"][label]["difference"] == pytest.approx(
                row[name] - row["temperature"], abs=2e-6
            )
    assert table["paired"]["temperature"]["vs_temperature"]["Slogan"] == {"difference": 0.0, "se": 0.0}
    assert table["gap_to_prior_se"]["uncalibrated"] == table["paired"]["uncalibrated"]["vs_prior"]["Slogan"]["se"] > 0
    assert "| Slogan (permuted) − prior |" in done.stdout and " ± " in done.stdout
    worse = table["real_labels_worse_than_temperature"]
    assert (
        all(cell["difference"] > 0 for rows in worse.values() for cell in rows.values()) and worse["temperature"] == {}
    )
    # the run itself fitted the fallback in its fold, against its train part's prior
    [run] = [path for path in (out / "runs").iterdir() if path.is_dir()]
    fitted = json.loads((run / "fold0" / "metrics.json").read_text())["calibrated_on_dev"]
    assert fitted["fallback"] == "prior" and set(fitted["prior_weight"]) == {"a1", "a2"}
    # one seed: the table over seeds repeats its figures and judges nothing
    summary = control["across_seeds"]["temperature+prior"]
    assert summary["permuted"]["gaps"] == [table["gap_to_prior"]["temperature+prior"]]
    assert {row["verdict"] for row in summary["real"].values()} == {ONE_SEED}
    assert f"{ONE_SEED})" in done.stdout


@pytest.mark.e2e
def test_a_second_seed_reuses_the_first_run_and_adds_a_verdict_over_both(corpus, tiny_encoder, tmp_path):
    out = tmp_path / "out"
    overrides = _post_overrides(tiny_encoder)
    first = subprocess.run(
        _control_command(corpus, out, "post-f", overrides, "--seed", "1"), cwd=REPO, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr[-3000:]
    seed_one = json.loads((out / "control.json").read_text())["runs"]["1"]
    both = subprocess.run(
        _control_command(corpus, out, "post-f", overrides, "--seeds", "1", "2"),
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert both.returncode == 0, both.stderr[-3000:]
    assert "training post-f-views-e1" in both.stdout and both.stdout.count("training ") == 1  # seed 1 was reused
    control = json.loads((out / "control.json").read_text())
    assert control["seeds"] == [1, 2] and control["runs"]["1"] == seed_one
    summary = control["across_seeds"]["temperature+prior"]
    gaps = [control["runs"][seed]["gap_to_prior"]["temperature+prior"] for seed in ("1", "2")]
    assert summary["permuted"]["gaps"] == gaps
    assert all(row["verdict"] in {"gain", "loss", "within spread"} for row in summary["real"].values())
    assert "Over seeds 1, 2" in both.stdout


@pytest.mark.e2e
def test_the_joint_recipe_scores_the_task_entry_of_one_multi_task_run(corpus, tiny_encoder, tmp_path):
    out = tmp_path / "out"
    fallback = [f"task.entries.{entry}.model.module.calibration.fallback=prior" for entry in ("span_f", "post_f")]
    overrides = [f"encoder.name_or_path={tiny_encoder}", "debug=fast", *fallback]
    command = _control_command(corpus, out, "span-f", overrides, "--recipe", "joint")
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    control = json.loads((out / "control.json").read_text())
    table = control["runs"]["1"]
    assert control["recipe"] == "joint" and set(table["gap_to_prior"]) == set(CALIBRATIONS["span"])
    # at span level the items are tokens, paired with the prior's token by token, posts as the independent units
    row, pairs = table["per_label"]["Slogan"], table["paired"]["temperature+prior"]["vs_prior"]["Slogan"]
    assert pairs["difference"] == pytest.approx(row["temperature+prior"] - row["prior"], abs=2e-6)
    [run] = [path for path in (out / "runs").iterdir() if path.is_dir()]
    entries = {path.name for path in (run / "fold0").iterdir() if (path / "metrics.json").is_file()}
    assert entries == {"span_f", "post_f"}  # task=multi: both levels trained in the one run
    for entry in ("span_f", "post_f"):  # each entry fitted the fallback its own override asked for
        fitted = json.loads((run / "fold0" / entry / "metrics.json").read_text())["calibrated_on_dev"]
        assert fitted["fallback"] == "prior", entry

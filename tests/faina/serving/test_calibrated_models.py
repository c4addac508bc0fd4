"""A trained fold's calibration end to end, on the session's shared tiny runs (``helpers.trained``): fitted on dev
and saved with the model (settings in ``model.json``, values in ``model.safetensors``), reported by the fold, by
``faina.predict`` / ``faina.tag`` (raw ones with ``--uncalibrated``), by exported folders and by ensembles, while
folders saved before calibration existed load uncalibrated."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from common.errors import UserError
from faina.formats.probability_file import read_probabilities
from faina.predict import main as predict_main
from faina.serving.fold_model import load_exported
from faina.serving.loading import load_predictor
from faina.tag import main as tag_main
from helpers.trained import copy_of


@pytest.mark.parametrize("kind", ["span", "post"])
def test_a_fold_fits_its_calibration_on_dev_saves_it_and_scores_both(trained_runs, kind):
    fold = getattr(trained_runs, kind) / "fold0"
    module = json.loads((fold / "model.json").read_text())["model"]["module"]
    assert module["calibration"] == {
        "method": "temperature",
        "scope": "own",
        "min_evidence": 5,
        "fallback": "none",
        "fallback_folds": 5,
        "fallback_margin": 0.0,
    }
    assert torch.equal(weights_of(fold)["calibration_weight"], torch.ones_like(weights_of(fold)["calibration_weight"]))
    weights = load_file(str(fold / "model.safetensors"))
    assert "calibration_scale" in weights and not torch.equal(
        weights["calibration_scale"], torch.ones_like(weights["calibration_scale"])
    )
    metrics = json.loads((fold / "metrics.json").read_text())
    fitted = metrics["calibrated_on_dev"]
    assert fitted["method"] == "temperature" and fitted["dev_log_loss"]["after"] <= fitted["dev_log_loss"]["before"]
    assert set(fitted["temperature"]) == {"a1", "a2"}
    # the file's probabilities are the calibrated ones; the raw ones are scored beside them; the former key stays
    assert metrics["soft_labels"] == metrics["probability_scores"]
    assert metrics["probability_scores_uncalibrated"]["model"] != metrics["probability_scores"]["model"]
    assert metrics["probability_scores_uncalibrated"]["prior"] == metrics["probability_scores"]["prior"]
    reliability = json.loads((fold / "reliability.json").read_text())  # both curves' data; the figure per run
    assert all(set(row) >= {"reported", "uncalibrated"} for row in reliability["labels"].values())
    assert (fold.parent / "reliability.png").stat().st_size > 10_000
    model, _ = load_exported(fold)
    assert model.applies_calibration and torch.equal(model.calibration_scale, weights["calibration_scale"])


def weights_of(fold):
    return load_file(str(fold / "model.safetensors"))


@pytest.mark.parametrize("run", ["span-c", "post-c", "multi/span_f", "multi/post_f"])
def test_a_fold_with_the_prior_fallback_mixes_in_the_scorers_prior_and_saves_its_weights(trained_runs, run):
    """Single-task (span-c, post-c) and ``task=multi`` entries trained with ``calibration.fallback=prior``: the
    prior each head mixes in is the train part's share the fold's probability scores report (per view: their mean
    over views), the weights lie in [0, 1], the cross-fitted dev loss is not above the calibration's (nor, without a
    margin, the prior's), post-c's margin reports its evidence, and the buffers travel with the exported folder."""
    task, _, entry = run.partition("/")
    fold = (trained_runs.multi / "fold0" / entry) if entry else (trained_runs.coarse[task] / "fold0")
    module = json.loads((fold / "model.json").read_text())["model"]["module"]
    assert module["calibration"]["fallback"] == "prior"
    weights = weights_of(fold)
    weight, prior = weights["calibration_weight"], weights["calibration_prior"]
    assert bool(((weight >= 0) & (weight <= 1)).all())
    fitted = json.loads((fold / "metrics.json").read_text())["calibrated_on_dev"]  # an entry's folder: its own
    losses = fitted["cross_fitted_log_loss"]
    assert losses["mixed"] <= losses["calibrated"] + 1e-6
    model, _ = load_exported(fold)
    labels = list(model.labels)
    if run == "post-c":  # trained with fallback_margin=1: each label's dev evidence, by name, and what it kept
        # a label below the margin keeps its calibration even where the prior was better on dev: no bound by the prior
        assert module["calibration"]["fallback_margin"] == 1.0
        assert list(fitted["fallback_evidence"]) == labels and isinstance(fitted["kept_by_margin"], int)
        below = [label for label, z in fitted["fallback_evidence"].items() if z <= 1.0]
        assert all(fitted["prior_weight"][view][label] == 1.0 for view in fitted["prior_weight"] for label in below)
    else:
        assert "fallback_evidence" not in fitted and losses["mixed"] <= losses["prior"] + 1e-6
    assert fitted["prior"] == {
        f"a{v + 1}": {label: round(float(value), 4) for label, value in zip(labels, row)}
        for v, row in enumerate(prior.reshape(model.num_views, -1).tolist())
    }
    scorer = json.loads((fold / "reliability.json").read_text())["labels"]
    mean_over_views = prior.reshape(model.num_views, -1).double().mean(0)
    assert mean_over_views.tolist() == pytest.approx([scorer[label]["prior"] for label in labels], abs=1e-4)
    assert torch.equal(model.calibration_weight, weight) and torch.equal(model.calibration_prior, prior)


def test_predict_writes_calibrated_probabilities_and_the_raw_ones_with_uncalibrated(trained_runs, tmp_path):
    fold, sample = trained_runs.span / "fold0", trained_runs.sample / "sample-unlabelled.conll"
    runs = {}
    for name, extra in (("calibrated", []), ("raw", ["--uncalibrated"])):
        out, probabilities = tmp_path / f"{name}.conll", tmp_path / f"{name}.jsonl"
        predict_main([str(fold), str(sample), str(out), "--probabilities", str(probabilities), *extra])
        runs[name] = (out.read_bytes(), read_probabilities(probabilities))
    assert runs["calibrated"][0] == runs["raw"][0]  # a calibration moves no hard decision
    calibrated, raw = runs["calibrated"][1].posts[0].values, runs["raw"][1].posts[0].values
    assert calibrated.shape == raw.shape and not (calibrated == raw).all()
    with pytest.raises(SystemExit) as stop:
        predict_main([str(fold), str(sample), str(tmp_path / "x.conll"), "--uncalibrated"])
    assert stop.value.code == 2


def test_tag_with_uncalibrated_writes_the_raw_probabilities(trained_runs, tmp_path, capsys):
    fold = trained_runs.post / "fold0"
    files = {}
    for name, extra in (("calibrated", []), ("raw", ["--uncalibrated"])):
        files[name] = tmp_path / f"{name}.jsonl"
        tag_main(
            [str(fold), "--text", "I soliti politici", "--probabilities", str(files[name]), "--device", "cpu", *extra]
        )
    calibrated, raw = (read_probabilities(files[n]).posts[0].values for n in ("calibrated", "raw"))
    model, _ = load_exported(fold)
    assert not (calibrated == raw).all()
    model.use_calibration(False)
    assert not model.applies_calibration


def test_a_folder_saved_before_calibration_existed_loads_uncalibrated(trained_runs, tmp_path):
    old = copy_of(trained_runs.post / "fold0", tmp_path, "old")
    meta = json.loads((old / "model.json").read_text())
    del meta["model"]["module"]["calibration"]
    (old / "model.json").write_text(json.dumps(meta))
    weights = load_file(str(old / "model.safetensors"))
    save_file({k: v for k, v in weights.items() if not k.startswith("calibration_")}, str(old / "model.safetensors"))
    model, _ = load_exported(old)
    assert not model.applies_calibration and model.calibration.method == "none"
    assert torch.equal(model.calibration_scale, torch.ones_like(model.calibration_scale))
    assert torch.equal(model.calibration_weight, torch.ones_like(model.calibration_weight))


def test_a_calibrated_folder_saved_before_the_prior_fallback_existed_loads_unchanged(trained_runs, tmp_path):
    old = copy_of(trained_runs.span / "fold0", tmp_path, "old")
    meta = json.loads((old / "model.json").read_text())
    for key in ("fallback", "fallback_folds", "fallback_margin"):
        del meta["model"]["module"]["calibration"][key]
    (old / "model.json").write_text(json.dumps(meta))
    weights = load_file(str(old / "model.safetensors"))
    kept = {k: v for k, v in weights.items() if k not in {"calibration_weight", "calibration_prior"}}
    save_file(kept, str(old / "model.safetensors"))
    model, _ = load_exported(old)
    current, _ = load_exported(trained_runs.span / "fold0")
    assert model.calibration == current.calibration and model.applies_calibration
    assert torch.equal(model.calibration_values(), current.calibration_values())
    assert torch.equal(model.calibration_weight, torch.ones_like(model.calibration_weight))


def test_exported_folders_and_ensembles_report_their_members_calibration(trained_runs):
    exported, _ = load_exported(trained_runs.exports["span-fold0"])
    fold, _ = load_exported(trained_runs.span / "fold0")
    assert exported.applies_calibration and torch.equal(exported.calibration_scale, fold.calibration_scale)
    together, _ = load_predictor(trained_runs.span)  # the results folder: the ensemble of its two folds
    assert together.applies_calibration and len(together) == 2


def test_a_calibration_method_outside_the_closed_set_in_a_saved_folder_is_one_message(trained_runs, tmp_path):
    bad = copy_of(trained_runs.span / "fold0", tmp_path, "bad")
    meta = json.loads((bad / "model.json").read_text())
    meta["model"]["module"]["calibration"]["method"] = "platt"  # no Platt for a CRF
    (bad / "model.json").write_text(json.dumps(meta))
    with pytest.raises(UserError, match="calibration.method"):
        load_exported(bad)

"""``train.run`` end to end on a small synthetic sample with a tiny encoder: every task, outputs, CV logic."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from common.errors import UserError
from faina.scoring.official import evaluate_files
from tests_paths import REPO
from train import run

TASKS = ["post-c", "post-f", "span-c", "span-f"]


def assert_fold_files_are_evaluable(fold: Path, task: str, eval_task: str) -> dict:
    """A finished fold's gold and prediction files are in the official layout: the evaluator scores them as the
    runner did (its ``metrics.json``), with seqeval exact match beside the official scores for span tasks."""
    ext = "conll" if task.startswith("span") else "tsv"
    gold, pred = fold / f"gold.{ext}", fold / f"predictions.{ext}"
    assert gold.is_file() and pred.is_file() and (fold / "metrics.json").is_file()
    saved = json.loads((fold / "metrics.json").read_text())
    assert evaluate_files(eval_task, gold, pred, exact=task.startswith("span")) == saved["test"]
    assert ("exact" in saved["test"]) == task.startswith("span")
    assert ("soft" in saved["test"]) == (task == "span-f")
    return saved


@pytest.mark.parametrize("task, level", [("span-f", "span"), ("post-f", "post")])
def test_the_shared_tiny_runs_wrote_evaluable_folds_and_a_results_table(trained_runs, task, level):
    """The fast tier's end-to-end check: the session's shared runs went through train.py's ``run`` (every fold
    trained, predicted, scored and summarised)."""
    run_dir = getattr(trained_runs, level)
    summary = json.loads((run_dir / "results.json").read_text())
    folds = [f["fold"] for f in summary["folds"]]
    assert folds == ([0, 1] if level == "span" else [0])
    for k in folds:
        assert_fold_files_are_evaluable(run_dir / f"fold{k}", task, f"{level}-fine")
    assert (run_dir / "results.md").read_text().startswith(f"### {task}")
    assert 0.0 <= summary["summary"]["strict"]["avg"]["f1"]["mean"] <= 1.0


@pytest.mark.parametrize("task, level", [("span-c", "span"), ("post-c", "post")])
def test_the_shared_coarse_runs_wrote_evaluable_folds(trained_runs, task, level):
    """span-c and post-c through the same runner: coarse labels derived from the sample's fine ones, scored by the
    coarse evaluator as the runner scored them."""
    run_dir = trained_runs.coarse[task]
    saved = assert_fold_files_are_evaluable(run_dir / "fold0", task, f"{level}-coarse")
    from faina.formats.labels import LabelInventory

    coarse = set(LabelInventory.load("faina").coarse)
    views = saved["per_label"]["strict"]  # per scoring mode, per view, per label
    scored = {label for labels in views.values() for label in labels}
    assert scored - {""} and scored <= coarse | {"avg", ""}, scored  # "": a post with no label
    assert (run_dir / "results.md").read_text().startswith(f"### {task}")


def test_the_shared_multi_task_run_scored_each_entry_from_its_own_files(trained_runs):
    """``task=multi`` through the one runner: each entry's folder holds its head's files, scored by the entry's own
    evaluator exactly as the fold's metrics.json says; the run's results.json has a block per entry and its table
    both entries."""
    run_dir = trained_runs.multi
    fold = json.loads((run_dir / "fold0" / "metrics.json").read_text())
    assert fold["fold"] == 0 and fold["target"] == "span_f" and set(fold["entries"]) == {"span_f", "post_f"}
    for entry, task, eval_task in (("span_f", "span-f", "span-fine"), ("post_f", "post-f", "post-fine")):
        saved = assert_fold_files_are_evaluable(run_dir / "fold0" / entry, task, eval_task)
        assert fold["entries"][entry]["test"] == saved["test"]
        assert (run_dir / "fold0" / entry / "model.json").is_file()
    heads = json.loads((run_dir / "fold0" / "heads.json").read_text())
    assert heads == {"target": "span_f", "heads": {e: {"folder": e, "head": e} for e in ("span_f", "post_f")}}
    summary = json.loads((run_dir / "results.json").read_text())
    assert summary["target"] == "span_f" and set(summary["entries"]) == {"span_f", "post_f"}
    post_f1 = summary["entries"]["post_f"]["summary"]["strict"]["avg"]["f1"]["mean"]
    assert post_f1 == pytest.approx(fold["entries"]["post_f"]["test"]["strict"]["avg"]["f1"])
    table = (run_dir / "results.md").read_text()
    assert table.startswith("### span_f (span-f, target)") and "### post_f (post-f, auxiliary)" in table


@pytest.mark.e2e
@pytest.mark.parametrize("task", TASKS)
def test_fast_dev_run_writes_evaluable_predictions(make_cfg, task):
    cfg = make_cfg(f"task={task}", "debug=fast", "cv.folds=[0]")
    metrics = run(cfg)
    assert_fold_files_are_evaluable(Path(cfg.paths.results_dir) / cfg.name / "fold0", task, cfg.task.eval_task)
    assert "test/strict/avg/f1_mean" in metrics


@pytest.mark.e2e
def test_short_real_run_reports_folds_and_table(make_cfg, capsys):
    cfg = make_cfg("task=span-f", "cv.num_folds=3", "trainer.max_epochs=2", "logger=csv")
    metrics = run(cfg)
    exp = Path(cfg.paths.results_dir) / cfg.name
    summary = json.loads((exp / "results.json").read_text())
    assert [f["fold"] for f in summary["folds"]] == [0, 1, 2]
    # every labelled post is predicted exactly once across the test folds
    assert sum(f["test_posts"] for f in summary["folds"]) == 60
    assert (exp / "results.md").read_text().startswith("### span-f")
    assert "| strict | avg |" in capsys.readouterr().out
    assert 0.0 <= metrics["val/f1_mean"] <= 1.0
    for k in range(3):
        fold = exp / f"fold{k}"
        # a finished fold keeps its exported model (the best weights), not its 3x larger checkpoints
        assert (fold / "model.safetensors").is_file() and not (fold / "checkpoints").exists()
        assert (fold / "logs" / "metrics.csv").is_file()  # logger=csv: each fold its own metrics file


@pytest.mark.e2e
def test_rerun_skips_finished_folds_and_refuses_other_configs(make_cfg, caplog):
    caplog.set_level(logging.INFO)
    cfg = make_cfg("task=post-f", "debug=fast", "cv.folds=[0]")
    first = run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    stamp = (fold / "metrics.json").stat().st_mtime_ns
    again = run(make_cfg("task=post-f", "debug=fast", "cv.folds=[0]"))
    assert again == first and (fold / "metrics.json").stat().st_mtime_ns == stamp
    assert "finished earlier" in caplog.text
    with pytest.raises(UserError, match="another configuration .*model.module.decision.fixed"):
        run(make_cfg("task=post-f", "debug=fast", "cv.folds=[0]", "model.module.decision.fixed=0.5"))


@pytest.mark.e2e
def test_same_seed_same_numbers(make_cfg, tmp_path):
    results = []
    for name in ("a", "b"):
        cfg = make_cfg("task=span-c", "cv.folds=[0]", "trainer.max_epochs=1", f"name=det-{name}")
        run(cfg)
        fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
        results.append(
            (json.loads((fold / "metrics.json").read_text())["test"], (fold / "predictions.conll").read_bytes())
        )
    assert results[0] == results[1]


@pytest.mark.e2e
def test_official_mode_writes_a_submission_and_predict_cli_reproduces_it(make_cfg, small_sample, tmp_path):
    cfg = make_cfg("task=span-f", "cv=official", "trainer.max_epochs=1")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    submission = fold / "submission.conll"
    from faina.formats.conll import read_conll

    corpus = read_conll(submission)
    unlabelled = read_conll(small_sample / "sample-unlabelled.conll")
    assert corpus.labelled and [p.tokens for p in corpus.posts] == [p.tokens for p in unlabelled.posts]
    out = tmp_path / "again.conll"
    result = subprocess.run(
        [sys.executable, "-m", "faina.predict", str(fold), str(small_sample / "sample-unlabelled.conll"), str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == submission.read_bytes()


def test_missing_faina_says_where_to_get_it(make_cfg):
    cfg = make_cfg("data=faina", "debug=fast", sample=False)
    with pytest.raises(UserError, match="distributed on request only") as info:
        run(cfg)
    assert "data/faina" in str(info.value)


def test_unknown_mode_is_one_clear_error(make_cfg):
    from omegaconf import OmegaConf

    cfg = make_cfg("task=span-f")
    OmegaConf.update(cfg, "mode.name", "distill")
    with pytest.raises(UserError, match="task 'span-f' has no 'distill' mode") as info:
        run(cfg)
    assert "finetune" in info.value.fix and "zero-shot" in info.value.fix


@pytest.mark.parametrize(
    ("override", "field", "demand"),
    [
        ("model.module.decision.scope=bogus", "model.module.decision.scope", "'own', 'shared' or 'shrunk'"),
        ("model.module.o_bias=lots", "model.module.o_bias", "a valid number"),
        ("model.module.decision.min_evidence=many", "model.module.decision.min_evidence", "a valid integer"),
        ("model.module.o_bias=tuned", "model.module.o_bias=tuned is now model.module.decision.tuned=true", ""),
        ("+model.module.tuning_scope=shared", "model.module.tuning_scope is now model.module.decision.scope", ""),
    ],
)
def test_a_wrong_model_setting_is_refused_before_anything_trains(make_cfg, override, field, demand):
    cfg = make_cfg("task=span-f", override)
    with pytest.raises(UserError, match=field) as info:
        run(cfg)
    assert demand in info.value.message and "conf/model/mvmd.yaml" in info.value.fix
    assert not (Path(cfg.paths.results_dir) / cfg.name).exists()  # refused before the experiment folder exists


@pytest.mark.parametrize("value", ["-2", "two", "1.5"])
def test_a_wrong_number_of_averaged_epochs_is_refused_before_anything_trains(make_cfg, value):
    cfg = make_cfg("task=post-c", f"checkpoint.average_last={value}")
    with pytest.raises(UserError, match="checkpoint.average_last must be a whole number") as info:
        run(cfg)
    assert "checkpoint.average_last=3" in info.value.fix
    assert not (Path(cfg.paths.results_dir) / cfg.name).exists()


@pytest.mark.e2e
def test_interrupted_fold_resumes_from_its_last_checkpoint(make_cfg, monkeypatch):
    import lightning.pytorch as pl
    import torch

    from runner_helpers import SimulatedCrash

    crash = ["+callbacks.crash._target_=runner_helpers.CrashAfterEpoch", "+callbacks.crash.epoch=1"]
    common = ["task=post-c", "cv.folds=[0]", "trainer.max_epochs=3", "name=resume", "checkpoint.keep=true"]
    common.append("checkpoint.resume_every_n_epochs=1")
    with pytest.raises(SimulatedCrash):
        run(make_cfg(*common, *crash))
    fold = Path(make_cfg(*common).paths.results_dir) / "resume" / "fold0"
    assert not (fold / "metrics.json").exists()
    crashed_at = torch.load(fold / "checkpoints" / "last.ckpt", weights_only=True)["global_step"]
    assert crashed_at > 0
    resumed_from = []
    original_fit = pl.Trainer.fit

    def spying_fit(self, *args, **kwargs):
        resumed_from.append(kwargs.get("ckpt_path"))
        return original_fit(self, *args, **kwargs)

    monkeypatch.setattr(pl.Trainer, "fit", spying_fit)
    run(make_cfg(*common))
    assert resumed_from == [str(fold / "checkpoints" / "last.ckpt")]
    assert (fold / "metrics.json").is_file()
    # training went on from the crash point instead of starting over
    assert torch.load(fold / "checkpoints" / "last.ckpt", weights_only=True)["global_step"] > crashed_at
    # ... and ended exactly where an uninterrupted run ends: same scores, same prediction bytes, same weights
    straight = make_cfg("task=post-c", "cv.folds=[0]", "trainer.max_epochs=3", "name=straight")
    run(straight)
    other = fold.parent.parent / "straight" / "fold0"
    assert (
        json.loads((other / "metrics.json").read_text())["test"]
        == json.loads((fold / "metrics.json").read_text())["test"]
    )
    for name in ("predictions.tsv", "model.safetensors"):
        assert (other / name).read_bytes() == (fold / name).read_bytes(), name


@pytest.mark.e2e
def test_train_cli_user_error_is_one_line_exit_2(tmp_path):
    result = subprocess.run(
        [sys.executable, "train.py", "data=faina", f"paths.root_dir={tmp_path}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "Faina is not there" in result.stderr and "data.dir=" in result.stderr

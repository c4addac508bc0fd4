"""The end-of-multirun report: a row per job with what tells it apart, Optuna's verdict, no stray folder."""

from __future__ import annotations

import json

from omegaconf import OmegaConf

from common.sweep_report import SweepReport, best_of_sweep, jobs_table, read_jobs


def write_job(sweep, num: int, overrides: list[str], value: float | None, status: str = "COMPLETED"):
    folder = sweep / str(num)
    folder.mkdir(parents=True)
    record = {
        "num": num,
        "id": f"{num}",
        "overrides": overrides,
        "experiment": f"/r/trial{num}",
        "metric": "val/f1_mean",
        "value": value,
        "status": status,
        "log": None,
    }
    (folder / "job.json").write_text(json.dumps(record))


def test_the_table_names_what_differs_per_job_and_what_all_share(tmp_path):
    write_job(tmp_path, 1, ["lr=2", "task=post-c"], None, "FAILED")
    write_job(tmp_path, 0, ["lr=1", "task=post-c"], 0.41234)
    table = jobs_table(read_jobs(tmp_path), tmp_path)
    lines = table.splitlines()
    assert lines[0] == f"### multirun: 2 jobs ({tmp_path})" and "every job: task=post-c" in table
    assert "| 0 | lr=1 | 0.4123 | COMPLETED | /r/trial0/results.md |" in lines
    assert "| 1 | lr=2 | - | FAILED | /r/trial1/results.md |" in lines


def test_optuna_best_is_read_from_its_file_and_the_file_is_named(tmp_path):
    assert best_of_sweep(tmp_path) is None  # a grid: no verdict
    path = tmp_path / "optimization_results.yaml"
    OmegaConf.save(OmegaConf.create({"name": "optuna", "best_params": {"a.b": 0.1, "c": 16}, "best_value": 0.5}), path)
    assert best_of_sweep(tmp_path) == f"best value: 0.5\nbest parameters: a.b=0.1 c=16\nwritten: {path}\n"


def test_multirun_end_prints_the_report_and_removes_the_empty_placeholder_folder(tmp_path, capsys):
    (tmp_path / ".submitit" / "%j").mkdir(parents=True)
    (tmp_path / ".submitit" / "123").mkdir()
    write_job(tmp_path, 0, ["lr=1"], 0.5)
    SweepReport().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}}))
    assert not (tmp_path / ".submitit" / "%j").exists() and (tmp_path / ".submitit" / "123").is_dir()
    assert "| 0 | lr=1 | 0.5000 | COMPLETED |" in capsys.readouterr().out

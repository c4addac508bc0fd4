"""What a multirun (``train.py -m ...``: a grid, an Optuna sweep, local or submitit jobs) found, said at its end.

A Hydra callback (``hydra.callbacks.sweep_report`` in ``conf/train.yaml``):
- each job, in its own process (the launcher's, a submitit process, a SLURM node), writes ``job.json`` into its
  job folder (``<sweep dir>/<job number>/``): its overrides, its experiment folder, the optimised metric's value,
  its status, and for submitit jobs where its log is;
- at the end of the multirun, in the process that launched it, one table on stdout with a row per job (overrides,
  metric, the experiment's ``results.md``), so the tables of jobs that ran elsewhere (submitit: their stdout is a
  log file) are one path away; for an Optuna sweep the best parameters and value and the file Optuna's sweeper
  wrote (``optimization_results.yaml``). Notices (job logs, removed folders) go to stderr.

It also removes the empty ``.submitit/%j`` folder that submitit creates from the launcher's folder pattern before
any job has an id. docs/training.md#sweeps-optuna-and-launchers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

JOB_FILE = "job.json"
OPTUNA_RESULTS = "optimization_results.yaml"
SUBMITIT_PATTERN_FOLDER = "%j"  # submitit's job-id placeholder, left as a literal folder name


class SweepReport(Callback):
    def on_job_end(self, config: DictConfig, job_return: Any = None, **kwargs: Any) -> None:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hydra_cfg = HydraConfig.get()
        if hydra_cfg.mode != RunMode.MULTIRUN:
            return
        from hydra.core.utils import JobStatus

        metric = config.get("optimized_metric")
        completed = getattr(job_return, "status", None) == JobStatus.COMPLETED
        value = job_return.return_value if completed else None  # a failed job's return_value re-raises its error
        record = {
            "num": int(hydra_cfg.job.num),
            "id": str(hydra_cfg.job.id),
            "overrides": list(hydra_cfg.overrides.task),
            "experiment": str(Path(config.paths.results_dir) / config.name),
            "metric": metric,
            "value": value if isinstance(value, (int, float)) else None,
            "status": getattr(getattr(job_return, "status", None), "name", "UNKNOWN"),
            "log": submitit_log(Path(hydra_cfg.sweep.dir), str(hydra_cfg.job.id)),
        }
        folder = Path(hydra_cfg.runtime.output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / JOB_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        remove_submitit_pattern_folder(sweep_dir)
        jobs = read_jobs(sweep_dir)
        if not jobs:
            return
        print(jobs_table(jobs, sweep_dir))
        for job in jobs:
            if job.get("log"):
                print(f"job {job['num']}: its output (table and progress) is in {job['log']}", file=sys.stderr)
        best = best_of_sweep(sweep_dir)
        if best:
            print(best)


def submitit_log(sweep_dir: Path, job_id: str) -> str | None:
    """The stdout file submitit gave job ``job_id`` (``.submitit/<id>/<id>_0_log.out``), if it ran under submitit."""
    path = sweep_dir / ".submitit" / job_id / f"{job_id}_0_log.out"
    return str(path) if path.is_file() else None


def remove_submitit_pattern_folder(sweep_dir: Path) -> None:
    stray = sweep_dir / ".submitit" / SUBMITIT_PATTERN_FOLDER
    if stray.is_dir() and not any(stray.iterdir()):
        stray.rmdir()


def read_jobs(sweep_dir: Path) -> list[dict]:
    jobs = []
    for path in sweep_dir.glob(f"*/{JOB_FILE}"):
        try:
            jobs.append(json.loads(path.read_text(encoding="utf-8")))
        except ValueError:
            print(f"note: {path} is not readable JSON; its job is left out of the table", file=sys.stderr)
    return sorted(jobs, key=lambda job: job.get("num", 0))


def jobs_table(jobs: list[dict], sweep_dir: Path) -> str:
    """Markdown: one row per job with the overrides that tell it from the others (those all jobs share are said
    once, under the title)."""
    metric = next((job["metric"] for job in jobs if job.get("metric")), "value")
    shared = set.intersection(*(set(job.get("overrides") or []) for job in jobs)) if len(jobs) > 1 else set()
    common = [o for o in jobs[0].get("overrides") or [] if o in shared]
    lines = [
        f"### multirun: {len(jobs)} job{'s' * (len(jobs) != 1)} ({sweep_dir})",
        "",
        *([f"every job: {' '.join(common)}", ""] if common else []),
        f"| job | overrides | {metric} | status | results |",
        "|---|---|---|---|---|",
    ]
    for job in jobs:
        value = f"{job['value']:.4f}" if isinstance(job.get("value"), (int, float)) else "-"
        overrides = " ".join(o for o in job.get("overrides") or [] if o not in shared) or "(none)"
        results = Path(job["experiment"]) / "results.md"
        lines.append(f"| {job['num']} | {overrides} | {value} | {job.get('status', '?')} | {results} |")
    return "\n".join(lines) + "\n"


def best_of_sweep(sweep_dir: Path) -> str | None:
    """Optuna's verdict, from the file its sweeper wrote at the end (``None`` for other sweepers)."""
    path = sweep_dir / OPTUNA_RESULTS
    if not path.is_file():
        return None
    result = OmegaConf.to_container(OmegaConf.load(path))
    if "best_params" not in result:  # several objectives: a Pareto front
        solutions = result.get("solutions") or []
        return f"{len(solutions)} Pareto-optimal trials; written: {path}\n"
    params = " ".join(f"{key}={value}" for key, value in result["best_params"].items())
    return f"best value: {result['best_value']}\nbest parameters: {params}\nwritten: {path}\n"

"""The end of a run: its folds' scores as tables (printed, ``results.md``), ``results.json``, and the metrics
``train.py`` returns (what sweeps optimise) and logs as the experiment's own W&B run.

One table per scored entry (mean ± std over folds of P/R/F1 per view, strict / soft / exact, and the probability
scores). ``results.json`` keeps the shape its readers know: ``{"folds", "summary", "probability_summary"}`` for a run
of one entry, ``{"folds", "target", "entries": {<entry>: {"summary", "probability_summary"}}}`` for several. The
metrics are the target's under the single-task names (``strict/avg/f1`` ...) and, with several entries, every
entry's as ``<entry>/<metric>``; ``val/f1_mean`` / ``val/f1_std`` are the selected epochs' dev scores. Unless
``outputs.reliability_plot=none``, each scored entry's reliability diagram over all its folds is drawn into the
experiment's folder (``faina.training.reliability_outputs``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig

from common.experiments import fold_folder
from common.io import atomic_write_json, atomic_write_text
from common.spread import mean_std
from common.wandb_runs import log_experiment_run
from faina.data.task_entries import TaskEntry, target_entry
from faina.training.fold_ending import entry_dir
from faina.training.reliability_outputs import experiment_plot_name, write_experiment_reliability
from faina.training.results_table import (
    flat_metrics,
    markdown_table,
    probability_table,
    summarise,
    summarise_probabilities,
)
from faina.training.run_settings import OutputSettings, experiment_run

log = logging.getLogger(__name__)


def entry_results(results: list[dict], entries: list[TaskEntry], entry: TaskEntry) -> list[dict]:
    """Each fold's results of ``entry`` (a run of one entry keeps them at the fold's top level)."""
    if len(entries) == 1:
        return results
    return [r["entries"][entry.name] for r in results if entry.name in r.get("entries", {})]


def run_phases(results: list[dict], data_seconds: float | None) -> dict:
    """The run's cost: the seconds of each phase summed over the folds that trained in this run (a fold finished
    earlier keeps its own), the data and features' seconds, and the bytes the folds wrote."""
    folds = [r["phases"] for r in results if isinstance(r.get("phases"), dict)]
    if not folds and data_seconds is None:
        return {}
    seconds: dict[str, float] = {}
    if data_seconds is not None:
        seconds["data_and_features"] = round(data_seconds, 3)
    for phases in folds:
        for name, value in phases.get("seconds", {}).items():
            seconds[name] = round(seconds.get(name, 0.0) + value, 3)
    written = [p.get("bytes_written") for p in folds]
    return {"seconds": seconds, "bytes_written": None if None in written else sum(written)}


def write_experiment_plots(exp_dir: Path, entries: list[TaskEntry], results: list[dict], names: list[str]) -> None:
    """The reliability diagram of each scored entry in ``names`` over its folds' test items (module docstring)."""
    single = len(entries) == 1
    for entry in entries:
        if entry.name not in names:
            continue
        folders = [entry_dir(fold_folder(exp_dir, r["fold"]), entries, entry) for r in results if "fold" in r]
        path = write_experiment_reliability(folders, exp_dir / experiment_plot_name(None if single else entry.name))
        if path is not None:
            log.info("reliability diagram of the folds: %s", path)


def table_title(cfg: DictConfig, entries: list[TaskEntry], entry: TaskEntry) -> str:
    if len(entries) == 1:
        return f"{cfg.task.name} · {cfg.encoder.name} · {cfg.data.name}"
    role = "target" if entry.target else "auxiliary"
    return f"{entry.name} ({entry.task['name']}, {role}) · {cfg.encoder.name} · {cfg.data.name}"


def report(
    cfg: DictConfig,
    exp_dir: Path,
    entries: list[TaskEntry],
    results: list[dict],
    data_seconds: float | None = None,
    outputs: OutputSettings | None = None,
) -> dict[str, float]:
    """Print and save the tables over folds; return (and log as the experiment's W&B run) the over-fold metrics.
    ``data_seconds``: the run's reading and tokenising (before any fold), recorded beside the folds' phases;
    ``outputs``: whether to draw the experiment's reliability diagrams (default: drawn)."""
    single = len(entries) == 1
    dev = [r["best_dev_f1"] for r in results if r.get("best_dev_f1") is not None]
    metrics: dict[str, float] = {
        "val/f1_mean": float(sum(dev) / len(dev)) if dev else 0.0,
        "val/f1_std": mean_std(dev)["std"] if dev else 0.0,
    }
    tables, blocks = [], {}
    for entry in entries:
        folds = entry_results(results, entries, entry)
        scored = [r["test"] for r in folds if "test" in r]
        if not scored:
            continue
        summary = summarise(scored)
        blocks[entry.name] = {"summary": summary}
        tables.append(markdown_table(summary, table_title(cfg, entries, entry), len(scored)))
        probabilities = summarise_probabilities(folds)
        if probabilities is not None:
            blocks[entry.name]["probability_summary"] = probabilities
            tables.append(probability_table(probabilities))
        flat = flat_metrics(summary)
        if not single:
            metrics.update({f"{entry.name}/{key}": value for key, value in flat.items()})
        if entry.target:
            metrics.update(flat)
    if cfg.cv.name == "official" and single:  # what the run did with the test file (data.test_path)
        print(
            "the test file carries labels: scored like a fold's test split"
            if tables
            else "the test file is unlabelled: predicted only (submission written)"
        )
    saved: dict = {"folds": results}
    if single:
        saved.update(blocks.get(entries[0].name, {}))
    else:
        saved.update(target=target_entry(entries).name, entries=blocks)
    phases = run_phases(results, data_seconds)
    if phases:
        saved["phases"] = phases

    atomic_write_json(exp_dir / "results.json", saved)
    if tables:
        text = "\n".join(tables)
        atomic_write_text(exp_dir / "results.md", text)
        print(text)
    elif single:
        for r in results:
            log.info("submission written: %s", r.get("prediction_file"))
    else:
        print("no entry has labelled test posts: predicted only (submission files written)")
    if (outputs or OutputSettings()).experiment_plot:
        write_experiment_plots(exp_dir, entries, results, list(blocks))
    loggers, config = experiment_run(cfg, exp_dir)
    costs = {f"phases/{name}": value for name, value in (phases or {}).get("seconds", {}).items()}
    log_experiment_run(loggers, config, {**metrics, **costs}, len(results))  # the cost beside the scores
    return metrics  # what sweeps optimise: scores only (a rerun of finished folds returns the same)

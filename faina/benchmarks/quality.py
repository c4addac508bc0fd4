"""The quality benchmark: recipes, decision rules and ensembles side by side on a real corpus, over several seeds.

An option that beats the paper's recipe on the synthetic sample may lose on real data; this measures every option
the docs may recommend on a Faina-format corpus (by default the toxic-spans development corpus) before they
recommend it (docs/benchmark-quality.md has the measurements). ``run_benchmark`` trains the grid (tasks × recipes ×
lengths × seeds, ``quality_runs``), scores each model under every decision rule and each ensemble of the first K seed models
(``quality_scores``), and its probabilities under every calibration (``calibration_scores``), and writes the reports
(``quality_report``, ``calibration_report``); ``scripts/benchmark_quality.py`` is its command.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from faina.benchmarks.calibration_report import calibration_markdown, calibration_rows, saved_rows
from faina.benchmarks.calibration_scores import evaluate_calibration
from faina.benchmarks.quality_report import machine_line, markdown, plot, summarise
from faina.benchmarks.quality_runs import (
    QUICK_EPOCHS,
    Length,
    check_grid,
    default_length,
    epochs_trained,
    lengths_of,
    overrides_tag,
    prepare_corpus,
    run_name,
    train,
)
from faina.benchmarks.quality_scores import evaluate_ensemble, evaluate_run


def log_to_stderr(message: str) -> None:
    print(f"[benchmark] {message}", file=sys.stderr, flush=True)


def _counted(log: Callable[[str], None], position: str, message: str) -> None:
    """``message`` with how far the grid is (``run 3 of 12``): a run trains for minutes, the grid for hours."""
    log(f"{message} ({position})")


def run_benchmark(
    corpus: Path,
    out: Path,
    tasks: Sequence[str],
    recipes: Sequence[str],
    seeds: Sequence[int],
    epochs: Sequence[int] | None = None,
    ensembles: Sequence[int] = (),
    overrides: Sequence[str] = (),
    report_only: bool = False,
    quick: bool = False,
    log: Callable[[str], None] = log_to_stderr,
    patiences: Sequence[int] = (0,),
) -> dict:
    """Train what is missing (nothing with ``report_only``), score it, and write ``report.json``, ``report.md`` and
    ``report.png`` under ``out``; returns the report. ``epochs``: the epoch counts trained (``None``: each task's
    own), each with every early-stopping patience of ``patiences`` (0: none). ``quick``: the tests' tiny corpus
    (``QUICK_POSTS``)."""
    check_grid(tasks, recipes)
    out = out.resolve()
    files = prepare_corpus(corpus.resolve(), out, quick)
    runs_dir = out / "runs"
    runs, scored_ensembles, calibrations = [], [], []
    lengths = {task: lengths_of(task, epochs, patiences) for task in tasks}
    total, position = sum(len(lengths[task]) for task in tasks) * len(recipes) * len(seeds), 0
    for task in tasks:
        for recipe in recipes:
            for length in lengths[task]:
                finished = []
                for seed in seeds:
                    position += 1
                    folder = runs_dir / run_name(task, recipe, length, seed, overrides)
                    if report_only and not (folder / "results.json").is_file():
                        continue
                    counted = functools.partial(_counted, log, f"run {position} of {total}")
                    folder = train(task, recipe, length, seed, files, runs_dir, overrides, counted)
                    scores = evaluate_run(task, recipe, seed, folder, files, log)
                    runs.append({**scores, "length": length, "epochs_trained": epochs_trained(folder, length)})
                    calibration = evaluate_calibration(task, recipe, seed, folder, files, log)
                    calibrations.append({**calibration, "length": length.label})
                    finished.append(seed)
                for size in ensembles:
                    if 1 < size <= len(finished):
                        result = evaluate_ensemble(
                            task, recipe, length, finished[:size], runs_dir, files, log, overrides
                        )
                        scored_ensembles.append({**result, "length": length})
    # the length each row is also compared at: what train.py task=<task> trains (quick: the tiny grid's one epoch)
    defaults = {task: Length(QUICK_EPOCHS) if quick else default_length(task) for task in tasks}
    rows = summarise(runs, scored_ensembles, defaults)
    machine = machine_line()
    report = {
        "corpus": str(corpus),
        "lengths": {task: [length.label for length in lengths[task]] for task in tasks},
        "default lengths": {task: length.label for task, length in defaults.items()},
        "seeds": list(seeds),
        "overrides": list(overrides),
        "machine": machine,
        "quick": quick,
        "rows": rows,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2))
    (out / "report.md").write_text(markdown(rows, machine, overrides, defaults))
    if rows:
        plot(rows, out / "report.png")
    if calibrations:
        name = calibration_report_name(tasks, [length for task in tasks for length in lengths[task]], overrides)
        write_calibration_report(calibrations, out, name, machine)
    return report


def calibration_report_name(tasks: Sequence[str], lengths: Sequence[Length], overrides: Sequence[str] = ()) -> str:
    """``calibration-report-post-f-e10``: one file per grid, so grids of other lengths sharing ``--out`` keep theirs."""
    tags = "-".join(dict.fromkeys(length.tag for length in lengths))
    return f"calibration-report-{'-'.join(tasks)}-{tags}{overrides_tag(overrides)}"


def write_calibration_report(calibrations: list[dict], out: Path, name: str, machine: str) -> Path:
    """``<name>.json`` and ``<name>.md`` under ``out`` (``faina.benchmarks.calibration_report``)."""
    rows = calibration_rows(calibrations)
    (out / f"{name}.json").write_text(json.dumps({"machine": machine, "rows": saved_rows(rows)}, indent=2))
    path = out / f"{name}.md"
    path.write_text(calibration_markdown(rows, machine))
    return path

"""The quality benchmark: recipes, decision rules and ensembles side by side on a real corpus, over several seeds.

An option that beats the paper's recipe on the synthetic sample may lose on real data; this measures every option
the docs may recommend on a Faina-format corpus (by default the toxic-spans development corpus) before they
recommend it (docs/benchmark-quality.md has the measurements). ``run_benchmark`` trains the grid (tasks × recipes ×
lengths × seeds, ``quality_runs``), scores each model under every decision rule and each ensemble of the first K seed models
(``quality_scores``), and writes the report (``quality_report``); ``scripts/benchmark_quality.py`` is its command.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from faina.benchmarks.quality_report import machine_line, markdown, plot, summarise
from faina.benchmarks.quality_runs import (
    QUICK_EPOCHS,
    Length,
    default_length,
    epochs_trained,
    lengths_of,
    prepare_corpus,
    run_name,
    train,
)
from faina.benchmarks.quality_scores import evaluate_ensemble, evaluate_run


def log_to_stderr(message: str) -> None:
    print(f"[benchmark] {message}", file=sys.stderr, flush=True)


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
    out = out.resolve()
    files = prepare_corpus(corpus.resolve(), out, quick)
    runs_dir = out / "runs"
    runs, scored_ensembles = [], []
    lengths = {task: lengths_of(task, epochs, patiences) for task in tasks}
    for task in tasks:
        for recipe in recipes:
            for length in lengths[task]:
                finished = []
                for seed in seeds:
                    folder = runs_dir / run_name(task, recipe, length, seed, overrides)
                    if report_only and not (folder / "results.json").is_file():
                        continue
                    folder = train(task, recipe, length, seed, files, runs_dir, overrides, log)
                    scores = evaluate_run(task, recipe, seed, folder, files, log)
                    runs.append({**scores, "length": length, "epochs_trained": epochs_trained(folder, length)})
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
    return report

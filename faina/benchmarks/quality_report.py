"""The quality benchmark's report: one row per (task, recipe, rule) over seeds, gains judged against the spread.

A row's figures are mean ± std over seeds; a difference to the task's default (``views`` with the fixed rule) is
a ``gain`` or ``loss`` only when it exceeds the larger of the two rows' seed std. A decision rule also gets its
paired difference to the fixed rule of the same trained models, a trained recipe its paired difference to the
default recipe's model of the same seed (same dev split and initialisation). Written as ``report.json``,
``report.md`` and ``report.png`` (docs/benchmark-quality.md).
"""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Sequence
from pathlib import Path

from faina.benchmarks.quality_runs import TASKS
from faina.benchmarks.quality_scores import BASELINE


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


FIGURES = (
    ("strict F1", ("strict", "f1")),
    ("strict P", ("strict", "precision")),
    ("strict R", ("strict", "recall")),
    ("soft F1", ("soft", "f1")),
    ("exact F1", ("exact", "f1")),
)


def summarise(runs: list[dict], ensembles: list[dict]) -> list[dict]:
    """One row per (task, recipe, rule) over seeds, and one per ensemble and rule."""
    rows = []
    groups: dict[tuple, list[dict]] = {}
    # the default recipe's fixed rule per (task, seed): the same seed draws the same dev split and initialisation
    default_of = {
        (run["task"], run["seed"]): run["scores"][BASELINE[TASKS[run["task"]][0]]]["strict"]["f1"]
        for run in runs
        if run["recipe"] == "views" and BASELINE[TASKS[run["task"]][0]] in run["scores"]
    }
    for run in runs:
        fixed = BASELINE[TASKS[run["task"]][0]]
        base = run["scores"].get(fixed)
        for rule, entry in run["scores"].items():
            if rule != fixed:  # a decision rule against the fixed rule of the same trained model
                paired = entry["strict"]["f1"] - base["strict"]["f1"] if base is not None else None
            elif run["recipe"] != "views" and (run["task"], run["seed"]) in default_of:  # a recipe, same seed
                paired = entry["strict"]["f1"] - default_of[run["task"], run["seed"]]
            else:
                paired = None
            groups.setdefault((run["task"], run["recipe"], rule), []).append(
                {**entry, "_time": run["train_seconds"], "_paired": paired}
            )
    for (task, recipe, rule), entries in groups.items():
        row = {"task": task, "recipe": recipe, "rule": rule, "seeds": len(entries)}
        for label, (mode, key) in FIGURES:
            values = [e[mode][key] for e in entries if mode in e]
            if values:
                row[label] = _mean_std(values)
        soft = [e["soft_labels"]["model"] for e in entries if "soft_labels" in e]
        if soft:
            row["cross-entropy"] = _mean_std([s["cross_entropy"] for s in soft])
            row["manhattan"] = _mean_std([s["manhattan"] for s in soft])
        times = [e["_time"] for e in entries if e["_time"] is not None]
        if times:
            row["train minutes"] = _mean_std([t / 60 for t in times])
        paired = [e["_paired"] for e in entries if e["_paired"] is not None]
        if paired:
            # a rule against the fixed rule of the *same* trained model, a recipe against the default recipe's
            # model of the same seed: the seeds' own noise (split, initialisation) cancels
            row["paired Δ"] = _mean_std(paired)
            row["wins"] = f"{sum(d > 0 for d in paired)}/{len(paired)}"
        confirmed = [e["rule"].get("confirmed") for e in entries if "confirmed" in e.get("rule", {})]
        if confirmed:
            row["confirmed"] = f"{sum(confirmed)}/{len(confirmed)}"
        rows.append(row)
    for result in ensembles:
        for rule, entry in result["scores"].items():
            row = {"task": result["task"], "recipe": f"{result['recipe']} ensemble{len(result['members'])}"}
            row.update({"rule": rule, "seeds": 1})
            for label, (mode, key) in FIGURES:
                if mode in entry:
                    row[label] = (entry[mode][key], 0.0)
            if "soft_labels" in entry:
                row["cross-entropy"] = (entry["soft_labels"]["model"]["cross_entropy"], 0.0)
                row["manhattan"] = (entry["soft_labels"]["model"]["manhattan"], 0.0)
            rows.append(row)
    return mark_gains(rows)


def mark_gains(rows: list[dict]) -> list[dict]:
    """``verdict`` of each row against its task's default (``views`` with the fixed rule) on strict F1: ``gain`` /
    ``loss`` only when the difference exceeds the larger seed std of the two, else ``within spread``."""
    base = {r["task"]: r for r in rows if r["recipe"] == "views" and r["rule"] in BASELINE.values()}
    for row in rows:
        reference = base.get(row["task"])
        if reference is None or row is reference or "strict F1" not in row:
            continue
        (mean, std), (base_mean, base_std) = row["strict F1"], reference["strict F1"]
        spread = max(std, base_std)
        difference = mean - base_mean
        row["vs default"] = difference
        row["verdict"] = "gain" if difference > spread else "loss" if difference < -spread else "within spread"
    return rows


def _cell(value) -> str:
    if isinstance(value, tuple):
        mean, std = value
        return f"{mean * 100:.1f} ± {std * 100:.1f}"
    if isinstance(value, float):
        return f"{value * 100:+.1f}"
    return str(value)


def markdown(rows: list[dict], machine: str, overrides: Sequence[str] = ()) -> str:
    columns = ["task", "recipe", "rule", "seeds", *[label for label, _ in FIGURES], "cross-entropy", "manhattan"]
    columns += ["train minutes", "confirmed", "paired Δ", "wins", "vs default", "verdict"]
    present = [c for c in columns if any(c in row for row in rows)]
    lines = [
        f"Test figures in % (mean ± std over seeds; ensembles: one value). {machine}",
        *([f"Every run with: `{' '.join(overrides)}`."] if overrides else []),
        "",
        "| " + " | ".join(present) + " |",
        "|" + "---|" * len(present),
    ]
    for row in rows:
        cells = []
        for column in present:
            value = row.get(column, "")
            if column == "train minutes" and isinstance(value, tuple):
                cells.append(f"{value[0]:.1f} ± {value[1]:.1f}")
            elif column == "paired Δ" and isinstance(value, tuple):
                cells.append(f"{value[0] * 100:+.1f} ± {value[1] * 100:.1f}")
            elif column in ("cross-entropy", "manhattan") and isinstance(value, tuple):
                cells.append(f"{value[0]:.4f} ± {value[1]:.4f}")
            else:
                cells.append(_cell(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({row["task"] for row in rows})
    figure, axes = plt.subplots(len(tasks), 1, figsize=(10, 3.2 * len(tasks)), squeeze=False)
    for axis, task in zip(axes[:, 0], tasks):
        chosen = [row for row in rows if row["task"] == task and "strict F1" in row]
        names = [f"{row['recipe']} / {row['rule']}" for row in chosen]
        means = [row["strict F1"][0] * 100 for row in chosen]
        stds = [row["strict F1"][1] * 100 for row in chosen]
        axis.barh(range(len(chosen)), means, xerr=stds, color="#4c72b0")
        axis.set_yticks(range(len(chosen)), names, fontsize=7)
        axis.invert_yaxis()
        axis.set_xlabel("strict F1 on test (%), mean ± std over seeds")
        axis.set_title(task)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def machine_line() -> str:
    import torch

    return (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), python {platform.python_version()}."
    )

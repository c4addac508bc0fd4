"""The quality benchmark's report: one row per (task, recipe, training length, rule) over seeds, gains judged
against the spread.

A row's figures are mean ± std over seeds; a difference to the task's default recipe (``views`` with the fixed
rule) is a ``gain`` or ``loss`` only when it exceeds the larger of the two rows' seed std (``seed_spread``; no
verdict while both rows have one seed). Every row is judged
like with like, against the default recipe trained at the row's own length (``verdict``), and a row at another
length than the task's default also against the default recipe at the default length (``verdict at default
length``): a recipe that changes the length is judged against what it would replace. A decision rule also gets its
paired difference to the fixed rule of the same trained models, a trained recipe its paired difference to the
default recipe's model of the same seed and length (same dev split and initialisation), and a row at another length
its paired difference to the default-length model of the same seed. Written as ``report.json``, ``report.md`` and
``report.png`` (docs/benchmark-quality.md).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

from faina.benchmarks.quality_runs import TASKS, Length
from faina.benchmarks.quality_scores import BASELINE
from faina.benchmarks.seed_spread import mean_std, spread_verdict

FIGURES = (
    ("strict F1", ("strict", "f1")),
    ("strict P", ("strict", "precision")),
    ("strict R", ("strict", "recall")),
    ("soft F1", ("soft", "f1")),
    ("exact F1", ("exact", "f1")),
)


def _fixed_rule(task: str) -> str:
    return BASELINE[TASKS[task][0]]


def _strict(run: dict, rule: str) -> float | None:
    entry = run["scores"].get(rule)
    return entry["strict"]["f1"] if entry is not None else None


def summarise(runs: list[dict], ensembles: list[dict], defaults: Mapping[str, Length]) -> list[dict]:
    """One row per (task, recipe, length, rule) over seeds, and one per ensemble, length and rule. ``defaults``:
    each task's default length (what ``train.py task=...`` trains), the one every other length is also compared
    with."""
    rows = []
    groups: dict[tuple, list[dict]] = {}
    # the default recipe's fixed rule per (task, length, seed): the same seed draws the same dev split and
    # initialisation, at every length
    default_of = {
        (run["task"], run["length"], run["seed"]): _strict(run, _fixed_rule(run["task"]))
        for run in runs
        if run["recipe"] == "views" and _strict(run, _fixed_rule(run["task"])) is not None
    }
    for run in runs:
        task, length, seed = run["task"], run["length"], run["seed"]
        fixed = _fixed_rule(task)
        base = _strict(run, fixed)
        for rule, entry in run["scores"].items():
            if rule != fixed:  # a decision rule against the fixed rule of the same trained model
                paired = entry["strict"]["f1"] - base if base is not None else None
            elif run["recipe"] != "views" and (task, length, seed) in default_of:  # a recipe, same seed and length
                paired = entry["strict"]["f1"] - default_of[task, length, seed]
            else:
                paired = None
            at_default = default_of.get((task, defaults.get(task), seed))
            paired_default = (
                entry["strict"]["f1"] - at_default if length != defaults.get(task) and at_default is not None else None
            )
            groups.setdefault((task, run["recipe"], length, rule), []).append(
                {
                    **entry,
                    "_time": run["train_seconds"],
                    "_epochs": run.get("epochs_trained"),
                    "_paired": paired,
                    "_paired_default": paired_default,
                }
            )
    for (task, recipe, length, rule), entries in groups.items():
        row = {"task": task, "recipe": recipe, "length": length.label, "rule": rule, "seeds": len(entries)}
        for label, (mode, key) in FIGURES:
            values = [e[mode][key] for e in entries if mode in e]
            if values:
                row[label] = mean_std(values)
        soft = [e["soft_labels"]["model"] for e in entries if "soft_labels" in e]
        if soft:
            row["cross-entropy"] = mean_std([s["cross_entropy"] for s in soft])
            row["manhattan"] = mean_std([s["manhattan"] for s in soft])
        times = [e["_time"] for e in entries if e["_time"] is not None]
        if times:
            row["train minutes"] = mean_std([t / 60 for t in times])
        epochs = [e["_epochs"] for e in entries if e["_epochs"] is not None]
        if epochs and length.patience:
            row["epochs trained"] = mean_std([float(n) for n in epochs])
        paired = [e["_paired"] for e in entries if e["_paired"] is not None]
        if paired:
            # a rule against the fixed rule of the *same* trained model, a recipe against the default recipe's
            # model of the same seed: the seeds' own noise (split, initialisation) cancels
            row["paired Δ"] = mean_std(paired)
            row["wins"] = f"{sum(d > 0 for d in paired)}/{len(paired)}"
        paired_default = [e["_paired_default"] for e in entries if e["_paired_default"] is not None]
        if paired_default:
            row["paired Δ at default length"] = mean_std(paired_default)
            row["wins at default length"] = f"{sum(d > 0 for d in paired_default)}/{len(paired_default)}"
        confirmed = [e["rule"].get("confirmed") for e in entries if "confirmed" in e.get("rule", {})]
        if confirmed:
            row["confirmed"] = f"{sum(confirmed)}/{len(confirmed)}"
        rows.append({**row, "_length": length})
    for result in ensembles:
        for rule, entry in result["scores"].items():
            row = {"task": result["task"], "recipe": f"{result['recipe']} ensemble{len(result['members'])}"}
            row.update({"length": result["length"].label, "rule": rule, "seeds": 1})
            for label, (mode, key) in FIGURES:
                if mode in entry:
                    row[label] = (entry[mode][key], 0.0)
            if "soft_labels" in entry:
                row["cross-entropy"] = (entry["soft_labels"]["model"]["cross_entropy"], 0.0)
                row["manhattan"] = (entry["soft_labels"]["model"]["manhattan"], 0.0)
            rows.append({**row, "_length": result["length"]})
    rows = mark_gains(rows, defaults)
    for row in rows:
        row.pop("_length")
    return rows


def _judge(row: dict, reference: dict) -> tuple[float, str]:
    """The difference of ``row``'s strict F1 to ``reference``'s, and whether it is beyond the larger seed std."""
    seeds = max(row["seeds"], reference["seeds"])
    difference = row["strict F1"][0] - reference["strict F1"][0]
    return difference, spread_verdict(row["strict F1"], reference["strict F1"], seeds)


def mark_gains(rows: list[dict], defaults: Mapping[str, Length]) -> list[dict]:
    """Each row's verdict on strict F1 — ``gain`` / ``loss`` only when the difference exceeds the larger seed std of
    the two rows, else ``within spread`` — against the default recipe (``views``, fixed rule) at the row's own
    length (``vs default``, ``verdict``) and, for a row at another length, at the task's default length too
    (``vs default length``, ``verdict at default length``). A row's ``_length`` is its ``Length``."""
    base = {
        (r["task"], r["_length"]): r for r in rows if r["recipe"] == "views" and r["rule"] == _fixed_rule(r["task"])
    }
    for row in rows:
        if "strict F1" not in row:
            continue
        same = base.get((row["task"], row["_length"]))
        if same is not None and same is not row:
            row["vs default"], row["verdict"] = _judge(row, same)
        if row["_length"] != defaults.get(row["task"]):
            replaced = base.get((row["task"], defaults.get(row["task"])))
            if replaced is not None:
                row["vs default length"], row["verdict at default length"] = _judge(row, replaced)
    return rows


def _cell(value) -> str:
    if isinstance(value, tuple):
        mean, std = value
        return f"{mean * 100:.1f} ± {std * 100:.1f}"
    if isinstance(value, float):
        return f"{value * 100:+.1f}"
    return str(value)


PAIRED = ("paired Δ", "paired Δ at default length")
PLAIN = ("train minutes", "epochs trained")


def markdown(
    rows: list[dict], machine: str, overrides: Sequence[str] = (), defaults: Mapping[str, Length] | None = None
) -> str:
    columns = ["task", "recipe", "length", "rule", "seeds", *[label for label, _ in FIGURES]]
    columns += ["cross-entropy", "manhattan", "train minutes", "epochs trained", "confirmed", "paired Δ", "wins"]
    columns += ["vs default", "verdict", "paired Δ at default length", "wins at default length"]
    columns += ["vs default length", "verdict at default length"]
    present = [c for c in columns if any(c in row for row in rows)]
    lengths = ", ".join(f"{task} {length.label}" for task, length in sorted((defaults or {}).items()))
    lines = [
        f"Test figures in % (mean ± std over seeds; ensembles: one value). {machine}",
        "`verdict`: against the default recipe (`views`, fixed rule) trained at the row's own length;"
        + (f" `verdict at default length`: against it at the task's default length ({lengths})." if lengths else ""),
        *([f"Every run with: `{' '.join(overrides)}`."] if overrides else []),
        "",
        "| " + " | ".join(present) + " |",
        "|" + "---|" * len(present),
    ]
    for row in rows:
        cells = []
        for column in present:
            value = row.get(column, "")
            if column in PLAIN and isinstance(value, tuple):
                cells.append(f"{value[0]:.1f} ± {value[1]:.1f}")
            elif column in PAIRED and isinstance(value, tuple):
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
        names = [f"{row['recipe']} / {row['length']} / {row['rule']}" for row in chosen]
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

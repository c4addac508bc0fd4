"""Experiments side by side: the tables and figures of ``notebooks/compare_folds.ipynb``.

Reads every ``results.json`` under a results folder (what ``train.py`` writes per experiment) into two frames, one
row per (experiment, fold, view) and per (experiment, fold, view, label), and draws them so that 1 to 20
experiments stay readable: one row per experiment (its folds as points, one colour per annotator view) and a
heatmap of per-label F1 with one column per experiment. Figures grow with what they show, labels never share a
line, and legends sit outside the plotting area, below the title (``tests/faina/test_fold_comparison.py`` renders
them and checks that no two texts overlap). Figures are ``matplotlib.figure.Figure`` objects made without pyplot:
no backend is chosen here, so a notebook shows them inline and a script saves them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

FOLD_COLUMNS = ["experiment", "fold", "view", "precision", "recall", "f1"]
LABEL_COLUMNS = ["experiment", "fold", "view", "label", "f1", "gold"]
ROW_INCHES = 0.38  # one experiment's row (or one label's): room for a line of 9-point text and its gap
VIEW_MARKERS = "osD^v<>p"


def load_experiments(results_dir: Path) -> dict[str, dict]:
    """``{experiment folder relative to results_dir: its results.json}`` for every scored experiment."""
    experiments = {}
    for path in sorted(Path(results_dir).rglob("results.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if any("test" in fold for fold in data.get("folds", [])):
            experiments[str(path.parent.relative_to(results_dir))] = data
    return experiments


def fold_frame(experiments: dict[str, dict], scoring: str = "strict") -> pd.DataFrame:
    rows = [
        {"experiment": name, "fold": fold["fold"], "view": view, **scores}
        for name, data in experiments.items()
        for fold in data["folds"]
        for view, scores in fold.get("test", {}).get(scoring, {}).items()
    ]
    return pd.DataFrame(rows, columns=FOLD_COLUMNS)


def label_frame(experiments: dict[str, dict], scoring: str = "strict") -> pd.DataFrame:
    rows = [
        {
            "experiment": name,
            "fold": fold["fold"],
            "view": view,
            "label": label or "(none)",
            "f1": scores["f1"],
            "gold": scores.get("gold", 0),
        }
        for name, data in experiments.items()
        for fold in data["folds"]
        for view, labels in fold.get("per_label", {}).get(scoring, {}).items()
        for label, scores in labels.items()
    ]
    return pd.DataFrame(rows, columns=LABEL_COLUMNS)


def summary_table(folds: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over folds of the view-averaged precision, recall and F1 (%), one row per experiment."""
    averaged = folds[folds["view"] == "avg"]
    return averaged.groupby("experiment")[["precision", "recall", "f1"]].agg(["mean", "std"]).mul(100).round(1)


def natural_order(names) -> list[str]:
    """``trial2`` before ``trial10``: names sorted with their numbers read as numbers."""
    return sorted(names, key=lambda name: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)])


def _height(rows: int) -> float:
    return 1.6 + ROW_INCHES * max(rows, 2)  # title, axis and legend, then one line per row


def per_fold_figure(folds: pd.DataFrame, scoring: str = "strict") -> Figure:
    """F1 of every fold, one row per experiment: a point per fold and view, the view-averaged mean as a bar."""
    names = natural_order(folds["experiment"].unique())
    views = [v for v in dict.fromkeys(folds["view"]) if v != "avg"] or ["avg"]
    label_width = max((len(name) for name in names), default=10) * 0.075
    fig = Figure(figsize=(6.5 + label_width, _height(len(names))), layout="constrained")
    ax = fig.add_subplot()
    positions = {name: i for i, name in enumerate(names)}
    means = folds[folds["view"] == "avg"].groupby("experiment")["f1"].mean()
    ax.barh(
        [positions[n] for n in means.index], means.values * 100, color="0.85", height=0.7, label="mean of avg", zorder=1
    )
    offsets = {view: (i - (len(views) - 1) / 2) * 0.18 for i, view in enumerate(views)}
    for i, view in enumerate(views):
        part = folds[folds["view"] == view]
        ax.scatter(
            part["f1"] * 100,
            [positions[n] + offsets[view] for n in part["experiment"]],
            marker=VIEW_MARKERS[i % len(VIEW_MARKERS)],
            s=22,
            label=f"view {view} (a point per fold)",
            zorder=2,
        )
    ax.set_yticks(range(len(names)), names, fontsize=9)
    ax.set_ylim(len(names) - 0.5, -0.5)  # the first experiment on top
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"{scoring} F1 (%)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("F1 per fold and annotator view", loc="left")
    fig.legend(loc="outside lower center", ncols=min(3, len(views) + 1), fontsize=8, frameon=False)
    return fig


def per_label_figure(labels: pd.DataFrame, scoring: str = "strict") -> Figure:
    """Mean F1 per fallacy (over folds and views) as a heatmap: a row per label, a column per experiment."""
    table = labels.groupby(["label", "experiment"])["f1"].mean().unstack("experiment").mul(100)
    table = table[natural_order(table.columns)]
    table = table.loc[table.mean(axis=1).sort_values(ascending=False).index]
    names, rows = list(table.columns), list(table.index)
    name_height = max((len(name) for name in names), default=10) * 0.075  # the rotated column labels
    width = 3.5 + max((len(r) for r in rows), default=10) * 0.075 + 0.42 * max(len(names), 2)
    fig = Figure(figsize=(width, _height(len(rows)) + name_height), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(table.values, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    if len(names) <= 8:  # numbers in the cells while they fit
        for i in range(len(rows)):
            for j in range(len(names)):
                value = table.values[i, j]
                if value == value:  # not NaN
                    ax.text(
                        j,
                        i,
                        f"{value:.0f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if value < 60 else "black",
                    )
    ax.set_title("F1 per fallacy (mean over folds and views)", loc="left")
    fig.colorbar(image, ax=ax, label=f"{scoring} F1 (%)", shrink=0.9)
    return fig

"""``reliability.png``: the reliability diagrams drawn from their data (``faina.analysis.reliability``).

One panel per label: each bin's mean predicted share against its mean annotators' share, for the reported
probabilities ("calibrated" when the model is, else "model") and, when present, the uncalibrated ones; the diagonal
is perfect calibration, the dashed line the prior. Each panel's title has the label's ECE of both and its item count.
The same drawing serves a fold's data and an experiment's pooled data (the figure's title says how many folds).
"""

from __future__ import annotations

import math
from pathlib import Path

FILE_NAME = "reliability.png"
TICKS = (0.0, 0.5, 1.0)
COLOURS = {"reported": "#4c72b0", "uncalibrated": "#dd8452"}


def curve_names(data: dict) -> dict[str, str]:
    """The legend's name of each curve the data holds."""
    calibrated = any("uncalibrated" in row for row in data["labels"].values())
    names = {"reported": "calibrated" if calibrated else "model"}
    if calibrated:
        names["uncalibrated"] = "uncalibrated"
    return names


def draw_reliability_plot(data: dict, path: str | Path) -> Path:
    """Draw the diagrams of ``data`` into ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(data["labels"])
    names = curve_names(data)
    columns = min(len(labels), 4)
    rows = math.ceil(len(labels) / columns)
    # shared axes (x tick labels under every panel, y tick labels on the first column), one label per axis for the
    # figure and fixed margins: about half the time of per-panel labels laid out by tight_layout (speed-and-scale.md)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns, 3.2 * rows + 0.4), squeeze=False, sharex=True, sharey=True
    )
    width, height = figure.get_size_inches()
    for c, label in enumerate(labels):
        row = data["labels"][label]
        axis = axes[c // columns][c % columns]
        axis.plot([0, 1], [0, 1], color="#999999", linewidth=0.8)
        if row.get("prior") is not None:
            axis.axhline(row["prior"], color="#999999", linestyle="--", linewidth=0.8)
        titles = []
        for key, name in names.items():
            points = row[key]["points"]
            if points:
                xs, ys, _ = zip(*points)
                axis.plot(xs, ys, marker="o", color=COLOURS[key], label=name, linewidth=1.2, markersize=3)
            ece = row[key]["ece"]
            titles.append(f"{name} {'-' if ece is None else f'{ece:.3f}'}")
        axis.set_title(f"{label}\nECE {'; '.join(titles)} ({row['items']} items)", fontsize=7)
        axis.tick_params(labelsize=6, labelbottom=True, labelleft=c % columns == 0)
        if c == 0:
            axis.legend(fontsize=6, loc="upper left")
    for c in range(len(labels), rows * columns):
        axes[c // columns][c % columns].axis("off")
    folds = data.get("folds", 1)
    if folds > 1:
        figure.suptitle(f"test items of {folds} folds, pooled", fontsize=8, y=1 - 0.1 / height)
    shared = axes[0][0]  # limits and ticks set once hold for every panel
    shared.set_xlim(0, 1)
    shared.set_ylim(0, 1)
    shared.set_xticks(TICKS)
    shared.set_yticks(TICKS)
    figure.supxlabel("predicted share (bin mean)", fontsize=7, y=0.08 / height)
    figure.supylabel("annotators' share (bin mean)", fontsize=7, x=0.08 / width)
    figure.subplots_adjust(  # margins in inches, so any grid keeps room for its labels and titles
        left=0.5 / width, right=1 - 0.15 / width, bottom=0.5 / height, top=1 - 0.75 / height, wspace=0.1, hspace=0.3
    )
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path

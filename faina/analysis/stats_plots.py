"""The figures of ``python -m faina.stats --plots DIR`` (matplotlib, PNG), drawn from its statistics dict.

``overlap-<view>.png``: the overlap matrix as a heatmap (the paper's Figure 3), one per view and one over
all annotations; ``spans-per-label.png``: span counts per label and view (Table 2); ``span-length.png``:
mean span length per label and view with the standard deviation as error bars (span files only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from faina.formats.labels import LabelInventory


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def overlap_heatmap(matrix: dict[str, dict[str, float]], title: str, path: Path, inventory: LabelInventory) -> Path:
    plt = _pyplot()
    labels = list(matrix)
    values = np.array([[matrix[x][y] for y in labels] for x in labels]) if labels else np.zeros((0, 0))
    short = [inventory.short_ids.get(label, label) for label in labels]
    size = max(4.0, 0.45 * len(labels) + 2)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    image = ax.imshow(values, cmap="viridis", vmin=0, vmax=100)
    ax.set_xticks(range(len(labels)), short, rotation=90)
    ax.set_yticks(range(len(labels)), labels)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if values[i, j] >= 0.5:
                ax.text(
                    j,
                    i,
                    f"{values[i, j]:.0f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black" if values[i, j] > 60 else "white",
                )
    ax.set_xlabel("also carries (diagonal: no other label)")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, shrink=0.8, label="% of the row label's units")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _bars(stats: dict, field: str, error: str | None, ylabel: str, title: str, path: Path) -> Path:
    plt = _pyplot()
    views = [v for v in stats["views"] if v != "all"]
    labels = sorted({label for v in views for label in stats["views"][v]["labels"]})
    width = 0.8 / max(1, len(views))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(labels) + 2), 4.5))
    x = np.arange(len(labels))
    for k, view in enumerate(views):
        rows = stats["views"][view]["labels"]
        heights = [rows[label][field] if label in rows and rows[label][field] is not None else 0 for label in labels]
        errors = None
        if error:
            errors = [rows[label][error] if label in rows and rows[label][error] is not None else 0 for label in labels]
        ax.bar(x + k * width - 0.4 + width / 2, heights, width, yerr=errors, label=view, capsize=2)
    ax.set_xticks(x, labels, rotation=60, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(title="view")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(stats: dict, out_dir: str | Path, inventory: LabelInventory) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    unit = "tokens" if stats["kind"] == "span" else "posts"
    written = [
        overlap_heatmap(matrix, f"label overlap ({view}, % of {unit})", out / f"overlap-{view}.png", inventory)
        for view, matrix in stats["overlap"].items()
    ]
    what = "spans" if stats["kind"] == "span" else "posts with the label"
    written.append(_bars(stats, "spans", None, what, f"{what} per label and view", out / "spans-per-label.png"))
    if stats["kind"] == "span":
        written.append(
            _bars(
                stats,
                "length_mean",
                "length_std",
                "tokens (mean ± std)",
                "span length per label",
                out / "span-length.png",
            )
        )
    return written

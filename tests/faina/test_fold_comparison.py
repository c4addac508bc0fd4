"""The compare-folds figures stay readable for 1 to 20 experiments: rendered, and no two texts overlap."""

from __future__ import annotations

import itertools

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from faina.analysis.fold_comparison import fold_frame, label_frame, per_fold_figure, per_label_figure, summary_table
from faina.formats.labels import LabelInventory

VIEWS = ("a1", "a2", "avg")


def experiments(count: int, folds: int = 5) -> dict[str, dict]:
    """``count`` experiments as results.json holds them, with names as long as a sweep's trials."""
    labels = LabelInventory.load().labels_of("fine")
    out = {}
    for e in range(count):
        rows = []
        for k in range(folds):
            f1 = 0.2 + 0.03 * ((e * 7 + k * 3) % 20)
            scores = {view: {"precision": f1, "recall": f1, "f1": f1 + 0.01 * v} for v, view in enumerate(VIEWS)}
            per_label = {
                view: {label: {"f1": (i * 0.05 + e * 0.01) % 1, "gold": 3} for i, label in enumerate(labels)}
                for view in VIEWS[:2]
            }
            rows.append({"fold": k, "test": {"strict": scores}, "per_label": {"strict": per_label}})
        out[f"sweep-span-f-minilm-sample/trial{e}"] = {"folds": rows}
    return out


def text_boxes(fig):
    """Every label-like text of the figure (ticks, titles, axis labels, legend entries) with its box on the canvas."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = []
    for ax in fig.axes:
        texts += [t for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_visible() and t.get_text()]
        texts += [
            t for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label) if t.get_text()
        ]
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        texts += list(legend.get_texts())
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts], renderer


def overlapping(boxes) -> list[tuple[str, str]]:
    return [
        (a, b)
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if box_a.overlaps(box_b) and box_a.width and box_b.width
    ]


@pytest.mark.parametrize("count", [1, 5, 20])
@pytest.mark.parametrize("draw", ["per_fold", "per_label"])
def test_figures_stay_readable(count, draw):
    data = experiments(count)
    fig = per_fold_figure(fold_frame(data)) if draw == "per_fold" else per_label_figure(label_frame(data))
    boxes, renderer = text_boxes(fig)
    names = {name for name, _ in boxes}
    assert all(f"sweep-span-f-minilm-sample/trial{e}" in names for e in range(count))  # every experiment named
    assert overlapping(boxes) == []
    canvas = fig.bbox
    outside = [
        name
        for name, box in boxes
        if box.x0 < canvas.x0 - 1 or box.x1 > canvas.x1 + 1 or box.y0 < -1 or box.y1 > canvas.y1 + 1
    ]
    assert outside == []  # nothing cut off at the edges
    for legend in fig.legends:  # legends sit outside every plotting area, and away from the titles
        legend_box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            assert not legend_box.overlaps(ax.get_window_extent(renderer)) or ax.get_label() == "<colorbar>"
            assert not legend_box.overlaps(ax.title.get_window_extent(renderer))
    width, height = fig.get_size_inches()
    assert width <= 20 and height <= 16  # still a figure one looks at, not a poster


def test_summary_and_frames_of_no_experiment_are_empty_tables_not_errors():
    folds, labels = fold_frame({}), label_frame({})
    assert list(folds.columns)[:3] == ["experiment", "fold", "view"] and folds.empty and labels.empty
    assert summary_table(folds).empty

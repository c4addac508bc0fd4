"""Benchmark: seconds to draw ``reliability.png`` (``faina.analysis.reliability_plot``) for 1, 5 and 20 labels.

Every run's report draws the experiment's diagram once (``outputs.reliability_plot=experiment``), and every test that
trains through ``train.py`` pays for it too, so its cost is measured here apart from training. The diagram data are
made up (10 bins per label, both curves, a prior line): drawing does not depend on the values. Each figure is the
median of ``--rounds`` draws after one warm-up draw (matplotlib's first figure loads its fonts).

    python scripts/benchmark_reliability_plot.py [--labels 1 5 20] [--rounds 5]

This is a benchmark, not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from faina.analysis.reliability import curve
from faina.analysis.reliability_plot import draw_reliability_plot


def diagram(labels: int, bins: int = 10) -> dict:
    """Diagram data of ``labels`` labels in the layout of ``faina.analysis.reliability``."""
    rng = np.random.default_rng(0)
    table = {}
    for c in range(labels):
        row: dict = {"items": 500, "prior": 0.1}
        for name in ("reported", "uncalibrated"):
            counts = rng.integers(1, 50, bins)
            sums_p = counts * np.linspace(0.05, 0.95, bins)
            row[name] = curve(counts, sums_p, sums_p * 0.9)
        table[f"Label-{c}"] = row
    return {"level": "span", "bins": bins, "folds": 5, "labels": table}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        draw_reliability_plot(diagram(1), Path(folder) / "warm-up.png")
        print("| labels | seconds per figure (median) | bytes |")
        print("|---|---|---|")
        for labels in args.labels:
            data, path, seconds = diagram(labels), Path(folder) / f"reliability-{labels}.png", []
            for _ in range(args.rounds):
                start = time.perf_counter()
                draw_reliability_plot(data, path)
                seconds.append(time.perf_counter() - start)
            print(f"| {labels} | {statistics.median(seconds):.2f} | {path.stat().st_size:,} |")


if __name__ == "__main__":
    main()

"""Fold results → the experiment's table (mean ± std over folds), like the paper's Table 3.

Per fold, the evaluator returns ``{"strict"|"soft": {"a1"|...|"avg": {"precision","recall","f1"}}}``
(fractions). The summary keeps that nesting with ``{"mean", "std"}`` leaves; std is the population
standard deviation over folds (numpy's default, ddof=0). The table prints percentages.
"""

from __future__ import annotations

from collections.abc import Sequence

from common.spread import mean_std

MEASURES = ("precision", "recall", "f1")
# the table's row order, whatever order a fold's scores were read in (a finished fold read back from its
# metrics.json has its keys sorted); a scoring not named here follows, alphabetically
SCORINGS = ("strict", "soft", "exact")


def scoring_order(modes) -> list[str]:
    return sorted(modes, key=lambda mode: (SCORINGS.index(mode) if mode in SCORINGS else len(SCORINGS), mode))


def summarise(fold_scores: Sequence[dict]) -> dict:
    summary: dict = {}
    for mode in scoring_order(fold_scores[0]):
        summary[mode] = {}
        for view in fold_scores[0][mode]:
            summary[mode][view] = {}
            for measure in MEASURES:
                summary[mode][view][measure] = mean_std(fold[mode][view][measure] for fold in fold_scores)
    return summary


def flat_metrics(summary: dict, prefix: str = "test") -> dict[str, float]:
    """``{"test/strict/avg/f1_mean": ...}``: what train.py returns to sweepers and loggers."""
    flat = {}
    for mode, views in summary.items():
        for view, measures in views.items():
            for measure, stats in measures.items():
                flat[f"{prefix}/{mode}/{view}/{measure}_mean"] = stats["mean"]
                flat[f"{prefix}/{mode}/{view}/{measure}_std"] = stats["std"]
    return flat


def markdown_table(summary: dict, title: str, num_folds: int) -> str:
    lines = [
        f"### {title} ({num_folds} fold{'s' if num_folds != 1 else ''}, mean ± std, %)",
        "",
        "| scoring | view | P | R | F1 |",
        "|---|---|---|---|---|",
    ]
    for mode, views in summary.items():
        for view, measures in views.items():
            cells = [f"{100 * measures[m]['mean']:.1f}±{100 * measures[m]['std']:.1f}" for m in MEASURES]
            lines.append(f"| {mode} | {view} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

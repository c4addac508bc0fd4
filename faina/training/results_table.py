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


WHO = ("model", "uncalibrated", "prior", "oracle")
PROBABILITY_MEASURES = ("cross_entropy", "manhattan", "ece")


def summarise_probabilities(folds: Sequence[dict]) -> dict | None:
    """Mean ± std over the scored folds of the probability scores (``probability_scores`` and, for calibrated
    models, ``probability_scores_uncalibrated``): ``{"level", "model"|"uncalibrated"|"prior"|"oracle": {measure:
    {"mean", "std"}}, "per_label": {label: {who: {"cross_entropy": {...}}}}}``; ``None`` when no fold has them."""
    from faina.scoring.soft_scores import BLOCK_KEY, UNCALIBRATED_KEY

    scored = [fold for fold in folds if BLOCK_KEY in fold]
    if not scored:
        return None
    blocks = {
        "model": [fold[BLOCK_KEY] for fold in scored],
        "uncalibrated": [fold[UNCALIBRATED_KEY]["model"] for fold in scored if UNCALIBRATED_KEY in fold],
    }

    def spread(values):
        values = [v for v in values if v is not None]
        return mean_std(values) if values else None

    summary: dict = {"level": scored[0][BLOCK_KEY]["level"], "folds": len(scored)}
    for who in ("model", "prior", "oracle"):
        summary[who] = {m: spread(b[who][m] for b in blocks["model"]) for m in PROBABILITY_MEASURES}
    if len(blocks["uncalibrated"]) == len(scored):
        summary["uncalibrated"] = {m: spread(b[m] for b in blocks["uncalibrated"]) for m in PROBABILITY_MEASURES}
    labels = scored[0][BLOCK_KEY]["per_label"]
    summary["per_label"] = {}
    for label in labels:
        row = {
            who: spread(b["per_label"][label][who]["cross_entropy"] for b in blocks["model"])
            for who in WHO
            if who != "uncalibrated"
        }
        if "uncalibrated" in summary:
            row["uncalibrated"] = spread(
                f[UNCALIBRATED_KEY]["per_label"][label]["model"]["cross_entropy"] for f in scored
            )
        summary["per_label"][label] = row
    return summary


def probability_table(summary: dict) -> str:
    """The probability scores over folds as Markdown: the averages, then each label's cross-entropy."""
    unit = "tokens" if summary["level"] == "span" else "posts"
    present = [who for who in WHO if who in summary]
    names = {"model": "model (calibrated)" if "uncalibrated" in summary else "model"}

    def cell(stats) -> str:
        return "-" if stats is None else f"{stats['mean']:.4f}±{stats['std']:.4f}"

    lines = [
        f"#### probabilities against the annotators' shares ({unit}; lower is better; prior: the train part's mean)",
        "",
        "| | cross-entropy | Manhattan | ECE |",
        "|---|---|---|---|",
    ]
    for who in present:
        lines.append(
            f"| {names.get(who, who)} | " + " | ".join(cell(summary[who][m]) for m in PROBABILITY_MEASURES) + " |"
        )
    lines += ["", "| label, cross-entropy | " + " | ".join(names.get(w, w) for w in present) + " |"]
    lines.append("|---|" + "---|" * len(present))
    for label, row in summary["per_label"].items():
        lines.append(f"| {label} | " + " | ".join(cell(row.get(who)) for who in present) + " |")
    return "\n".join(lines) + "\n"

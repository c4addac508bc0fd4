"""The permuted-label control's tables: per run, each calibration's test cross-entropy per label against the prior's
and today's calibration; over seeds, how often and by how much the two conditions of the control hold.

The control (``scripts/permuted_label_control.py``) asks two things of a calibration: the permuted label, which no
model can learn, comes out at its prior (within ``TOLERANCE``), and no real label gets worse than under ``reference``
(today's default calibration). One run answers both only up to its test set's noise (the paired standard errors of
``control_table``); several seeds answer them the way the benchmarks judge any difference (``seed_spread``): a real
label is worse only where the mean over seeds of its cross-entropy exceeds the reference's by more than the larger
of the two rows' seed std. Measured tables: docs/soft-labels.md#the-prior-fallback.
"""

from __future__ import annotations

from collections.abc import Mapping

from faina.benchmarks.seed_spread import mean_std, spread_verdict

TOLERANCE = 0.002  # the control's criterion: the permuted label's test cross-entropy within this of the prior's


def control_table(scores: dict, label: str, reference: str) -> dict:
    """One run: per label and calibration the test cross-entropy, the prior's, and the permuted label's distance to
    it; every real label a calibration makes worse than ``reference`` (today's default); per calibration the
    seconds its fit took and, with the fallback, what it found on dev."""
    table: dict = {}
    for name, entry in scores.items():
        for each, row in entry["per_label"].items():
            table.setdefault(each, {"prior": row["prior"]["cross_entropy"]})[name] = row["model"]["cross_entropy"]
    prior = table[label]["prior"]
    gaps = {name: value - prior for name, value in table[label].items() if name != "prior"}
    fits = {
        name: {
            key: entry["fit"][key]
            for key in ("fit_seconds", "towards_prior", "cross_fitted_log_loss")
            if key in entry["fit"]
        }
        for name, entry in scores.items()
    }
    paired = {name: entry["paired"] for name, entry in scores.items()}
    real, today = [each for each in table if each != label], f"vs_{reference}"
    return {
        "per_label": table,
        "gap_to_prior": gaps,
        "within": {name: abs(gap) <= TOLERANCE for name, gap in gaps.items()},
        "gap_to_prior_se": {name: paired[name]["vs_prior"][label]["se"] for name in gaps},
        "real_labels_worse_than_temperature": {
            name: {each: pairs[today][each] for each in real if pairs[today][each]["difference"] > 0}
            for name, pairs in paired.items()
        },
        "paired": paired,
        "fits": fits,
    }


def across_seeds(runs: Mapping[int, dict], label: str, reference: str) -> dict:
    """Per calibration over the runs (one per seed, ``control_table``'s): the permuted label's gap to its prior
    (each seed's, mean ± std, how many within ``TOLERANCE``) and per real label the cross-entropy's change against
    ``reference`` (each seed's, mean ± std, how many seeds worse, and the benchmarks' verdict on the two rows)."""
    seeds = sorted(runs)
    names = list(runs[seeds[0]]["gap_to_prior"])
    real = [each for each in runs[seeds[0]]["per_label"] if each != label]
    summary: dict = {}
    for name in names:
        gaps = [runs[seed]["gap_to_prior"][name] for seed in seeds]
        entry = {
            "permuted": {
                "gaps": gaps,
                "mean_std": mean_std(gaps),
                "within": sum(abs(gap) <= TOLERANCE for gap in gaps),
            },
            "real": {},
        }
        for each in real:
            ours = [runs[seed]["per_label"][each][name] for seed in seeds]
            theirs = [runs[seed]["per_label"][each][reference] for seed in seeds]
            changes = [a - b for a, b in zip(ours, theirs, strict=True)]
            entry["real"][each] = {
                "changes": changes,
                "mean_std": mean_std(changes),
                "worse": sum(change > 0 for change in changes),
                "verdict": spread_verdict(mean_std(ours), mean_std(theirs), len(seeds), lower_is_better=True),
            }
        summary[name] = entry
    return {"seeds": seeds, "calibrations": summary}


def run_markdown(table: dict, permuted: str, reference: str) -> str:
    """One run: the test cross-entropy per label and calibration, then each one's difference to ``reference``
    (the permuted label: to the prior) with its paired standard error."""
    names = [name for name in next(iter(table["per_label"].values())) if name != "prior"]
    lines = ["| label | prior | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for label, row in table["per_label"].items():
        mark = " (permuted)" if label == permuted else ""
        lines.append(f"| {label}{mark} | {row['prior']:.4f} | " + " | ".join(f"{row[n]:.4f}" for n in names) + " |")
    lines += ["", "| difference ± paired SE | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label in table["per_label"]:
        against = "vs_prior" if label == permuted else f"vs_{reference}"
        cells = [table["paired"][name][against][label] for name in names]
        title = f"{label} (permuted) − prior" if against == "vs_prior" else f"{label} − {reference}"
        lines.append(f"| {title} | " + " | ".join(_difference(cell) for cell in cells) + " |")
    return "\n".join(lines)


def seeds_markdown(summary: dict, permuted: str, reference: str) -> str:
    """Over seeds, one row per calibration: the permuted label's gap to the prior (mean ± std, seeds within
    ``TOLERANCE``), then each real label's change against ``reference`` (mean ± std, seeds worse, verdict)."""
    calibrations = summary["calibrations"]
    count = len(summary["seeds"])
    real = list(next(iter(calibrations.values()))["real"])
    lines = [
        f"Over seeds {', '.join(map(str, summary['seeds']))}: the permuted label's gap to its prior (seeds within "
        f"{TOLERANCE}), each real label's cross-entropy minus {reference}'s (seeds worse; verdict on the two rows).",
        "",
        f"| calibration | {permuted} (permuted) − prior | "
        + " | ".join(f"{each} − {reference}" for each in real)
        + " |",
        "|---" * (len(real) + 2) + "|",
    ]
    for name, entry in calibrations.items():
        gap = entry["permuted"]
        cells = [f"{_mean_std(gap['mean_std'])} ({gap['within']}/{count} within)"]
        for each in real:
            change = entry["real"][each]
            cells.append(f"{_mean_std(change['mean_std'])} ({change['worse']}/{count} worse, {change['verdict']})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _mean_std(value: tuple[float, float]) -> str:
    return f"{value[0]:+.4f} ± {value[1]:.4f}"


def _difference(cell: dict) -> str:
    error = "" if cell["se"] is None else f" ± {cell['se']:.4f}"
    return f"{cell['difference']:+.4f}{error}"

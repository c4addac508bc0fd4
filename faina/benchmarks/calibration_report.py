"""The calibration report: one row per (task, recipe, training length, calibration) over seeds, judged against the prior and against
the same models uncalibrated.

A row's figures are mean ± std over seeds of the test probability scores (``calibration_scores``): cross-entropy,
Manhattan distance and ECE averaged over labels, the same per label, and the prior and oracle of the same test
posts. ``below prior`` counts the (label, seed) pairs whose cross-entropy is below the prior's: the goal is all of
them. A calibration's ``paired Δ`` is its cross-entropy minus the uncalibrated model's, seed by seed (the same
trained model); its verdict follows the benchmarks' rule (``seed_spread``): a ``gain`` or ``loss`` only when the
difference of the means exceeds the larger of the two rows' seed std, else ``within spread``, and none while both
rows have one seed. Written as
``calibration-report-<tasks>-<lengths>.json`` / ``.md`` (docs/soft-labels.md has the measured table).
"""

from __future__ import annotations

from collections.abc import Sequence

from faina.benchmarks.seed_spread import mean_std, spread_verdict

MEASURES = ("cross_entropy", "manhattan", "ece")
NAMES = {"cross_entropy": "CE", "manhattan": "Manhattan", "ece": "ECE"}


def calibration_rows(runs: Sequence[dict]) -> list[dict]:
    """One row per (task, recipe, length, calibration) of the runs' ``benchmark-calibration.json`` contents (with
    the run's training length, ``length``, as the benchmark adds it: runs of other lengths are other models)."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        for name, entry in run["scores"].items():
            key = (run["task"], run["recipe"], run.get("length", ""), name)
            groups.setdefault(key, []).append({**entry, "_seed": run["seed"]})
    rows = []
    for (task, recipe, length, name), entries in groups.items():
        labels = list(entries[0]["per_label"])
        row: dict = {"task": task, "recipe": recipe, "length": length, "calibration": name, "seeds": len(entries)}
        for who in ("model", "prior", "oracle"):
            row[who] = {m: mean_std([e[who][m] for e in entries]) for m in MEASURES}
        row["per_label"] = {
            label: {
                who: {m: mean_std([e["per_label"][label][who][m] for e in entries]) for m in MEASURES}
                for who in ("model", "prior", "oracle")
            }
            for label in labels
        }
        pairs = [
            (e["per_label"][label]["model"]["cross_entropy"], e["per_label"][label]["prior"]["cross_entropy"])
            for e in entries
            for label in labels
        ]
        row["below prior"] = f"{sum(model < prior for model, prior in pairs)}/{len(pairs)}"
        row["_entries"] = entries
        rows.append(row)
    return mark_against_uncalibrated(rows)


def mark_against_uncalibrated(rows: list[dict]) -> list[dict]:
    """Each calibrated row's paired differences to the uncalibrated row of its task and recipe (same seeds, same
    trained models) and its verdict on cross-entropy; ``ECE lower`` counts the seeds whose ECE went down."""
    base = {(r["task"], r["recipe"], r["length"]): r for r in rows if r["calibration"] == "uncalibrated"}
    for row in rows:
        reference = base.get((row["task"], row["recipe"], row["length"]))
        if reference is None or row is reference:
            continue
        before = {e["_seed"]: e["model"] for e in reference["_entries"]}
        after = {e["_seed"]: e["model"] for e in row["_entries"]}
        seeds = sorted(set(before) & set(after))
        if not seeds:
            continue
        deltas = [after[s]["cross_entropy"] - before[s]["cross_entropy"] for s in seeds]
        row["paired Δ CE"] = mean_std(deltas)
        row["CE wins"] = f"{sum(d < 0 for d in deltas)}/{len(deltas)}"
        row["ECE lower"] = f"{sum(after[s]['ece'] < before[s]['ece'] for s in seeds)}/{len(seeds)}"
        seeds = max(row["seeds"], reference["seeds"])
        ours, theirs = row["model"]["cross_entropy"], reference["model"]["cross_entropy"]
        row["verdict"] = spread_verdict(ours, theirs, seeds, lower_is_better=True)
    return rows


def _cell(value: tuple[float, float], digits: int = 4) -> str:
    return f"{value[0]:.{digits}f} ± {value[1]:.{digits}f}"


def calibration_markdown(rows: Sequence[dict], machine: str) -> str:
    """The averages table, then per task one per-label table (CE and ECE of each label)."""
    lines = [
        "Test probabilities against the annotators' shares (lower is better; mean ± std over seeds). " + machine,
        "",
        "| task | recipe | length | calibration | seeds | CE | Manhattan | ECE | prior CE | oracle CE | below prior "
        "| paired Δ CE | CE wins | ECE lower | verdict |",
        "|" + "---|" * 15,
    ]
    for row in rows:
        cells = [row["task"], row["recipe"], row["length"], row["calibration"], str(row["seeds"])]
        cells += [_cell(row["model"][m]) for m in MEASURES]
        cells += [f"{row['prior']['cross_entropy'][0]:.4f}", f"{row['oracle']['cross_entropy'][0]:.4f}"]
        cells.append(row["below prior"])
        delta = row.get("paired Δ CE")
        cells.append(f"{delta[0]:+.4f} ± {delta[1]:.4f}" if delta else "")
        cells += [row.get("CE wins", ""), row.get("ECE lower", ""), row.get("verdict", "")]
        lines.append("| " + " | ".join(cells) + " |")
    for task in dict.fromkeys(row["task"] for row in rows):
        chosen = [row for row in rows if row["task"] == task]
        labels = list(chosen[0]["per_label"])
        lines += ["", f"{task}, per label: cross-entropy / ECE (prior and oracle: the same test posts)", ""]
        lines.append("| recipe | length | calibration | " + " | ".join(labels) + " |")
        lines.append("|---|---|---|" + "---|" * len(labels))
        for row in chosen:
            cells = [
                f"{_cell(row['per_label'][label]['model']['cross_entropy'], 3)} / "
                f"{row['per_label'][label]['model']['ece'][0]:.3f}"
                for label in labels
            ]
            lines.append(f"| {row['recipe']} | {row['length']} | {row['calibration']} | " + " | ".join(cells) + " |")
        for who in ("prior", "oracle"):
            cells = [f"{chosen[0]['per_label'][label][who]['cross_entropy'][0]:.3f}" for label in labels]
            lines.append(f"| {who} | | | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def saved_rows(rows: Sequence[dict]) -> list[dict]:
    """The rows as JSON (without the per-seed entries kept for the paired differences)."""
    return [{key: value for key, value in row.items() if not key.startswith("_")} for row in rows]

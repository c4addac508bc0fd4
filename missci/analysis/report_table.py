"""One citable table of Missci runs: every results folder a row, the paper's published rows as reference lines."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import UserError
from common.json_files import read_json
from missci.analysis.paper_figures import CITATION, RECONSTRUCTION, RECONSTRUCTION_NOTES

MAX_K = 6


COLUMNS: tuple[tuple[str, str], ...] = (
    ("p@1", "P@1"),
    ("arg@1", "Arg@1"),
    ("f1_micro", "micro-F1"),
    *((f"p@{k}", f"P@{k}") for k in range(2, MAX_K + 1)),
    *((f"arg@{k}", f"Arg@{k}") for k in range(2, MAX_K + 1)),
    ("meteor", "METEOR"),
    ("bertscore", "BERTScore"),
    ("nli_a", "NLI-A"),
    ("nli_s", "NLI-S"),
)


PAPER = CITATION


PAPER_SCOPE = "paper, test split (154 arguments / 363 R_i), not re-run"


PAPER_ROWS = RECONSTRUCTION


PAPER_NOTES = RECONSTRUCTION_NOTES


@dataclass
class Row:
    """One line of the table."""

    name: str
    source: str  # where the numbers come from (a file, or the paper)
    metrics: dict[str, float]
    unavailable: dict[str, str] = field(default_factory=dict)
    fallacies: int | None = None  # R_i scored
    arguments: int | None = None
    command: str | None = None
    seconds: int | None = None
    models: dict[str, str] = field(default_factory=dict)
    paper: bool = False


def _read_json(path: Path) -> dict:
    value = read_json(path, "re-run the command that wrote it (see row.json) or remove the folder from the list.")
    if not isinstance(value, dict):
        raise UserError("expected a JSON object.", path=path, fix="pass a results folder written by a Missci run.")
    return value


def _mapping(obj: dict, key: str, path: Path) -> dict:
    """``obj[key]`` when it is an object, ``{}`` when absent or null; anything else is a damaged file."""
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UserError(
            f"field {key!r} must be a JSON object, not {type(value).__name__}.",
            path=path,
            fix="re-run the command that wrote it.",
        )
    return value


def _count(obj: dict, key: str, path: Path) -> int | None:
    value = obj.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise UserError(
            f"field {key!r} must be a count, not {str(value)[:40]!r}.",
            path=path,
            fix="re-run the command that wrote it.",
        )
    return value


def _numbers(values: dict, path: Path) -> dict[str, float]:
    if not isinstance(values, dict):
        raise UserError(
            "the scores must be a JSON object of metric: number.", path=path, fix="re-run the command that wrote it."
        )
    numbers = {}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        numbers[key] = float(value)
    if not numbers:
        raise UserError("holds no metric values.", path=path, fix="re-run the command that wrote it.")
    return numbers


def _missing_reasons(metrics: dict[str, float], known: dict[str, str], why: str) -> dict[str, str]:
    reasons = {k: str(v) for k, v in known.items()}
    for key, _ in COLUMNS:
        if key not in metrics and key not in reasons:
            reasons[key] = why
    return reasons


def _lora_rows(directory: Path, path: Path) -> list[Row]:
    result = _read_json(path)
    pooled = result.get("pooled")
    if not isinstance(pooled, dict):
        raise UserError(
            "has no 'pooled' scores.",
            path=path,
            fix="re-run the fine-tuning command: a finished run writes pooled scores.",
        )
    rows = []
    counts = _mapping(result, "evaluated", path)
    unavailable = _mapping(result, "unavailable", path)
    for view in ("test", "all"):
        scores = pooled.get(view)
        if not scores:
            continue
        metrics = _numbers(scores, path)
        count = _mapping(counts, view, path)
        rows.append(
            Row(
                f"{directory.name} · pooled {view}",
                str(path),
                metrics,
                _missing_reasons(metrics, unavailable, f"not computed by this run ({path.name})"),
                _count(count, "fallacies", path),
                _count(count, "arguments", path),
                models=_mapping(result, "models", path),
            )
        )
    if not rows:
        raise UserError(
            "no fold has finished yet (pooled scores are empty).",
            path=path,
            fix="let the run finish (a rerun of the same command resumes it).",
        )
    return rows


def _zero_shot_row(directory: Path, path: Path) -> Row:
    result = _read_json(path)
    metrics = _numbers(_mapping(result, "metrics", path), path)
    counts = _mapping(result, "counts", path)
    return Row(
        directory.name,
        str(path),
        metrics,
        _missing_reasons(metrics, _mapping(result, "unavailable", path), f"not computed by this run ({path.name})"),
        _count(counts, "fallacies", path),
        _count(counts, "arguments", path),
        models=_mapping(result, "models", path),
    )


def _baseline_row(directory: Path, path: Path) -> Row:
    result = _read_json(path)
    metrics = _numbers(_mapping(result, "mean", path), path)
    seeds = ", ".join(str(seed) for seed in _mapping(result, "seeds", path))
    counts = _mapping(result, "counts", path)
    if result.get("kind") == "majority":
        name = (
            f"{directory.name} (always {result.get('majority_class')}, the most frequent class of "
            f"{result.get('majority_from')})"
        )
    else:
        name = f"{directory.name} (mean of seeds {seeds})"
    return Row(
        name,
        str(path),
        metrics,
        _missing_reasons(
            metrics,
            _mapping(result, "unavailable", path),
            "a baseline predicts one class per R_i, so it has no rank k > 1",
        ),
        _count(counts, "fallacies", path),
        _count(counts, "arguments", path),
        models=_mapping(result, "models", path),
    )


def load_rows(directory: str | Path) -> list[Row]:
    """The rows of one results folder (several for a LoRA run: one per pooled view)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError("is not a folder.", path=directory, fix="pass results/<name> folders written by Missci runs.")
    rows: list[Row] = []
    if (directory / "results.json").is_file():
        rows += _lora_rows(directory, directory / "results.json")
    rows += [
        _zero_shot_row(directory, p)
        for p in sorted(directory.glob("metrics-*.json"))
        if not p.name.startswith("metrics-classify-")
    ]
    rows += [_baseline_row(directory, p) for p in sorted(directory.glob("baseline-*.json"))]
    made = _read_json(directory / "row.json") if (directory / "row.json").is_file() else {}
    if not rows and made.get("exit_status"):  # a run that failed is shown as such, with its command and time
        reason = f"the run did not finish (exit status {made['exit_status']})"
        rows = [Row(directory.name, str(directory / "row.json"), {}, {key: reason for key, _ in COLUMNS})]
    if not rows:
        raise UserError(
            "holds no Missci results (results.json, metrics-<split>.json or baseline-<split>.json).",
            path=directory,
            fix="pass the folder a run wrote under results/ (see docs/missci.md).",
        )
    command, seconds = made.get("command"), made.get("seconds")
    if (
        command is not None
        and not isinstance(command, str)
        or seconds is not None
        and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < 10**9)
    ):
        raise UserError(
            "'command' must be a string and 'seconds' a number of seconds.",
            path=directory / "row.json",
            fix="re-run scripts/timed_row.sh, or delete row.json.",
        )
    for row in rows:
        row.command, row.seconds = command, seconds
    return rows


def paper_rows() -> list[Row]:
    return [Row(f"{name} (paper)", PAPER_SCOPE, dict(values), paper=True) for name, values in PAPER_ROWS.items()]


def _duration(seconds: int | None) -> str:
    if seconds is None:
        return ""
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def markdown_table(rows: Sequence[Row]) -> str:
    """The table, notes on unavailable metrics, and each row's command and time."""
    header = ["row", "R_i"] + [label for _, label in COLUMNS] + ["time"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    notes: dict[str, int] = {}
    for row in rows:
        cells = [row.name, "" if row.fallacies is None else str(row.fallacies)]
        for key, _ in COLUMNS:
            if key in row.metrics:
                cells.append(f"{row.metrics[key]:.3f}")
            elif key in row.unavailable:
                number = notes.setdefault(row.unavailable[key], len(notes) + 1)
                cells.append(f"unavailable [{number}]")
            else:
                cells.append("")
        cells.append("paper" if row.paper else _duration(row.seconds))
        lines.append("| " + " | ".join(cells) + " |")
    out = lines + [""]
    if notes:
        out += [f"[{number}] unavailable: {reason}" for reason, number in notes.items()] + [""]
    if any(row.paper for row in rows):
        out += [
            f"Rows marked (paper) are the published figures of {PAPER}, Table 2 (test split); they were not "
            "re-run here, and their BERTScore/NLI columns used the paper's models "
            "(deberta-xlarge-mnli, t5_xxl_true_nli_mixture). Empty paper cells: not published."
        ]
        out += [f"{note}" for note in PAPER_NOTES] + [""]
    made = [row for row in rows if row.command]
    if made:
        out.append("Commands (wall-clock time on the machine that ran them):")
        out.append("")
        seen = set()
        for row in made:
            if row.command in seen:
                continue
            seen.add(row.command)
            out.append(f"- {row.name.split(' · ')[0]} ({_duration(row.seconds)}): `{row.command}`")
        out.append("")
    models = {f"{k}: {v}" for row in rows for k, v in row.models.items()}
    if models:
        out.append("Premise-metric models of the re-run rows: " + "; ".join(sorted(models)) + ".")
        out.append("")
    return "\n".join(out)


def report(directories: Sequence[str | Path], with_paper: bool = True) -> list[Row]:
    rows = [row for directory in directories for row in load_rows(directory)]
    return rows + (paper_rows() if with_paper else [])

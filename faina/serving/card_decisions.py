"""How a model card says a model's decision rule: in words when one value serves every label and view, and a table
of the values only when they were tuned per label and view on dev.

The values come from the exported folder's ``config.json`` (``thresholds``, ``faina.serving.model_folder.
decision_rules``): a span model's ``decision_o_bias`` (one number per decoder ``d = view * C + c``, added to the
``O`` emission before Viterbi decoding), a post model's ``threshold`` τ and ``thresholds`` (per view and label).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

VITERBI = "Viterbi decoding of each decoder's CRF (the most likely path of valid BIO transitions)"


def decision_lines(rules: Mapping, labels: Sequence[str], views: Sequence[str]) -> list[str]:
    """The card's ``- decision rules:`` item, followed by a table of label × view values when they differ."""
    if "decision_o_bias" in rules:
        return _span_lines(_per_view(rules["decision_o_bias"], len(labels), len(views)), labels, views)
    if "thresholds" in rules or "threshold" in rules:
        return _post_lines(rules, labels, views)
    return [f"- decision rules: no bias: {VITERBI}"]


def _span_lines(biases: list[list[float]], labels: Sequence[str], views: Sequence[str]) -> list[str]:
    values = {value for row in biases for value in row}
    if values == {0.0} or not values:
        return [f"- decision rules: no bias: {VITERBI}"]
    if len(values) == 1:
        return [
            f"- decision rules: one O bias of {values.pop():g} added to every decoder's O emission, then {VITERBI} "
            "(a positive bias: fewer, surer spans)"
        ]
    return [
        "- decision rules: an O bias per label and view, tuned on dev, added to the O emission before "
        f"{VITERBI} (a positive bias: fewer, surer spans):",
        "",
        *_table(biases, labels, views, "O bias"),
    ]


def _post_lines(rules: Mapping, labels: Sequence[str], views: Sequence[str]) -> list[str]:
    threshold = rules.get("threshold")
    grid = rules.get("thresholds")
    thresholds = _per_view(grid, len(labels), len(views)) if grid is not None else []
    values = {value for row in thresholds for value in row} or ({float(threshold)} if threshold is not None else set())
    if len(values) == 1:
        return [
            f"- decision rules: one threshold τ = {values.pop():g} for every label and view: a label is predicted when "
            "its probability reaches τ"
        ]
    return [
        "- decision rules: a threshold per label and view, tuned on dev: a label is predicted when its probability "
        "reaches its threshold:",
        "",
        *_table(thresholds, labels, views, "τ"),
    ]


def _per_view(values, num_labels: int, num_views: int) -> list[list[float]]:
    """``values`` (flat ``[view * C + c]`` or nested ``[view][c]``) as one row of floats per view."""
    flat = [float(v) for row in values for v in (row if isinstance(row, list) else [row])]
    if len(flat) != num_labels * num_views:  # a folder of another shape: one row, still shown
        return [flat]
    return [flat[v * num_labels : (v + 1) * num_labels] for v in range(num_views)]


def _table(rows_per_view: list[list[float]], labels: Sequence[str], views: Sequence[str], what: str) -> list[str]:
    """One row per label, one column per view (the views' names; ``view k`` for a folder of another shape)."""
    names = list(views) if len(views) == len(rows_per_view) else [f"view {k + 1}" for k in range(len(rows_per_view))]
    lines = ["| label | " + " | ".join(f"{what} {name}" for name in names) + " |", "|---|" + "---|" * len(names)]
    for c, label in enumerate(labels):
        cells = [f"{row[c]:.2f}" if c < len(row) else "–" for row in rows_per_view]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines

"""The model card says a decision rule in words, and shows a table of values only when they were tuned."""

from __future__ import annotations

import json

from faina.formats.labels import LabelInventory
from faina.serving.card_decisions import decision_lines
from faina.serving.fold_model import load_exported
from faina.serving.model_card import model_card, run_record
from faina.serving.model_folder import read_config

LABELS = ["Ad-hominem", "Doubt", "Slogan"]
VIEWS = ["a1", "a2"]


def test_an_untuned_span_model_has_no_bias_in_words():
    assert decision_lines({"decision_o_bias": [0.0] * 6}, LABELS, VIEWS) == [
        "- decision rules: no bias: Viterbi decoding of each decoder's CRF (the most likely path of valid BIO "
        "transitions)"
    ]
    [line] = decision_lines({"decision_o_bias": [1.5] * 6}, LABELS, VIEWS)
    assert "one O bias of 1.5 added to every decoder's O emission" in line


def test_tuned_o_biases_are_a_table_of_label_by_view():
    biases = [0.0, 1.0, -0.5, 2.0, 0.25, 0.0]  # decoder d = view * 3 + label
    lines = decision_lines({"decision_o_bias": biases}, LABELS, VIEWS)
    assert lines[0].startswith("- decision rules: an O bias per label and view, tuned on dev")
    assert lines[2:] == [
        "| label | O bias a1 | O bias a2 |",
        "|---|---|---|",
        "| Ad-hominem | 0.00 | 2.00 |",
        "| Doubt | 1.00 | 0.25 |",
        "| Slogan | -0.50 | 0.00 |",
    ]


def test_post_thresholds_one_in_words_tuned_in_a_table():
    [line] = decision_lines({"threshold": 0.5, "thresholds": [[0.5] * 3] * 2}, LABELS, VIEWS)
    assert line == (
        "- decision rules: one threshold τ = 0.5 for every label and view: a label is predicted when its probability "
        "reaches τ"
    )
    lines = decision_lines({"threshold": 0.5, "thresholds": [[0.3, 0.5, 0.7], [0.4, 0.5, 0.5]]}, LABELS, VIEWS)
    assert "a threshold per label and view, tuned on dev" in lines[0]
    assert lines[2] == "| label | τ a1 | τ a2 |" and lines[4] == "| Ad-hominem | 0.30 | 0.40 |"
    assert lines[6] == "| Slogan | 0.70 | 0.50 |"


def _card(fold, export, thresholds=None) -> str:
    config = read_config(export)
    if thresholds is not None:
        config = {**config, "thresholds": thresholds}
    _, meta = load_exported(fold)
    return model_card(meta, config, run_record(fold), LabelInventory.load(meta["labels_inventory"]))


def test_the_exported_cards_read_as_prose_untuned_and_as_a_table_tuned(trained_runs):
    span_card = (trained_runs.exports["span-fold0"] / "README.md").read_text()
    [rule] = [line for line in span_card.splitlines() if line.startswith("- decision rules:")]
    assert rule.startswith("- decision rules: no bias: Viterbi decoding")
    assert "[0.0" not in span_card and "| label | O bias" not in span_card
    # task=post-f tunes its thresholds on dev: its card has them as a table, one row per label
    post_card = (trained_runs.exports["post-fold0"] / "README.md").read_text().splitlines()
    [rule] = [line for line in post_card if line.startswith("- decision rules:")]
    assert rule.startswith("- decision rules: a threshold per label and view, tuned on dev")
    header = post_card.index("| label | τ a1 | τ a2 |")
    assert [line.count("|") for line in post_card[header + 2 : header + 23]] == [4] * 20 + [0]
    config = json.loads((trained_runs.exports["span-fold0"] / "config.json").read_text())
    tuned = {"decision_o_bias": [0.1 * d for d in range(len(config["thresholds"]["decision_o_bias"]))]}
    card = _card(trained_runs.span / "fold0", trained_runs.exports["span-fold0"], tuned).splitlines()
    header = card.index("| label | O bias a1 | O bias a2 |")
    rows = card[header + 2 : header + 2 + 20]
    assert len(rows) == 20 and rows[0].endswith("| 0.00 | 2.00 |") and rows[1].endswith("| 0.10 | 2.10 |"), rows[:2]

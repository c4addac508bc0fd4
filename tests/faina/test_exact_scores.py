"""seqeval exact-match span scores (``metrics.faina_exact``, ``faina.evaluate --exact``) on hand-computed cases."""

from __future__ import annotations

import json

import pytest

from faina.evaluate import main
from faina.formats.records import Span
from metrics.faina_exact import bio_tags, exact_span_scores

A, B, C = "Doubt", "Slogan", "Strawman"
LABELS = (A, B, C)


def test_bio_tags_of_one_label_keep_touching_spans_apart():
    spans = [Span(1, 2, A), Span(3, 4, A), Span(2, 3, B)]
    assert bio_tags(spans, A, 5) == [f"B-{A}", f"I-{A}", f"B-{A}", f"I-{A}", "O"]
    assert bio_tags(spans, B, 5) == ["O", f"B-{B}", f"I-{B}", "O", "O"]


def test_hand_computed_view_scores_and_average():
    # a1: gold A(1-3), B(5-6); predicted A(1-3) exact, B(5-7) wrong end, C(2-2) spurious -> P 1/3, R 1/2
    # a2: gold A(1-3); the same prediction per view -> P 1/3, R 1/1
    pred = [Span(1, 3, A), Span(2, 2, C), Span(5, 7, B)]
    golds = [[[Span(1, 3, A), Span(5, 6, B)], [Span(1, 3, A)]]]
    result = exact_span_scores([[pred, pred]], golds, LABELS, num_views=2, per_label=True)
    scores = result["scores"]
    assert scores["a1"] == pytest.approx({"precision": 1 / 3, "recall": 1 / 2, "f1": 0.4})
    assert scores["a2"] == pytest.approx({"precision": 1 / 3, "recall": 1.0, "f1": 0.5})
    assert scores["avg"]["f1"] == pytest.approx(0.45)
    per_label = result["per_label"]["a1"]
    assert per_label[A] == pytest.approx({"precision": 1.0, "recall": 1.0, "f1": 1.0, "predicted": 1, "gold": 1})
    assert per_label[B] == pytest.approx({"precision": 0.0, "recall": 0.0, "f1": 0.0, "predicted": 1, "gold": 1})
    assert per_label[C]["predicted"] == 1 and per_label[C]["gold"] == 0


def test_one_prediction_is_scored_against_every_view_and_merged_spans_earn_nothing():
    # gold a1 has two touching A spans, a2 one A span over the same tokens: the single merged
    # prediction matches a2 exactly and neither span of a1
    golds = [[[Span(1, 2, A), Span(3, 4, A)], [Span(1, 4, A)]]]
    scores = exact_span_scores([[[Span(1, 4, A)]]], golds, LABELS, num_views=2)["scores"]
    assert scores["a1"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert scores["a2"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_no_spans_anywhere_gives_zero_and_unknown_labels_are_refused():
    assert exact_span_scores([[[], []]], [[[], []]], LABELS, 2)["scores"]["avg"]["f1"] == 0.0
    with pytest.raises(ValueError, match="not one of the task's labels"):
        exact_span_scores([[[Span(1, 1, "Nope")]]], [[[]]], LABELS, 1)


def _post(post_id: str, cells: list[tuple[str, str]]) -> str:
    lines = [
        f"# post_id = {post_id}",
        "# post_date = 2021-06",
        "# post_topic_keywords = migration",
        "# post_text = " + " ".join(f"w{i}" for i in range(1, len(cells) + 1)),
    ]
    lines += [f"{i}\tw{i}\t{a}\t{b}" for i, (a, b) in enumerate(cells, start=1)]
    return "\n".join(lines) + "\n"


def test_cli_exact_key_has_the_strict_layout(write_file, capsys):
    gold = write_file("gold.conll", _post("1", [(f"B-{A}", f"B-{A}"), (f"I-{A}", f"I-{A}"), ("O", "O")]))
    pred = write_file("pred.conll", _post("1", [(f"B-{A}", f"B-{A}"), (f"I-{A}", f"I-{A}"), (f"I-{A}", "O")]))
    main(["-T", "span-fine", "-G", str(gold), "-P", str(pred), "--exact", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"strict", "soft", "exact"}
    assert result["exact"].keys() == result["strict"].keys() == {"a1", "a2", "avg"}
    assert result["exact"]["a1"]["f1"] == 0.0 and result["exact"]["a2"]["f1"] == 1.0
    assert result["exact"]["avg"]["f1"] == 0.5


def test_cli_exact_on_a_post_task_is_one_clear_error(write_file, capsys):
    tsv = write_file(
        "gold.tsv",
        "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2\n1\t2021-06\tmigration\tw\tDoubt\t\n",
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["-T", "post-fine", "-G", str(tsv), "-P", str(tsv), "--exact"])
    assert exit_info.value.code == 2
    assert "applies to span tasks" in capsys.readouterr().err

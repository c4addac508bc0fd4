"""seqeval exact-match span scores (``metrics.faina_exact``, ``faina.evaluate --exact``) on hand-computed cases."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faina.evaluate import main
from faina.formats.labels import LabelInventory
from faina.formats.records import Span
from metrics.faina_exact import bio_tags, exact_span_scores
from strategies import span_corpus_pairs

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


def _whole_post_scores(preds, golds, labels, num_views) -> list[dict]:
    """seqeval's report of each view over whole-post IOB2 sequences (every token of the post, every label with a
    span in it): the figures the cut sequences must reproduce."""
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    reports = []
    for view in range(num_views):
        y_true, y_pred = [], []
        for pred_views, gold_views in zip(preds, golds):
            gold = gold_views[view]
            pred = pred_views[0] if len(pred_views) == 1 else pred_views[view]
            length = max((span.last for span in (*pred, *gold)), default=0)
            for label in labels:
                if any(span.label == label for span in (*pred, *gold)):
                    y_true.append(bio_tags(gold, label, length))
                    y_pred.append(bio_tags(pred, label, length))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reports.append(
                classification_report(y_true, y_pred, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
                if y_true
                else {}
            )
    return reports


@st.composite
def overlapping_spans(draw, labels=LABELS) -> list[Span]:
    """Spans of one view that may overlap within a label (a file the readers refuse, built here by hand)."""
    spans = []
    for _ in range(draw(st.integers(0, 5))):
        first = draw(st.integers(1, 12))
        spans.append(Span(first, draw(st.integers(first, first + 4)), draw(st.sampled_from(labels))))
    return spans


def _assert_matches_whole_posts(preds, golds, labels, num_views):
    result = exact_span_scores(preds, golds, labels, num_views, per_label=True)
    for view, report in enumerate(_whole_post_scores(preds, golds, labels, num_views)):
        name = f"a{view + 1}"
        micro = report.get("micro avg", {"precision": 0.0, "recall": 0.0, "f1-score": 0.0})
        assert result["scores"][name] == {
            "precision": micro["precision"],
            "recall": micro["recall"],
            "f1": micro["f1-score"],
        }
        for label, row in result["per_label"][name].items():
            expected = report.get(label, {"precision": 0.0, "recall": 0.0, "f1-score": 0.0})
            assert (row["precision"], row["recall"], row["f1"]) == (
                expected["precision"],
                expected["recall"],
                expected["f1-score"],
            )


@settings(max_examples=80, deadline=None)
@given(pair=span_corpus_pairs(), one_pred=st.booleans())
def test_sequences_cut_to_each_labels_spans_score_as_whole_posts(pair, one_pred):
    """Each (post, label) sequence covers only the tokens of that label's spans; the figures are those of seqeval
    on whole posts, digit for digit, per view and per label."""
    gold, pred = pair
    labels = LabelInventory.load().labels_of("fine")
    golds = [post.spans for post in gold.posts]
    preds = [post.spans[:1] if one_pred else post.spans for post in pred.posts]
    _assert_matches_whole_posts(preds, golds, labels, gold.num_views)


@settings(max_examples=80, deadline=None)
@given(posts=st.lists(st.tuples(overlapping_spans(), overlapping_spans()), min_size=1, max_size=4))
def test_overlapping_spans_of_one_label_score_as_whole_posts_too(posts):
    """Where spans of one label overlap (their tags overwrite each other), the cut still reads the same chunks."""
    preds = [[pred] for pred, _ in posts]
    golds = [[gold] for _, gold in posts]
    _assert_matches_whole_posts(preds, golds, LABELS, 1)


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

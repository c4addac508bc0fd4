"""Views that did not annotate a post (the ``?`` marker): read, written back, refused where inconsistent, left out
of aggregation and of every score (hand-computed)."""

from __future__ import annotations

import json

import pytest

from common.errors import UserError
from common.labels import LabelInventory as SharedInventory
from faina.data.features import Collator, post_features, span_features
from faina.data.targets import aggregate_corpus, aggregate_labels, aggregate_spans
from faina.formats.conll import format_conll, read_conll
from faina.formats.records import NOT_ANNOTATED, Span, annotated_mask, has_not_annotated
from faina.formats.tsv import format_post_tsv, post_corpus_from_spans, read_post_tsv
from faina.scoring.official import _evaluate, evaluate_files, format_table
from faina.validate import corpus_statistics

D, S = "Doubt", "Slogan"
HEADER = "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2\tlabels_a3\n"
TSV = (
    HEADER
    + f"1\t2021-06\tmigration\tuno\t{D}\t?\t{D}|{S}\n2\t2021-06\tmigration\tdue\t\t{S}\t?\n3\t2021-06\tmigration\ttre\t?\t?\t?\n"
)


def conll_post(post_id: str, rows: list[str]) -> str:
    head = f"# post_id = {post_id}\n# post_date = 2021-06\n# post_topic_keywords = migration\n# post_text = t\n"
    return head + "".join(f"{i}\tw{i}\t{row}\n" for i, row in enumerate(rows, start=1))


CONLL = (
    conll_post("1", [f"B-{D}\t?\tO", f"I-{D}\t?\tB-{S}", "O\t?\tO"])
    + "\n"
    + conll_post("2", ["?\tO\t?", f"?\tB-{D}\t?"])
    + "\n"
)


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_tsv_marker_reads_as_none_and_writes_back_byte_for_byte(tmp_path):
    corpus = read_post_tsv(write(tmp_path, "m.tsv", TSV))
    assert corpus.rows[0].labels == ((D,), None, (D, S))
    assert corpus.rows[1].labels == ((), (S,), None)  # an empty cell is "no label", the marker is not
    assert corpus.rows[1].label_set(0) == frozenset() and corpus.rows[1].label_set(2) is None
    assert annotated_mask(corpus) == [[True, False, True], [True, True, False], [False, False, False]]
    assert has_not_annotated(corpus)
    assert format_post_tsv(corpus) == TSV


def test_conll_marker_reads_as_none_for_the_whole_post_and_writes_back(tmp_path):
    corpus = read_conll(write(tmp_path, "m.conll", CONLL))
    first, second = corpus.posts
    assert first.spans == ((Span(1, 2, D),), None, (Span(2, 2, S),))
    assert second.spans == (None, (Span(2, 2, D),), None)
    assert first.labels(1) is None and second.labels(1) == (D,)
    assert format_conll(corpus) == CONLL
    # the post-level view of the span file keeps the marker
    assert post_corpus_from_spans(corpus).rows[1].labels == (None, (D,), None)


@pytest.mark.parametrize(
    ("rows", "line", "message"),
    [
        ([f"B-{D}\t?", f"I-{D}\tO"], 6, "label column 2 does not carry the not-annotated marker '\\?' here, but the "),
        (["O\tO", "O\t?"], 6, "label column 2 carries the not-annotated marker"),
        ([f"B-{D}|?\tO"], 5, "marker '\\?' is mixed with tags in label column 1"),
    ],
)
def test_inconsistent_conll_marker_is_one_error_with_file_and_line(tmp_path, rows, line, message):
    path = write(tmp_path, "bad.conll", conll_post("9", rows))
    with pytest.raises(UserError, match=message) as caught:
        read_conll(path)
    assert str(caught.value).startswith(f"{path}:{line}:")


def test_tsv_marker_mixed_with_labels_is_one_error_with_file_and_line(tmp_path):
    path = write(tmp_path, "bad.tsv", HEADER + f"1\t2021-06\tmigration\tuno\t{D}\t?|{D}\t\n")
    with pytest.raises(UserError, match="marker '\\?' is mixed with labels in the cell") as caught:
        read_post_tsv(path)
    assert str(caught.value).startswith(f"{path}:2:")


@pytest.mark.parametrize("fine", [["?", "Doubt"], {"?": "q", "Doubt": "do"}])
def test_the_marker_is_refused_as_a_label_name(fine):
    with pytest.raises(UserError, match="'\\?' cannot be a label name"):
        SharedInventory.from_dict({"fine": fine}, source="my_labels.yaml")


def test_validate_counts_the_not_annotated_posts_per_view(tmp_path):
    stats = corpus_statistics(read_post_tsv(write(tmp_path, "m.tsv", TSV)))
    assert stats["not_annotated"] == {"a1": 1, "a2": 2, "a3": 2}
    assert stats["spans"]["a3"] == {D: 1, S: 1}


def test_aggregation_runs_over_the_annotated_views_only():
    # of three views a2 skipped the post: union/intersection/majority over a1 and a3
    views = [(D,), None, (D, S)]
    assert aggregate_labels(views, "union") == (D, S)
    assert aggregate_labels(views, "intersection") == (D,)
    assert aggregate_labels(views, "majority") == (D,)  # S: 1 of 2 annotated views, not more than half
    assert aggregate_labels([None, None, None], "majority") is None
    spans = [(Span(1, 4, D),), None, (Span(3, 6, D),)]
    assert aggregate_spans(spans, "intersection") == (Span(3, 4, D),)
    assert aggregate_spans(spans, "majority") == (Span(3, 4, D),)
    assert aggregate_spans([None, None], "union") is None


def test_aggregate_corpus_keeps_a_post_no_view_annotated_as_not_annotated(tmp_path):
    corpus = read_post_tsv(write(tmp_path, "m.tsv", TSV))
    majority = aggregate_corpus(corpus, "majority")
    assert [row.labels for row in majority.rows] == [((D,),), ((),), (None,)]
    assert aggregate_corpus(corpus, "soft") is corpus  # soft keeps every view


class _Tokenizer:
    """Just enough tokenizer for the feature functions (one id per word)."""

    unk_token_id = 1

    def __call__(self, text, is_split_into_words=False, add_special_tokens=False):
        words = list(text) if is_split_into_words else text.split()

        class Encoding(dict):
            def word_ids(self):
                return list(range(len(words)))

        return Encoding(input_ids=[2] * len(words))


def test_features_carry_the_annotated_mask_and_the_collator_fills_the_rest(tmp_path):
    corpus = read_post_tsv(write(tmp_path, "m.tsv", TSV + f"4\t2021-06\tmigration\tquattro\t{S}\t{S}\t{S}\n"))
    features = [post_features(row, i, _Tokenizer(), [D, S], 3) for i, row in enumerate(corpus.rows)]
    assert features[0]["annotated"] == [True, False, True]
    assert features[0]["labels"].tolist() == [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    assert "annotated" not in features[3]  # a fully annotated post is as before
    batch = Collator(0)([features[0], features[3]])
    assert batch["annotated"].tolist() == [[True, False, True], [True, True, True]]
    assert "annotated" not in Collator(0)([features[3]])
    spans = read_conll(write(tmp_path, "m.conll", CONLL))
    feature = span_features(spans.posts[1], 1, _Tokenizer(), [D, S], 3)
    assert feature["annotated"] == [False, True, False] and feature["tags"].shape == (6, 2)


# --- scores ---------------------------------------------------------------------------------------------------
GOLD = HEADER.replace("\tlabels_a3", "") + f"1\t2021-06\tmigration\tuno\t{D}\t?\n2\t2021-06\tmigration\tdue\t?\t?\n"
PRED = "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\n" + (
    f"1\t2021-06\tmigration\tuno\t{D}|{S}\n2\t2021-06\tmigration\tdue\t{S}\n"
)


def test_post_scores_skip_the_pairs_whose_gold_is_not_annotated(tmp_path):
    gold, pred = write(tmp_path, "gold.tsv", GOLD), write(tmp_path, "pred.tsv", PRED)
    outcome = _evaluate("post-fine", gold, pred, one_pred=True, per_label=False, inventory=None)
    strict = outcome["scores"]["strict"]
    # only (post 1, a1) counts: predicted {D, S}, gold {D} -> P 1/2, R 1, F1 2/3; a2 annotated nothing: 0 counts
    assert strict["a1"]["precision"] == 0.5 and strict["a1"]["recall"] == 1.0
    assert strict["a1"]["f1"] == pytest.approx(2 / 3)
    assert outcome["counts"]["predicted"] == [2, 0] and outcome["counts"]["gold"] == [1, 0]
    assert outcome["counts"]["pairs_not_annotated"] == 3 and outcome["counts"]["posts_not_annotated"] == 1
    assert "posts with no annotated view: 1" in format_table("post-fine", str(gold), str(pred), outcome, True)


def test_span_scores_skip_the_pairs_whose_gold_is_not_annotated(tmp_path):
    gold_text = conll_post("1", [f"B-{D}\t?", f"I-{D}\t?"]) + "\n" + conll_post("2", [f"B-{S}\tO", "O\tO"]) + "\n"
    pred_text = conll_post("1", [f"B-{D}\tB-{S}", "O\tO"]) + "\n" + conll_post("2", [f"B-{S}\tB-{D}", "O\tO"]) + "\n"
    gold, pred = write(tmp_path, "gold.conll", gold_text), write(tmp_path, "pred.conll", pred_text)
    scores = evaluate_files("span-fine", gold, pred, exact=True)
    # a1: predicted D 1-1 vs gold D 1-2 (P 1, R 1/2) and S 1-1 vs S 1-1 (P 1, R 1): P 2/2, R 1.5/2
    assert scores["strict"]["a1"]["precision"] == 1.0 and scores["strict"]["a1"]["recall"] == 0.75
    # a2: post 1 not annotated, so its predicted S 1-1 does not count; post 2: predicted D 1-1, gold nothing
    assert scores["strict"]["a2"]["precision"] == 0.0
    assert scores["exact"]["a1"]["f1"] == 0.5  # S matches exactly, D does not


def test_a_prediction_file_may_not_carry_the_marker(tmp_path):
    gold = write(tmp_path, "gold.tsv", GOLD)
    pred = write(tmp_path, "pred.tsv", PRED.replace(f"\t{S}\n", "\t?\n"))
    with pytest.raises(UserError, match="marks post '2' as not annotated") as caught:
        evaluate_files("post-fine", gold, pred, one_pred=True)
    assert str(caught.value).startswith(f"{pred}:3:")


def test_soft_scores_share_is_over_annotated_views(tmp_path):
    from faina.formats.probability_file import PostProbabilities, ProbabilityFile
    from faina.scoring.soft_scores import soft_scores

    gold = read_post_tsv(write(tmp_path, "m.tsv", TSV))
    import numpy as np

    values = [np.array([[0.5, 0.5]]), np.array([[0.5, 0.5]]), np.array([[0.9, 0.9]])]
    probs = ProbabilityFile(
        "post", ("a1",), (D, S), tuple(PostProbabilities(r.post_id, v) for r, v in zip(gold.rows, values))
    )
    result = soft_scores(gold, probs, [D, S])
    # gold shares: post 1 over a1, a3: D 1, S 1/2; post 2 over a1, a2: D 0, S 1/2; post 3: no view, left out
    assert result["items_not_annotated"] == 1 and result["items"] == 3
    # Manhattan 2|p - t| per label: D (1.0 + 1.0) / 2 = 1.0; S (0 + 0) / 2 = 0
    assert result["per_label"][D]["model"]["manhattan"] == pytest.approx(1.0)
    assert result["per_label"][S]["model"]["manhattan"] == pytest.approx(0.0)
    assert json.dumps(result, allow_nan=False)  # plain JSON: the left-out post leaves no NaN behind


def test_the_marker_constant_is_the_documented_question_mark():
    assert NOT_ANNOTATED == "?"


def test_tools_without_a_rule_for_missing_views_stop_with_one_message(tmp_path):
    from faina.analysis.corpus_stats import file_stats
    from faina.analysis.disagreement_page import show
    from faina.formats.labels import LabelInventory

    tsv = write(tmp_path, "m.tsv", TSV)
    with pytest.raises(UserError, match="faina.stats has no rule for views that did not annotate") as caught:
        file_stats(str(tsv), LabelInventory.load())
    assert str(caught.value).startswith(f"{tsv}:2:")
    conll = write(tmp_path, "m.conll", CONLL)
    with pytest.raises(UserError, match="faina.show has no rule"):
        show(conll, tmp_path / "page.html")


@pytest.mark.parametrize("kind", ["conll", "tsv"])
def test_cached_features_keep_the_annotated_mask(tmp_path, kind):
    from faina.data.feature_cache import encode_cached
    from models.encoder import offline_encoder_path
    from models.encoder_tokenizer import load_encoder_tokenizer

    tokenizer = load_encoder_tokenizer(offline_encoder_path(), False)
    if kind == "conll":
        corpus, level = read_conll(write(tmp_path, "m.conll", CONLL)), "span"
    else:
        corpus, level = read_post_tsv(write(tmp_path, "m.tsv", TSV)), "post"
    direct, _ = encode_cached(corpus, level, tokenizer, [D, S], 3, None)
    cached, note = encode_cached(corpus, level, tokenizer, [D, S], 3, tmp_path / "cache")
    again, note_again = encode_cached(corpus, level, tokenizer, [D, S], 3, tmp_path / "cache")
    assert not note["cached"] and note_again["cached"]
    for features in (cached, again):
        assert [f.get("annotated") for f in features] == [f.get("annotated") for f in direct]
    assert direct[0]["annotated"] == ([True, False, True])

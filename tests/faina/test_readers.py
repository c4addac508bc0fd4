"""Readers and writers of the Faina formats: round trips, the official layout, and every bad-input message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.errors import UserError
from faina.data.coarse import coarse_labels, coarse_spans
from faina.formats.conll import check_aligned, format_conll, read_conll
from faina.formats.labels import LabelInventory
from faina.formats.records import Post, Span, SpanCorpus
from faina.formats.tsv import (
    check_rows_aligned,
    format_post_tsv,
    post_corpus_from_spans,
    read_post_tsv,
    rows_with_labels,
)

INV = LabelInventory.load()
AA, VA, SL = "Appeal-to-authority", "Vagueness", "Slogan"

GOOD = (
    "# post_id = 658\n# post_date = 2021-06\n# post_topic_keywords = public health\n"
    "# post_text = Studio americano: la\n"
    f"1\tStudio\tB-{AA}|B-{VA}\tB-{AA}\n"
    f"2\tamericano\tI-{AA}|I-{VA}\tI-{AA}\n"
    f"3\t:\tI-{AA}\tO\n"
    "4\tla\tO\tO\n"
    "\n"
    "# post_id = 659\n# post_date = 2020-01\n# post_topic_keywords = migration\n# post_text = x y\n"
    f"1\tx\tO\tB-{SL}\n"
    f"2\ty\tB-{SL}\tB-{SL}\n"
)


def post_block(post_id: str, rows: list[str]) -> str:
    head = f"# post_id = {post_id}\n# post_date = 2021-06\n# post_topic_keywords = migration\n# post_text = t\n"
    return head + "".join(row + "\n" for row in rows)


def test_reads_spans_per_view(write_file):
    corpus = read_conll(write_file("a.conll", GOOD))
    assert corpus.num_views == 2 and len(corpus) == 2
    first = corpus.posts[0]
    assert first.post_id == "658" and first.date == "2021-06" and first.topic == "public health"
    assert first.tokens == ("Studio", "americano", ":", "la")
    assert first.spans[0] == (Span(1, 3, AA), Span(1, 2, VA))
    assert first.spans[1] == (Span(1, 2, AA),)
    # two adjacent B-Slogan make two spans
    assert corpus.posts[1].spans[1] == (Span(1, 1, SL), Span(2, 2, SL))
    assert first.labels(0) == (AA, VA)


@pytest.mark.parametrize("trailing", ["", "\n"])
def test_conll_round_trip_is_byte_exact(write_file, trailing):
    text = GOOD + trailing
    assert format_conll(read_conll(write_file("a.conll", text))) == text


def test_tsv_round_trip_and_post_view(write_file):
    corpus = read_conll(write_file("a.conll", GOOD))
    tsv = format_post_tsv(post_corpus_from_spans(corpus))
    assert tsv.splitlines()[0] == "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2"
    assert tsv.splitlines()[1] == f"658\t2021-06\tpublic health\tStudio americano: la\t{AA}|{VA}\t{AA}"
    path = write_file("a.tsv", tsv)
    assert format_post_tsv(read_post_tsv(path)) == tsv


def test_unlabelled_file_loads_and_predictions_fill_it(write_file):
    text = post_block("1", ["1\ta\t\t", "2\tb\t\t"])
    corpus = read_conll(write_file("test.conll", text))
    assert not corpus.labelled and corpus.num_views == 2
    assert format_conll(corpus) == text
    predicted = corpus.replace_posts([corpus.posts[0].with_spans([[Span(1, 2, SL)], []])])
    assert format_conll(predicted).splitlines()[-2:] == [f"1\ta\tB-{SL}\tO", f"2\tb\tI-{SL}\tO"]


def test_unlabelled_tsv_is_filled_in_the_official_layout(write_file):
    path = write_file(
        "t.tsv",
        "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2\n9\t2019-01\tmigration\tciao\t\t\n",
    )
    corpus = read_post_tsv(path)
    filled = rows_with_labels(corpus, [[[VA, SL], [SL]]])
    assert format_post_tsv(filled).splitlines()[1] == f"9\t2019-01\tmigration\tciao\t{SL}|{VA}\t{SL}"


def test_cells_are_written_in_label_name_order():
    post = Post("1", "2021-01", "migration", "a", ("a",), ((Span(1, 1, VA), Span(1, 1, AA)),))
    assert format_conll(SpanCorpus((post,), 1, trailing_blank_line=False)).splitlines()[-1] == f"1\ta\tB-{AA}|B-{VA}"


def test_number_of_views_is_the_number_of_label_columns(write_file):
    corpus = read_conll(write_file("three.conll", post_block("1", [f"1\ta\tB-{SL}\tO\tB-{VA}"])))
    assert corpus.num_views == 3 and corpus.posts[0].spans[2] == (Span(1, 1, VA),)


def test_custom_inventory_from_yaml(write_file):
    labels = write_file("labels.yaml", "name: toy\nfine: {Alpha: a, Beta: b}\nparents: {Beta: [Alpha]}\n")
    inv = LabelInventory.load(labels)
    assert inv.fine == ("Alpha", "Beta") and inv.soft_weight("Alpha", "Beta") == 0.5
    corpus = read_conll(write_file("toy.conll", post_block("1", ["1\ta\tB-Beta\tB-Alpha"])), inv)
    assert corpus.posts[0].spans[0] == (Span(1, 1, "Beta"),)
    with pytest.raises(UserError, match="unknown label 'Slogan'"):
        read_conll(write_file("toy2.conll", post_block("1", [f"1\ta\tB-{SL}\tO"])), inv)


# --- bad input: one message with file, line and fix ------------------------------------------------
BAD_CASES = {
    "wrong column count": (post_block("1", ["1\ta\tO\tO", "2\tb\tO"]), 6, "expected 4 tab-separated columns"),
    "unknown label": (post_block("1", ["1\ta\tB-Slogans\tO"]), 5, "unknown label 'Slogans'"),
    "I without B": (
        post_block("1", ["1\ta\tO\tO", f"2\tb\tI-{SL}\tO"]),
        6,
        f"I-{SL} in label column 1 continues no open",
    ),
    "gap inside span": (
        post_block("1", [f"1\ta\tB-{SL}\tO", "2\tb\tO\tO", f"3\tc\tI-{SL}\tO"]),
        7,
        "continues no open",
    ),
    "non-consecutive ids": (post_block("1", ["1\ta\tO\tO", "3\tb\tO\tO"]), 6, "token index '3' where 2 was expected"),
    "duplicate post id": (
        post_block("1", ["1\ta\tO\tO"]) + "\n" + post_block("1", ["1\ta\tO\tO"]),
        7,
        "duplicate post id '1'",
    ),
    "missing header": (
        "# post_id = 1\n# post_topic_keywords = x\n# post_text = t\n1\ta\tO\tO\n",
        2,
        "'# post_date = ...'",
    ),
    "malformed tag": (post_block("1", ["1\ta\tX-Slogan\tO"]), 5, "malformed tag 'X-Slogan'"),
    "same label twice": (post_block("1", [f"1\ta\tB-{SL}|B-{SL}\tO"]), 5, "tagged twice"),
    "mixed empty cells": (post_block("1", ["1\ta\t\tO"]), 5, "some label cells are empty"),
    "no tokens": (
        "# post_id = 1\n# post_date = d\n# post_topic_keywords = t\n# post_text = x\n\n",
        1,
        "has no token lines",
    ),
    "mixed grains": (post_block("1", [f"1\ta\tB-{SL}\tB-Distraction"]), 5, "mixes fine labels and coarse"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_conll_input_names_file_line_and_fix(write_file, case):
    text, line, message = BAD_CASES[case]
    path = write_file("bad.conll", text)
    with pytest.raises(UserError) as info:
        read_conll(path)
    err = info.value
    assert message in err.message
    assert err.path == str(path) and err.line == line and err.fix
    assert str(err).startswith(f"{path}:{line}: ")


def test_repair_turns_orphan_inside_into_begin_and_reports_it(write_file):
    path = write_file("r.conll", post_block("1", ["1\ta\tO\tO", f"2\tb\tI-{SL}\tO", f"3\tc\tI-{SL}\tO"]))
    corpus = read_conll(path, repair=True)
    assert corpus.posts[0].spans[0] == (Span(2, 3, SL),)
    assert len(corpus.repairs) == 1 and f"{path}:6:" in corpus.repairs[0] and f"B-{SL}" in corpus.repairs[0]


@pytest.mark.parametrize(
    "content, message, line",
    [
        (b"", "the file is empty", None),
        (b"# post_id = 1\n# post_date = d\n# post_topic_keywords = t\n# post_text = caf\xe9\n", "not UTF-8", 4),
        (b"# post_id = 1\r\n", "Windows .CRLF. line endings", 1),
    ],
)
def test_file_level_errors(write_file, content, message, line):
    path = write_file("f.conll", content)
    with pytest.raises(UserError, match=message) as info:
        read_conll(path)
    assert info.value.line == line and info.value.fix


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="file not found"):
        read_conll(tmp_path / "nope.conll")


def test_misaligned_gold_and_prediction(write_file):
    gold = read_conll(write_file("g.conll", GOOD))
    swapped = GOOD.split("\n\n")
    pred = read_conll(write_file("p.conll", swapped[1] + "\n\n" + swapped[0] + "\n"))
    with pytest.raises(UserError, match="post '659' where the gold file has '658'"):
        check_aligned(gold, pred)
    fewer = read_conll(write_file("f.conll", swapped[0] + "\n"))
    with pytest.raises(UserError, match="1 posts, but the gold file"):
        check_aligned(gold, fewer)
    short = read_conll(write_file("s.conll", swapped[0].rsplit("\n", 1)[0] + "\n\n" + swapped[1]))
    with pytest.raises(UserError, match="has 3 tokens, the gold file 4"):
        check_aligned(gold, short)


TSV_HEAD = "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2\n"


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("id\tdate\ttopic\ttext\ta\tb\n1\td\tt\tx\t\t\n", 1, "the header line"),
        (TSV_HEAD + "1\td\tt\tx\t\n", 2, "expected 6 tab-separated columns"),
        (TSV_HEAD + "1\td\tt\tx\tSlogn\t\n", 2, "unknown label 'Slogn'"),
        (TSV_HEAD + "1\td\tt\tx\t\t\n1\td\tt\tx\t\t\n", 3, "duplicate post id"),
        (TSV_HEAD + f"1\td\tt\tx\t{SL}|\t\n", 2, "empty label"),
        (TSV_HEAD + f"1\td\tt\tx\t{SL}|{SL}\t\n", 2, "repeats"),
        (TSV_HEAD, 1, "no posts"),
    ],
)
def test_bad_tsv_input(write_file, text, line, message):
    with pytest.raises(UserError, match=message) as info:
        read_post_tsv(write_file("bad.tsv", text))
    assert info.value.line == line and info.value.fix


def test_misaligned_tsv(write_file):
    gold = read_post_tsv(write_file("g.tsv", TSV_HEAD + "1\td\tt\tx\t\t\n2\td\tt\tx\t\t\n"))
    pred = read_post_tsv(write_file("p.tsv", TSV_HEAD + "2\td\tt\tx\t\t\n1\td\tt\tx\t\t\n"))
    with pytest.raises(UserError, match="post '2' where the gold file has '1'"):
        check_rows_aligned(gold, pred)


# --- derived views -----------------------------------------------------------------------------------
def test_coarse_spans_merge_overlaps_of_a_category_only():
    spans = [Span(1, 3, "Loaded-language"), Span(2, 5, "Slogan"), Span(6, 7, "Doubt"), Span(1, 2, VA)]
    coarse = coarse_spans(spans, INV)
    # Loaded-language and Slogan overlap (both Distraction) -> merged 1-5; Doubt at 6-7 only touches -> kept
    assert Span(1, 5, "Distraction") in coarse and Span(6, 7, "Distraction") in coarse
    # Vagueness has two macro-categories
    assert Span(1, 2, "Insufficient-proof") in coarse and Span(1, 2, "Simplification") in coarse
    assert len(coarse) == 4


def test_coarse_labels_and_taxonomy():
    assert coarse_labels(["Cherry-picking"], INV) == ("Distraction", "Simplification")
    assert coarse_labels([], INV) == ()
    assert INV.soft_weight("Red-herring", "Ad-hominem") == 0.5  # direct parent
    assert INV.soft_weight("Ad-hominem", "Red-herring") == 0.0  # child
    assert INV.soft_weight("Red-herring", "Doubt") == 0.0  # grandparent
    assert INV.soft_weight("Strawman", "Ad-hominem") == 0.0  # sibling


# --- property-based round trips ------------------------------------------------------------------------
LABELS = list(INV.fine)
token = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\t\n\r"),
    min_size=1,
    max_size=8,
)


@st.composite
def posts(draw, num_views: int, index: int):
    n = draw(st.integers(1, 12))
    views = []
    for _ in range(num_views):
        spans = []
        for label in draw(st.lists(st.sampled_from(LABELS), max_size=4, unique=True)):
            position = 1
            while position <= n and draw(st.booleans()):
                first = draw(st.integers(position, n))
                last = draw(st.integers(first, n))
                spans.append(Span(first, last, label))
                position = last + 1
        views.append(spans)
    text = draw(
        st.text(alphabet=st.characters(blacklist_characters="\n\r\t\x00", blacklist_categories=("Cs",)), max_size=20)
    )
    post = Post(
        str(index),
        "2020-05",
        draw(st.sampled_from(["migration", "climate change", "public health"])),
        text,
        tuple(draw(st.lists(token, min_size=n, max_size=n))),
        None,
    )
    return post.with_spans(views)


@st.composite
def corpora(draw):
    num_views = draw(st.integers(1, 3))
    count = draw(st.integers(1, 5))
    return SpanCorpus(
        tuple(draw(posts(num_views, i)) for i in range(count)), num_views, trailing_blank_line=draw(st.booleans())
    )


@settings(max_examples=40, deadline=None)
@given(corpus=corpora())
def test_conll_property_round_trip(tmp_path_factory, corpus):
    path = tmp_path_factory.mktemp("rt") / "c.conll"
    path.write_text(format_conll(corpus), encoding="utf-8")
    back = read_conll(path)
    assert back.posts == corpus.posts and back.num_views == corpus.num_views
    assert format_conll(back) == path.read_text(encoding="utf-8")


@settings(max_examples=40, deadline=None)
@given(corpus=corpora())
def test_tsv_property_round_trip(tmp_path_factory, corpus):
    rows = post_corpus_from_spans(corpus)
    path = tmp_path_factory.mktemp("rt") / "p.tsv"
    path.write_text(format_post_tsv(rows), encoding="utf-8")
    back = read_post_tsv(path)
    assert [r.labels for r in back.rows] == [r.labels for r in rows.rows]
    assert format_post_tsv(back) == path.read_text(encoding="utf-8")

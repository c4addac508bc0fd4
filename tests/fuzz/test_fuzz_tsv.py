"""Fuzzing the post-level TSV reader (``faina.formats.tsv.read_post_tsv``, also FadeIT 2026's ``train-dev.tsv`` /
``test.tsv`` with their header line): valid files round-trip byte for byte, spoiled ones end in one
``UserError`` or, when still valid, read back to the same bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from faina.formats.tsv import format_post_tsv, read_post_tsv
from fuzz.faina_files import tsv_files
from fuzz.format_checks import check_round_trip, check_spoiled_bytes, check_structural
from fuzz.support import BOM, fuzz_settings, outcome, scratch_file, tried
from strategies import INVENTORY

READER = "faina.formats.tsv.read_post_tsv"


def read(data: bytes):
    tried(READER)
    return outcome(lambda: read_post_tsv(scratch_file("fuzz.tsv", data), INVENTORY))


def assert_lossless(corpus, text: str) -> None:
    """An accepted file is written back with every line it had (a final newline aside)."""
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[-1] == "":
        lines.pop()
    assert format_post_tsv(corpus).split("\n")[:-1] == lines


@fuzz_settings(520)
@given(tsv_files())
def test_valid_files_round_trip_byte_for_byte(drawn):
    check_round_trip(read, format_post_tsv, drawn)


@fuzz_settings(200)
@given(tsv_files(), st.data())
def test_spoiled_bytes_end_in_one_user_error(drawn, data):
    check_spoiled_bytes(read, data, drawn, assert_lossless)


BAD_CELLS = ("{}|", "|{}", "{}||{}", "{}|{}", " {}", "{} ", "{}x", "B-{}", "O")
BAD_HEADERS = (
    "post_id\tpost_date\tpost_topic_keywords\tpost_text",
    "id\tdate\ttopic\ttext\tlabels_a1",
    "post_id\tpost_date\tpost_topic_keywords\tpost_text\tannotator1",
    "",
    "\ufeffpost_id",
    "post_id post_date post_topic_keywords post_text labels_a1",
)


@st.composite
def structurally_spoiled(draw, drawn) -> tuple[str, str]:
    """``(expect, spoiled text)``: ``error`` must fail, ``either`` may read (then to the same bytes)."""
    text, rows, num_views = drawn
    lines = text.split("\n")[:-1]
    at = draw(st.integers(1, len(lines) - 1))
    parts = lines[at].split("\t")
    kind = draw(
        st.sampled_from(("columns", "cell", "duplicate", "header", "no-rows", "blank-line", "huge-text", "grain"))
    )
    expect = "error"
    if kind == "columns":
        parts = parts + [draw(st.sampled_from(("", "x")))] if draw(st.booleans()) else parts[:-1]
        lines[at] = "\t".join(parts)
    elif kind == "cell":
        label = draw(st.sampled_from(INVENTORY.fine))
        parts[4 + draw(st.integers(0, num_views - 1))] = draw(st.sampled_from(BAD_CELLS)).format(label, label)
        lines[at] = "\t".join(parts)
    elif kind == "duplicate" and len(rows) > 1:
        other = 1 if at != 1 else 2
        lines[at] = "\t".join([lines[other].split("\t")[0], *parts[1:]])
    elif kind == "header":
        lines[0] = draw(st.sampled_from(BAD_HEADERS))
    elif kind == "no-rows":
        lines = lines[:1]
    elif kind == "blank-line":
        lines.insert(draw(st.integers(1, len(lines))), "")
    elif kind == "huge-text":
        parts[3] = "é" * 20_000
        lines[at] = "\t".join(parts)
        expect = "either"
    elif kind == "grain":
        parts[4] = draw(st.sampled_from(INVENTORY.coarse + INVENTORY.fine))
        lines[at] = "\t".join(parts)
        expect = "either"
    else:
        expect = "either"
    return expect, "\n".join(lines) + "\n"


@fuzz_settings(260)
@given(tsv_files(), st.data())
def test_structural_corruptions_end_in_one_user_error(drawn, data):
    check_structural(read, data, drawn, structurally_spoiled, assert_lossless)


def test_a_bom_alone_is_an_empty_file():
    corpus, err = read(BOM)
    assert corpus is None and err is not None

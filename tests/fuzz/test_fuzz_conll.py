"""Fuzzing the span-level CoNLL reader (``faina.formats.conll.read_conll``): valid files round-trip byte for byte,
spoiled ones end in one ``UserError`` or, when the spoiling left a valid file, read without losing a line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from faina.formats.conll import format_conll, read_conll
from fuzz.faina_files import conll_files
from fuzz.format_checks import check_round_trip, check_spoiled_bytes, check_structural
from fuzz.support import BOM, fuzz_settings, outcome, scratch_file, tried
from strategies import INVENTORY

READER = "faina.formats.conll.read_conll"


def read(data: bytes, name: str = "fuzz.conll"):
    tried(READER)
    return outcome(lambda: read_conll(scratch_file(name, data), INVENTORY))


def content_lines(text: str) -> list[str]:
    """The lines that carry data (headers and tokens): what a reader must never drop."""
    return [line for line in text.removeprefix("\ufeff").split("\n") if line != ""]


def assert_lossless(corpus, text: str) -> None:
    """An accepted file is written back with every header and token line (tag order aside, which warns)."""
    unordered = {int(w.split(":")[-2]) for w in corpus.warnings}
    written = content_lines(format_conll(corpus))
    original = content_lines(text)
    assert len(written) == len(original)
    if not unordered:
        assert written == original


@fuzz_settings(390)
@given(conll_files())
def test_valid_files_round_trip_byte_for_byte(drawn):
    check_round_trip(read, format_conll, drawn)


@fuzz_settings(200)
@given(conll_files(), st.data())
def test_spoiled_bytes_end_in_one_user_error(drawn, data):
    check_spoiled_bytes(read, data, drawn, assert_lossless)


def token_line_numbers(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line and not line.startswith("# ")]


BAD_INDICES = ("0", "-1", "1.0", "+1", " 1", "1 ", "nan", "inf", "NaN", "١", "9" * 40, "")
BAD_TAGS = ("X-{}", "B-", "B", "b-{}", "B-{}|", "|B-{}", "B-{}|B-{}", "B-{} ", "O|B-{}", "o", "-", "B_{}")


@st.composite
def structurally_spoiled(draw, drawn) -> tuple[str, str]:
    """``(expect, spoiled text)`` of a drawn file: ``error`` must fail, ``same`` reads the same posts, ``either``
    may read (then without losing a line)."""
    text, posts, num_views = drawn
    lines = text.split("\n")
    tokens = token_line_numbers(lines)
    at = draw(st.sampled_from(tokens))
    parts = lines[at].split("\t")
    labelled = posts[0].spans is not None
    kind = draw(
        st.sampled_from(
            (
                "columns",
                "index",
                "tag",
                "unknown",
                "duplicate",
                "header",
                "mix",
                "blank",
                "huge-token",
                "i-first",
                "grain",
            )
        )
    )
    expect = "error"
    if kind == "columns":
        if draw(st.booleans()) or len(parts) == 3:
            parts.append("O" if labelled else "")
        else:
            parts.pop()
        lines[at] = "\t".join(parts)
        expect = "error" if len(tokens) > 1 else "either"  # the one token line of a file sets its views
    elif kind == "index":
        parts[0] = draw(st.sampled_from(BAD_INDICES))
        lines[at] = "\t".join(parts)
    elif kind == "tag" and labelled:
        label = draw(st.sampled_from(INVENTORY.fine))
        parts[2 + draw(st.integers(0, num_views - 1))] = draw(st.sampled_from(BAD_TAGS)).format(label, label)
        lines[at] = "\t".join(parts)
    elif kind == "unknown" and labelled:
        label = (
            draw(st.sampled_from(INVENTORY.fine)) + draw(st.sampled_from(("x", "-", " ", "é")))
            if draw(st.booleans())
            else draw(st.sampled_from(INVENTORY.fine)).lower()
        )
        parts[2] = f"B-{label}"
        lines[at] = "\t".join(parts)
    elif kind == "duplicate" and len(posts) > 1:
        headers = [i for i, line in enumerate(lines) if line.startswith("# post_id = ")]
        lines[headers[-1]] = f"# post_id = {posts[0].post_id}"
    elif kind == "header":
        headers = [i for i, line in enumerate(lines) if line.startswith("# post_")]
        victim = draw(st.sampled_from(headers))
        if draw(st.booleans()):
            del lines[victim]
        else:
            lines[victim] = lines[victim].replace(" = ", "=", 1)
    elif kind == "mix":
        parts[2 + draw(st.integers(0, num_views - 1))] = "" if labelled else "O"
        lines[at] = "\t".join(parts)
        if num_views == 1 and len(tokens) == 1:
            # the one cell of the file flipped: a labelled file of one token became an unlabelled one, or back
            expect = "either"
    elif kind == "blank":
        where = draw(st.sampled_from([i for i, line in enumerate(lines) if line == ""] + [0]))
        lines[where:where] = [""] * draw(st.integers(1, 3))
        expect = "same"
    elif kind == "huge-token":
        parts[1] = "x" * 20_000
        lines[at] = "\t".join(parts)
        expect = "either"
    elif kind == "i-first" and labelled:
        first = lines.index("# post_text = " + posts[0].text) + 1
        label = draw(st.sampled_from(INVENTORY.fine))
        first_parts = lines[first].split("\t")
        first_parts[2] = f"I-{label}"
        lines[first] = "\t".join(first_parts)
    elif kind == "grain" and labelled:
        parts[2] = "B-" + draw(st.sampled_from(INVENTORY.coarse + INVENTORY.fine))
        lines[at] = "\t".join(parts)
        expect = "either"
    else:
        expect = "same"
    return expect, "\n".join(lines)


@fuzz_settings(320)
@given(conll_files(), st.data())
def test_structural_corruptions_end_in_one_user_error(drawn, data):
    check_structural(read, data, drawn, structurally_spoiled, assert_lossless)


def test_a_bom_alone_is_an_empty_file():
    corpus, err = read(BOM + b"\n")
    assert corpus is None and "empty" in str(err)

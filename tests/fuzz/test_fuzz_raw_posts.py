"""Fuzzing the raw-post reader of ``faina.tag`` (``read_posts``: ``.txt``, one post per line, or ``.jsonl``):
valid files read to exactly their posts, spoiled ones end in one ``UserError``, never in a short list."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from faina.tag import read_posts
from fuzz.faina_files import TOKEN_ALPHABET
from fuzz.support import MUST_FAIL, fuzz_settings, json_junk, nested_junk, outcome, scratch_file, spoiled_bytes, tried

READER = "faina.tag.read_posts"
# a post is any text with something besides whitespace; in a .txt file it cannot hold a line break
# (a .txt file's first post cannot start with U+FEFF: that is the byte-order mark, which readers drop)
line_texts = (
    st.text(st.sampled_from(TOKEN_ALPHABET + "\t"), min_size=1, max_size=20)
    .filter(str.strip)
    .filter(lambda text: not text.startswith("\ufeff"))
)
json_texts = st.text(st.sampled_from(TOKEN_ALPHABET + '\t\n\r"\\\x00'), min_size=1, max_size=20).filter(str.strip)


def read(data: bytes, suffix: str):
    tried(READER)
    return outcome(lambda: read_posts(scratch_file(f"posts{suffix}", data)))


@st.composite
def txt_files(draw) -> tuple[str, list[str]]:
    posts = draw(st.lists(line_texts, min_size=1, max_size=8))
    blanks = draw(st.lists(st.sampled_from(("", " ", "\t")), max_size=3))
    lines = posts + blanks
    order = draw(st.permutations(range(len(lines))))
    text = "\n".join(lines[i] for i in order) + draw(st.sampled_from(("", "\n")))
    return text, [lines[i] for i in order if i < len(posts)]


@st.composite
def jsonl_files(draw) -> tuple[str, list[str]]:
    posts = draw(st.lists(json_texts, min_size=1, max_size=8))
    lines = [
        json.dumps(
            {"text": p, **draw(st.sampled_from(({}, {"id": 1})))} if draw(st.booleans()) else p,
            ensure_ascii=draw(st.booleans()),
        )
        for p in posts
    ]
    return "\n".join(lines) + "\n", posts


@fuzz_settings(460)
@given(st.one_of(txt_files().map(lambda d: (".txt", *d)), jsonl_files().map(lambda d: (".jsonl", *d))))
def test_valid_files_read_to_their_posts(drawn):
    suffix, text, posts = drawn
    result, err = read(text.encode("utf-8"), suffix)
    assert err is None, err
    assert result == posts


@fuzz_settings(200)
@given(st.one_of(txt_files().map(lambda d: (".txt", *d)), jsonl_files().map(lambda d: (".jsonl", *d))), st.data())
def test_spoiled_bytes_end_in_one_user_error(drawn, data):
    suffix, text, posts = drawn
    for _ in range(4):
        kind, spoiled = data.draw(spoiled_bytes(text.encode("utf-8")))
        result, err = read(spoiled, suffix)
        if kind in MUST_FAIL:
            assert err is not None, kind
        elif kind == "bom":
            assert err is None and result == posts
        elif result is not None:
            lines = [line for line in spoiled.decode("utf-8").removeprefix("\ufeff").split("\n") if line.strip()]
            assert len(result) == len(lines)


JUNK_LINES = (
    "NaN",
    "Infinity",
    "-Infinity",
    "null",
    "true",
    "1e999",
    "[]",
    "{}",
    '{"text": null}',
    '{"text": 5}',
    '{"text": ["a"]}',
    '{"Text": "a"}',
    '"   "',
    '{"text": ""}',
    "{",
    '"a',
    "'a'",
    '{"text": "a",}',
    nested_junk(20_000),
    nested_junk(1_500),
    '{"text": ' * 3000,
)


@fuzz_settings(200)
@given(jsonl_files(), st.data())
def test_junk_json_lines_end_in_one_user_error(drawn, data):
    text, posts = drawn
    lines = text.split("\n")[:-1]
    for _ in range(4):
        junk = data.draw(st.sampled_from(JUNK_LINES) | json_junk().map(json.dumps))
        at = data.draw(st.integers(0, len(lines)))
        spoiled = "\n".join(lines[:at] + [junk] + lines[at:]) + "\n"
        result, err = read(spoiled.encode("utf-8"), ".jsonl")
        if result is not None:  # only a JSON string with text is a post; then it must be read as one
            value = json.loads(junk)
            assert isinstance(value, str) and value.strip() and len(result) == len(posts) + 1


def test_other_extensions_are_refused():
    result, err = read(b"a post\n", ".csv")
    assert result is None and ".csv" in str(err)

"""Fuzzing the Missci JSONL reader (``missci.dataset.reader.read_arguments``): valid files read to exactly the drawn
arguments; wrong types, missing keys, junk values, broken bytes and duplicate ids end in one ``UserError``;
a spoiled file that is still valid reads every line, with every known field exactly as written."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuzz.missci_files import expected_argument, json_paths, missci_files, replaced
from fuzz.support import MUST_FAIL, fuzz_settings, json_junk, nested_junk, outcome, scratch_file, spoiled_bytes, tried
from missci.dataset.reader import read_arguments

READER = "missci.dataset.reader.read_arguments"


def read(data: bytes):
    tried(READER)
    return outcome(lambda: read_arguments(scratch_file("fuzz.missci.jsonl", data)))


def encode(objects, ensure_ascii: bool = False) -> bytes:
    return "".join(json.dumps(obj, ensure_ascii=ensure_ascii) + "\n" for obj in objects).encode("utf-8")


def assert_every_line_read(arguments, data: bytes) -> None:
    lines = [line for line in data.decode("utf-8-sig").split("\n") if line.strip()]
    assert len(arguments) == len(lines)
    assert arguments == [expected_argument(json.loads(line)) for line in lines]


@fuzz_settings(260)
@given(missci_files(), st.booleans())
def test_valid_files_read_to_their_arguments(objects, ensure_ascii):
    arguments, err = read(encode(objects, ensure_ascii))
    assert err is None, err
    assert arguments == [expected_argument(obj) for obj in objects]


@fuzz_settings(200)
@given(missci_files(), st.data())
def test_spoiled_bytes_end_in_one_user_error(objects, data):
    for _ in range(4):
        kind, spoiled = data.draw(spoiled_bytes(encode(objects)))
        arguments, err = read(spoiled)
        if kind in MUST_FAIL - {"crlf"}:
            assert err is not None, kind
        elif kind in ("bom", "crlf"):  # harmless: every argument is read
            assert err is None, err
            assert arguments == [expected_argument(obj) for obj in objects]
        elif arguments is not None:
            assert_every_line_read(arguments, spoiled)


@fuzz_settings(260)
@given(missci_files(), st.data())
def test_wrong_values_end_in_one_user_error(objects, data):
    """A value replaced by junk or a key deleted: an error, or (when still valid) every field as written."""
    for _ in range(4):
        victim = data.draw(st.integers(0, len(objects) - 1))
        path = data.draw(st.sampled_from(json_paths(objects[victim])))
        delete = data.draw(st.booleans())
        junk = None if delete else data.draw(json_junk())
        spoiled = list(objects)
        spoiled[victim] = replaced(objects[victim], path, junk, delete)
        raw = encode(spoiled)
        arguments, err = read(raw)
        if arguments is not None:
            try:
                assert_every_line_read(arguments, raw)
            except (KeyError, TypeError, AttributeError):  # the projection itself met the junk
                raise AssertionError(f"accepted a line whose {path} is {junk!r} (deleted: {delete})") from None


@fuzz_settings(100)
@given(missci_files(), st.data())
def test_duplicate_ids_and_junk_lines_end_in_one_user_error(objects, data):
    lines = encode(objects).decode("utf-8").split("\n")[:-1]
    for _ in range(4):
        kind = data.draw(st.sampled_from(("argument-id", "fallacy-id", "junk", "nested", "twice-key")))
        if kind == "argument-id":
            extra = json.dumps(objects[0])
        elif kind == "fallacy-id":
            other = dict(objects[-1], id=objects[-1]["id"] + "-copy")
            extra = json.dumps(other)
        elif kind == "junk":
            extra = json.dumps(data.draw(json_junk()))
        elif kind == "nested":
            extra = nested_junk(data.draw(st.sampled_from((2_000, 20_000))))
        else:
            extra = json.dumps(objects[0])[:-1] + ', "id": "again"}'
        at = data.draw(st.integers(0, len(lines)))
        arguments, err = read(("\n".join(lines[:at] + [extra] + lines[at:]) + "\n").encode("utf-8"))
        assert err is not None, kind

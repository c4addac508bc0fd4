"""Fuzzing the Missci prediction-file reader (``missci.dataset.prediction_file.read_predictions``): files the writer
wrote read back and are written again byte for byte; junk values, missing keys, broken bytes and two lines
for one R_i end in one ``UserError``; whatever is accepted is written back with every field it had."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuzz.missci_files import ids, json_paths, replaced, texts
from fuzz.support import MUST_FAIL, fuzz_settings, json_junk, nested_junk, outcome, scratch_file, spoiled_bytes, tried
from missci.dataset.classes import CLASS_NAMES, OTHER
from missci.dataset.prediction_file import (
    FallacyPrediction,
    RankedPremise,
    read_predictions,
    write_predictions,
)

READER = "missci.dataset.prediction_file.read_predictions"
CLASSES = st.sampled_from((*CLASS_NAMES, OTHER))
extra_values = st.dictionaries(
    st.sampled_from(("seed", "model", "prompt")),
    st.integers() | texts | st.lists(st.integers(), max_size=2),
    max_size=2,
)


def read(data: bytes):
    tried(READER)
    return outcome(lambda: read_predictions(scratch_file("predictions.jsonl", data)))


def written(predictions) -> bytes:
    return write_predictions(scratch_file("written.jsonl", b""), predictions).read_bytes()


@st.composite
def prediction_lists(draw) -> list[FallacyPrediction]:
    fallacy_ids = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    return [
        FallacyPrediction(
            argument_id=fid.split(":")[0] or "arg",
            fallacy_id=fid,
            predictions=[RankedPremise(draw(CLASSES), draw(texts)) for _ in range(draw(st.integers(0, 3)))],
            raw_output=draw(st.none() | texts),
            unparsed_lines=draw(st.integers(0, 10**12)),
            reclassified=draw(st.none() | st.lists(CLASSES, max_size=3)),
            extra=draw(extra_values),
        )
        for fid in fallacy_ids
    ]


def canonical(line: str) -> str:
    return json.dumps(json.loads(line), sort_keys=True)


def assert_every_field_kept(predictions, data: bytes) -> None:
    lines = [line for line in data.decode("utf-8-sig").split("\n") if line.strip()]
    assert len(predictions) == len(lines)
    back = written(predictions).decode("utf-8").split("\n")[:-1]
    for original, again in zip(lines, back):
        obj = json.loads(original)
        if obj.get("unparsed_lines", 0) is None:  # null means 0, which the writer spells out
            obj["unparsed_lines"] = 0
        obj.setdefault("unparsed_lines", 0)
        assert json.dumps(obj, sort_keys=True) == canonical(again)


@fuzz_settings(390)
@given(prediction_lists())
def test_written_files_round_trip_byte_for_byte(predictions):
    data = written(predictions)
    result, err = read(data)
    assert err is None, err
    assert result == predictions
    assert written(result) == data


@fuzz_settings(160)
@given(prediction_lists(), st.data())
def test_spoiled_bytes_end_in_one_user_error(predictions, data):
    for _ in range(4):
        kind, spoiled = data.draw(spoiled_bytes(written(predictions)))
        result, err = read(spoiled)
        if kind in MUST_FAIL - {"crlf", "empty", "blank"}:
            assert err is not None, kind
        elif kind in ("bom", "crlf"):
            assert err is None and result == predictions
        elif kind in ("empty", "blank"):  # a run that predicted nothing; evaluation then says no R_i matches
            assert result == []
        elif result is not None:
            assert_every_field_kept(result, spoiled)


@fuzz_settings(260)
@given(prediction_lists(), st.data())
def test_wrong_values_end_in_one_user_error(predictions, data):
    objects = [json.loads(line) for line in written(predictions).decode("utf-8").split("\n")[:-1]]
    for _ in range(4):
        victim = data.draw(st.integers(0, len(objects) - 1))
        path = data.draw(st.sampled_from(json_paths(objects[victim])))
        delete = data.draw(st.booleans())
        spoiled = list(objects)
        spoiled[victim] = replaced(objects[victim], path, None if delete else data.draw(json_junk()), delete)
        raw = "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in spoiled).encode("utf-8")
        result, err = read(raw)
        if result is not None:
            assert_every_field_kept(result, raw)


@fuzz_settings(100)
@given(prediction_lists(), st.data())
def test_duplicates_and_junk_lines_end_in_one_user_error(predictions, data):
    lines = written(predictions).decode("utf-8").split("\n")[:-1]
    for _ in range(4):
        kind = data.draw(st.sampled_from(("same-fallacy", "junk", "nested", "twice-key")))
        if kind == "same-fallacy":
            extra = lines[data.draw(st.integers(0, len(lines) - 1))]
        elif kind == "junk":
            extra = json.dumps(data.draw(json_junk().filter(lambda v: not isinstance(v, dict))))
        elif kind == "nested":
            extra = nested_junk(data.draw(st.sampled_from((2_000, 20_000))))
        else:
            extra = lines[0][:-1] + ', "fallacy_id": "again"}'
        at = data.draw(st.integers(0, len(lines)))
        result, err = read(("\n".join(lines[:at] + [extra] + lines[at:]) + "\n").encode("utf-8"))
        assert err is not None, kind

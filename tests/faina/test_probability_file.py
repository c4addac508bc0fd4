"""The probability file's layout: a round trip (plain and gzip, chosen by the name), values to 4 significant digits, the fold
folder's file under either name, and one clear error per kind of bad line or bad file."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from common.errors import UserError
from faina.formats.probability_file import (
    FILE_NAME,
    FORMER_FILE_NAME,
    PostProbabilities,
    ProbabilityFile,
    probability_file_in,
    read_probabilities,
    write_probabilities,
)


def span_file() -> ProbabilityFile:
    values = np.array([[[0.1, 0.9, 0.85]], [[0.0, 0.5, 1.0]]])  # 2 views, 1 label, 3 tokens
    return ProbabilityFile("span", ("a1", "a2"), ("Doubt",), (PostProbabilities("p1", values, ("Ma", "che", "dici")),))


def test_round_trip_at_both_levels(tmp_path):
    path = write_probabilities(span_file(), tmp_path / "probabilities.jsonl")
    line = json.loads(path.read_text().splitlines()[0])
    # token k of the file is element k - 1 of each list
    assert line == {
        "post_id": "p1",
        "tokens": ["Ma", "che", "dici"],
        "probabilities": {"a1": {"Doubt": [0.1, 0.9, 0.85]}, "a2": {"Doubt": [0.0, 0.5, 1.0]}},
    }
    back = read_probabilities(path)
    assert (
        back.level == "span"
        and back.views == ("a1", "a2")
        and np.allclose(back.posts[0].values, span_file().posts[0].values)
    )
    six = tuple(f"a{v}" for v in range(1, 7))  # any number of views
    posts = ProbabilityFile("post", six, ("A", "B"), (PostProbabilities("7", np.full((6, 2), 1 / 3)),))
    back = read_probabilities(write_probabilities(posts, tmp_path / "posts.jsonl"))
    assert back.level == "post" and back.views == six and back.posts[0].values.shape == (6, 2)
    assert back.posts[0].values[0, 0] == 0.3333  # 4 significant digits


def test_a_near_certain_value_keeps_four_significant_digits_of_its_distance_to_0_or_1(tmp_path):
    values = np.array([[0.123456, 3.2174e-06, 1 - 3.2174e-06, 0.0, 1.0, 0.5]])
    posts = ProbabilityFile("post", ("a1",), tuple("ABCDEF"), (PostProbabilities("7", values),))
    back = read_probabilities(write_probabilities(posts, tmp_path / "posts.jsonl")).posts[0].values[0]
    assert back.tolist() == [0.1235, 3.217e-06, 0.999996783, 0.0, 1.0, 0.5]
    # the log-loss of a labelled near-impossible token is its own, not the clamp's
    assert -np.log(back[1]) == pytest.approx(-np.log(values[0, 1]), rel=1e-3)


def test_a_gz_name_writes_and_reads_the_same_lines_compressed(tmp_path):
    plain = write_probabilities(span_file(), tmp_path / "probabilities.jsonl")
    packed = write_probabilities(span_file(), tmp_path / FILE_NAME)
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert write_probabilities(span_file(), tmp_path / "again.jsonl.gz").read_bytes() == packed.read_bytes()  # no mtime
    back = read_probabilities(packed)
    assert back.path == str(packed) and np.array_equal(back.posts[0].values, read_probabilities(plain).posts[0].values)


def test_a_fold_folder_is_read_under_todays_name_or_the_former_plain_one(tmp_path):
    assert probability_file_in(tmp_path) == tmp_path / FILE_NAME  # neither: today's name, for the error
    write_probabilities(span_file(), tmp_path / FORMER_FILE_NAME)
    assert probability_file_in(tmp_path) == tmp_path / FORMER_FILE_NAME
    write_probabilities(span_file(), tmp_path / FILE_NAME)
    assert probability_file_in(tmp_path) == tmp_path / FILE_NAME


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("cut.jsonl.gz", None, "not a complete gzip file"),
        ("plain.jsonl.gz", b'{"post_id": "p0"}\n', "not a complete gzip file"),
        ("packed.jsonl", gzip.compress(b'{"post_id": "p0"}\n', mtime=0), "not UTF-8 text"),
        ("missing.jsonl.gz", "absent", "cannot read the probability file"),
    ],
    ids=["cut", "plain-named-gz", "gzip-named-plain", "missing"],  # stable ids: xdist workers must collect alike
)
def test_a_bad_file_is_one_error_naming_it(tmp_path, name, content, message):
    path = tmp_path / name
    if content is None:  # a gzip file cut short
        content = write_probabilities(span_file(), tmp_path / "whole.jsonl.gz").read_bytes()[:-20]
    if content != "absent":
        path.write_bytes(content)
    with pytest.raises(UserError, match=message) as err:
        read_probabilities(path)
    assert name in str(err.value)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"post_id": "p1", "probabilities": {"a1": {"Doubt": 1.2}}}', "1.2 is not a probability"),
        (
            '{"post_id": "p1", "tokens": ["Ma"], "probabilities": {"a1": {"Doubt": [0.1, 0.2]}}}',
            "a list of 1 probabilities",
        ),
        ('{"post_id": "p1", "probabilities": {"a1": {"Doubt": 0.1}, "a2": {"Slogan": 0.1}}}', "lists other labels"),
        ('{"post_id": 3, "probabilities": {"a1": {"Doubt": 0.1}}}', 'string "post_id"'),
        ("not json", "not a JSON object"),
    ],
)
@pytest.mark.parametrize("name", ["bad.jsonl", "bad.jsonl.gz"])
def test_bad_lines_name_the_file_and_line(tmp_path, line, message, name):
    path = tmp_path / name
    text = '{"post_id": "p0", "probabilities": {"a1": {"Doubt": 0.5}}}\n' + line + "\n"
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(UserError, match=message) as err:
        read_probabilities(path)
    assert f"{name}:2:" in str(err.value)


def test_lines_must_agree_with_the_first(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"post_id": "p0", "probabilities": {"a1": {"Doubt": 0.5}}}\n'
        '{"post_id": "p1", "probabilities": {"a1": {"Doubt": 0.5}, "a2": {"Doubt": 0.5}}}\n'
    )
    with pytest.raises(UserError, match="mixed.jsonl:2: this line's level, views or labels differ"):
        read_probabilities(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(UserError, match="no posts"):
        read_probabilities(tmp_path / "empty.jsonl")

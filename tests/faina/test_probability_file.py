"""The probabilities.jsonl layout: a round trip, and one clear error per kind of bad line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from common.errors import UserError
from faina.formats.probability_file import (
    PostProbabilities,
    ProbabilityFile,
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
    assert back.posts[0].values[0, 0] == pytest.approx(1 / 3, rel=1e-7)  # 8 significant digits


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
def test_bad_lines_name_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"post_id": "p0", "probabilities": {"a1": {"Doubt": 0.5}}}\n' + line + "\n")
    with pytest.raises(UserError, match=message) as err:
        read_probabilities(path)
    assert "bad.jsonl:2:" in str(err.value)


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

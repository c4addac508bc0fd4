"""scripts/benchmark_exact_scores.py: the prediction it scores is each view's next view, one short run prints the
row of the file it read with the tags seqeval reads (no timing is judged: it depends on the machine), and a file
it cannot read is one message."""

from __future__ import annotations

import pytest

from faina.formats.records import Span
from helpers.scripts import load_script


def benchmark_script():
    return load_script("benchmark_exact_scores")


class _Post:
    def __init__(self, *views):
        self.spans = views


class _Corpus:
    def __init__(self, *posts):
        self.posts = posts


def test_each_view_is_predicted_by_the_next_and_a_missing_view_by_no_spans():
    first, second = (Span(1, 2, "Doubt"),), (Span(3, 3, "Slogan"),)
    preds, golds = benchmark_script().views_against_the_next(_Corpus(_Post(first, second), _Post(second, None)))
    assert golds == [(first, second), (second, None)]
    assert preds == [[second, first], [(), second]]


def test_the_tags_read_are_those_of_the_cut_sequences_of_every_view():
    spans = ((Span(4, 5, "Doubt"),), (Span(5, 6, "Doubt"), Span(9, 9, "Slogan")))
    preds, golds = benchmark_script().views_against_the_next(_Corpus(_Post(*spans)))
    # view 1: Doubt over tokens 4-6 (3 tags, gold and predicted), Slogan 9-9 (1 each); view 2 the same pairs
    assert benchmark_script().tags_read(preds, golds, ["Doubt", "Slogan"], 2) == 2 * (2 * 3 + 2 * 1)


def test_a_short_run_prints_the_row_of_the_sample(capsys):
    benchmark_script().main(["--rounds", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "| file | posts | views | tags read | seconds (median) | exact F1 (avg) |",
        "|---|---|---|---|---|---|",
    ]
    name, posts, views, tags, _, f1 = (cell.strip() for cell in lines[2].strip("|").split("|"))
    assert (name, posts, views) == ("sample.conll", "300", "2")
    assert int(tags.replace(",", "")) > 0 and 0.0 < float(f1) < 1.0


def test_a_missing_corpus_is_one_message_naming_it(tmp_path, capsys):
    missing = tmp_path / "nowhere.conll"
    with pytest.raises(SystemExit) as exited:
        benchmark_script().main(["--corpus", str(missing), "--rounds", "1"])
    error = capsys.readouterr().err
    assert exited.value.code == 2 and error.startswith("error: ") and str(missing) in error
    assert "Traceback" not in error


def test_no_rounds_is_one_usage_message(capsys):
    with pytest.raises(SystemExit) as exited:
        benchmark_script().main(["--rounds", "0"])
    error = capsys.readouterr().err
    assert exited.value.code == 2 and "--rounds must be 1 or more (got 0)" in error and "Traceback" not in error

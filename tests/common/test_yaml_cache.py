"""``common.yaml_cache``: a cached parse equals a fresh one, and nothing but an exact text match is ever reused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.errors import UserError
from common.labels import LabelInventory
from common.yaml_cache import cache_dir, cached_parse

REPO = Path(__file__).resolve().parents[2]


class CountingParser:
    def __init__(self, value):
        self.value, self.calls = value, 0

    def __call__(self, text):
        self.calls += 1
        return self.value(text) if callable(self.value) else self.value


def test_second_call_reuses_the_stored_value(tmp_path):
    parse = CountingParser({"fine": {"A": "a"}, "n": [1, 2.5, None, True]})
    first = cached_parse("text", parse, str(tmp_path))
    second = cached_parse("text", parse, str(tmp_path))
    assert first == second == parse.value and parse.calls == 1


def test_other_text_is_parsed_again(tmp_path):
    parse = CountingParser(lambda text: {"text": text})
    assert cached_parse("one", parse, str(tmp_path)) == {"text": "one"}
    assert cached_parse("two", parse, str(tmp_path)) == {"text": "two"}
    assert parse.calls == 2


def test_an_entry_whose_text_differs_is_not_used(tmp_path):
    """Even an entry at the right file name (a crc32 collision, a hand edit) is used only for its own text."""
    parse = CountingParser({"value": "fresh"})
    cached_parse("text", parse, str(tmp_path))
    (entry,) = tmp_path.iterdir()
    stored = json.loads(entry.read_text())
    entry.write_text(json.dumps({**stored, "text": "other", "value": {"value": "stale"}}))
    assert cached_parse("text", parse, str(tmp_path)) == {"value": "fresh"}
    assert parse.calls == 2


@pytest.mark.parametrize("content", ["{not json", "[]", '{"format": 99, "text": "text", "value": 1}', ""])
def test_corrupt_or_foreign_entries_are_ignored(tmp_path, content):
    parse = CountingParser({"value": 1})
    cached_parse("text", parse, str(tmp_path))
    (entry,) = tmp_path.iterdir()
    entry.write_text(content)
    assert cached_parse("text", parse, str(tmp_path)) == {"value": 1}
    assert parse.calls == 2


@pytest.mark.parametrize("value", [{1: "int key"}, {"d": __import__("datetime").date(2020, 1, 2)}, float("nan")])
def test_values_json_would_change_are_not_stored(tmp_path, value):
    parse = CountingParser(value)
    cached_parse("text", parse, str(tmp_path))
    cached_parse("text", parse, str(tmp_path))
    assert parse.calls == 2 and list(tmp_path.iterdir()) == []


def test_a_value_that_contains_itself_is_not_stored(tmp_path):
    looped: list = []
    looped.append(looped)  # what PyYAML builds from `fine: &a [*a]`
    parse = CountingParser({"fine": looped})
    assert cached_parse("text", parse, str(tmp_path))["fine"] is looped
    assert list(tmp_path.iterdir()) == []


def test_off_switch_and_unwritable_folder(tmp_path, monkeypatch):
    assert cache_dir("off") is None
    monkeypatch.setenv("FALLACY_YAML_CACHE", "off")
    assert cache_dir() is None
    monkeypatch.setenv("FALLACY_YAML_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    blocker = tmp_path / "file"
    blocker.write_text("")
    parse = CountingParser({"x": 1})
    assert cached_parse("text", parse, str(blocker / "below")) == {"x": 1}  # cannot create: still parsed
    assert parse.calls == 1


def test_parse_errors_pass_through_and_are_not_stored(tmp_path):
    def broken(text):
        raise UserError("bad", path="f.yaml")

    with pytest.raises(UserError, match="bad"):
        cached_parse("text", broken, str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_label_inventory_from_the_cache_equals_a_fresh_parse(tmp_path, monkeypatch):
    from faina.formats.labels import DEFAULT_LABELS_FILE

    monkeypatch.setenv("FALLACY_YAML_CACHE", "off")
    fresh = LabelInventory.load(DEFAULT_LABELS_FILE)
    monkeypatch.setenv("FALLACY_YAML_CACHE", str(tmp_path))
    stored = LabelInventory.load(DEFAULT_LABELS_FILE)
    cached = LabelInventory.load(DEFAULT_LABELS_FILE)
    assert len(list(tmp_path.iterdir())) == 1
    assert fresh == stored == cached and fresh.parents == cached.parents and fresh.short_ids == cached.short_ids


def test_duplicate_keys_are_still_refused_with_a_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FALLACY_YAML_CACHE", str(tmp_path / "cache"))
    labels = tmp_path / "labels.yaml"
    labels.write_text("fine:\n  A: a\n  A: b\n")
    for _ in range(2):
        with pytest.raises(UserError, match="appears twice"):
            LabelInventory.load(labels)


def test_scoring_a_post_file_twice_imports_neither_yaml_the_second_time_nor_logging(tmp_path):
    """The reason for the cache: ``faina.evaluate``'s second run starts without PyYAML."""
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['faina.evaluate'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('faina.evaluate', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('YAML' if 'yaml' in sys.modules else 'NO-YAML', file=sys.stderr)\n"
        "print('LOGGING' if 'logging' in sys.modules else 'NO-LOGGING', file=sys.stderr)\n"
    )
    sample = REPO / "faina" / "sample_data" / "sample.tsv"
    env = {**os.environ, "FALLACY_YAML_CACHE": str(tmp_path)}
    args = [sys.executable, "-c", probe, "-T", "post-fine", "-G", str(sample), "-P", str(sample)]
    runs = [subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True) for _ in range(2)]
    assert [run.stderr.strip().splitlines()[-2] for run in runs] == ["YAML", "NO-YAML"], runs[1].stderr
    # nor does the scorer configure logging it never uses (exit_on_user_error(show_logs=False))
    assert all(run.stderr.strip().splitlines()[-1] == "NO-LOGGING" for run in runs), runs[0].stderr

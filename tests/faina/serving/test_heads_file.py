"""``heads.json`` of a multi-task fold is data: its folder names are plain names inside the fold folder, and anything
else is one message naming the file; ``--head`` on a single-task folder is refused, and outputs get one name per
head."""

from __future__ import annotations

import json

import pytest

from common.errors import UserError
from faina.serving.heads import HEADS_FILE, head_folders, head_output, heads_reading


def fold_with(tmp_path, heads, folders=("span_f", "post_f")):
    for folder in folders:
        (tmp_path / folder).mkdir()
    (tmp_path / HEADS_FILE).write_text(json.dumps({"target": "span_f", "heads": heads}), encoding="utf-8")
    return tmp_path


def test_every_head_or_the_chosen_one(tmp_path):
    fold = fold_with(tmp_path, {"span_f": {"folder": "span_f"}, "post_f": {"folder": "post_f"}})
    assert head_folders(fold) == [("span_f", fold / "span_f"), ("post_f", fold / "post_f")]
    assert head_folders(fold, "post_f") == [("post_f", fold / "post_f")]
    with pytest.raises(UserError, match="the model has no head 'x'.*use --head with one of: span_f, post_f"):
        head_folders(fold, "x")


def test_a_results_folder_names_the_heads_of_its_folds(tmp_path):
    (tmp_path / "fold0").mkdir()
    fold_with(tmp_path / "fold0", {"a": {"folder": "span_f"}})
    assert head_folders(tmp_path) == [("a", tmp_path)]


@pytest.mark.parametrize(
    "heads, message",
    [
        ({"a": {"folder": "../elsewhere"}}, "names the folder '../elsewhere', not a plain folder name"),
        ({"a": {"folder": "/etc"}}, "names the folder '/etc', not a plain folder name"),
        ({"a": {"folder": ".."}}, "not a plain folder name"),
        ({"a": {"folder": "sub\\\\dir"}}, "not a plain folder name"),
        ({"a": {"folder": 3}}, "names the folder 3"),
        ({"a": "span_f"}, "names the folder None"),
        ({"a": {"folder": "missing"}}, "head 'a': its folder missing is missing"),
        ({}, "lists no heads"),
    ],
)
def test_a_hostile_or_damaged_heads_file_is_one_message_naming_it(tmp_path, heads, message):
    fold = fold_with(tmp_path, heads)
    with pytest.raises(UserError) as caught:
        head_folders(fold)
    assert message in str(caught.value) and str(fold / HEADS_FILE) in str(caught.value)


def test_a_heads_file_that_is_not_json(tmp_path):
    (tmp_path / HEADS_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match="heads.json is not valid JSON"):
        head_folders(tmp_path)


def test_head_on_a_single_task_folder_is_refused(tmp_path):
    assert head_folders(tmp_path) == [(None, tmp_path)]
    with pytest.raises(UserError, match="holds a single-task model"):
        head_folders(tmp_path, "post_f")


def test_each_head_gets_its_own_output_name_only_when_there_are_several():
    assert head_output("out/p.tsv", "post_f", several=True) == "out/p.post_f.tsv"
    assert head_output("out/p.tsv", "post_f", several=False) == "out/p.tsv"
    assert head_output("out/p.tsv", None, several=True) == "out/p.tsv"


def test_the_heads_that_read_an_input_are_chosen_by_their_level(tmp_path):
    fold = fold_with(tmp_path, {"span_f": {"folder": "span_f"}, "post_f": {"folder": "post_f"}})
    (fold / "span_f" / "model.json").write_text(json.dumps({"level": "span"}), encoding="utf-8")
    (fold / "post_f" / "model.json").write_text(json.dumps({"level": "post"}), encoding="utf-8")
    heads = head_folders(fold)
    assert [name for name, _ in heads_reading(heads, "x.conll")] == ["span_f"]
    assert [name for name, _ in heads_reading(heads, "x.tsv")] == ["post_f"]
    assert [name for name, _ in heads_reading(heads, "x.json")] == ["span_f", "post_f"]  # the model says which it reads

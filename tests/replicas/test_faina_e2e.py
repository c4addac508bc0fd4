"""Faina end to end with the AlBERTo and UmBERTo replicas, through the stable surfaces only.

Per task and encoder: ``train.py`` (one short fold, the replica as ``encoder.name_or_path``, ``encoder.max_length=16``
so posts are cut into several windows), ``faina.export``, ``faina.predict`` on the export in a fresh process,
``faina.evaluate`` on its output, ``faina.tag`` on a long raw post; and the exported encoder tokenizer, reloaded
as a user would, gives the replica tokenizer's ids and word_ids. Two pairs run by default (a span and a post task,
one per tokenizer kind); the other six are ``slow``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replica_cli import assert_ran, run_cli, train_short_fold
from tests_paths import REPO

LONG_POST = (
    "Studio americano: la mutazione è pericolosa... l'Italia agli italiani! [USER] #vaccini 😭 "
    "i nostri nonni muoiono soli mentre la Commissione europea fa festa, e i governi parlano di sacrifici "
    "ma girano in jet privato: o stai con noi o stai con l'ONU, non ci sono alternative, 1.000 euro al mese "
    "e 3,5 milioni di persone lo sanno bene [URL]"
)
GRAIN = {"span-f": "span-fine", "span-c": "span-coarse", "post-f": "post-fine", "post-c": "post-coarse"}
DEFAULT = {("span-f", "alberto"), ("post-f", "umberto")}
PAIRS = [
    pytest.param(task, encoder, marks=() if (task, encoder) in DEFAULT else pytest.mark.slow, id=f"{task}-{encoder}")
    for task in ("span-f", "post-f", "span-c", "post-c")
    for encoder in ("alberto", "umberto")
]


def train_one_fold(root: Path, task: str, encoder: str, folder: Path) -> Path:
    overrides = (f"task={task}", f"encoder={encoder}", f"encoder.name_or_path={folder}", "encoder.max_length=16")
    return train_short_fold(root, f"replica-{task}-{encoder}", *overrides)


def check_exported_tokenizer(export: Path, replica: Path, words: list[str]) -> None:
    """The export's encoder/ tokenizer, loaded as a user would, tokenises like the replica's own tokenizer."""
    from transformers import AutoTokenizer

    from models.encoder_tokenizer import load_encoder_tokenizer

    exported = AutoTokenizer.from_pretrained(export / "encoder")
    original = load_encoder_tokenizer(str(replica))
    mine = exported(words, is_split_into_words=True, add_special_tokens=False)
    theirs = original(words, is_split_into_words=True, add_special_tokens=False)
    assert mine["input_ids"] == theirs["input_ids"] and mine.word_ids() == theirs.word_ids()
    assert sorted(set(mine.word_ids())) == list(range(len(words)))
    assert len(mine["input_ids"]) > 16  # the post needs several encoder windows


@pytest.mark.parametrize("task,encoder", PAIRS)
def test_train_export_predict_evaluate_tag(replicas, tmp_path, task, encoder):
    from faina.evaluate import main as evaluate_main
    from faina.export import main as export_main
    from faina.tag import main as tag_main

    fold = train_one_fold(tmp_path, task, encoder, replicas[encoder])
    export = export_main([str(fold), str(tmp_path / "export")])
    assert (export / "encoder" / "tokenizer.json").is_file()

    ext = "conll" if task.startswith("span") else "tsv"
    unlabelled = REPO / "faina" / "sample_data" / f"sample-unlabelled.{ext}"
    predicted = tmp_path / f"predictions.{ext}"
    result = run_cli("-m", "faina.predict", str(export), str(unlabelled), str(predicted))  # a fresh process
    assert_ran(result)
    scores = evaluate_main(
        ["-T", GRAIN[task], "-G", str(REPO / "faina" / "sample_data" / f"sample.{ext}"), "-P", str(predicted), "--json"]
    )
    assert set(scores["strict"]) == {"a1", "a2", "avg"} and 0.0 <= scores["strict"]["avg"]["f1"] <= 1.0
    held_out = evaluate_main(
        ["-T", GRAIN[task], "-G", str(fold / f"gold.{ext}"), "-P", str(fold / f"predictions.{ext}"), "--json"]
    )
    recorded = json.loads((fold / "metrics.json").read_text(encoding="utf-8"))["test"]["strict"]["avg"]
    assert held_out["strict"]["avg"] == pytest.approx(recorded)  # the fold's own scores, recomputed by the CLI

    [tagged] = tag_main([str(export), "--text", LONG_POST, "--json"])
    assert "".join(tagged["tokens"]) == LONG_POST.replace(" ", "")
    for span in tagged["spans"]:
        assert LONG_POST[span["start_char"] : span["end_char"]] == span["text"]
        assert 0 <= span["start_token"] < span["end_token"] <= len(tagged["tokens"])
    if task.startswith("post"):
        assert set(tagged["post_labels"]) == {"a1", "a2"} and tagged["spans"] == []
    check_exported_tokenizer(export, replicas[encoder], tagged["tokens"])

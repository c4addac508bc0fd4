"""The parity check's library (``faina.scoring.official_parity``, the command ``scripts/check_official_parity.py``):
which scorer a script is, and random file pairs that are valid Faina files the project's scorer reads."""

from __future__ import annotations

import random

import pytest

from common.errors import UserError
from faina.formats.conll import read_conll, write_conll
from faina.formats.tsv import read_post_tsv, write_post_tsv
from faina.scoring.official_parity import inventory, official_flavour, ours, random_post_pair, random_span_pair


def test_the_scorer_flavour_is_read_from_its_source_without_running_it(tmp_path):
    faina = tmp_path / "evaluate.py"
    faina.write_text("raise SystemExit('never run')\ndef compute_span_scores(p, g, n, m, one_pred, mode):\n  pass\n")
    fadeit = tmp_path / "eval.py"
    fadeit.write_text("def compute_span_scores(p, g, n, m, mode):\n  pass\n")
    assert official_flavour(faina) == "faina" and official_flavour(fadeit) == "fadeit"
    other = tmp_path / "other.py"
    other.write_text("def score():\n  pass\n")
    with pytest.raises(UserError, match="not the official scorer"):
        official_flavour(other)


@pytest.mark.parametrize("grain", ["fine", "coarse"])
@pytest.mark.parametrize("one_pred", [False, True])
def test_random_pairs_are_valid_files_the_scorer_reads(tmp_path, grain, one_pred):
    rng = random.Random(7)
    gold, pred = random_span_pair(rng, grain, one_pred)
    gold_path, pred_path = write_conll(gold, tmp_path / "g.conll"), write_conll(pred, tmp_path / "p.conll")
    assert read_conll(gold_path, inventory()).posts == gold.posts and len(pred.posts) == len(gold.posts)
    scores, _ = ours(f"span-{grain}", str(gold_path), str(pred_path), one_pred)
    assert set(scores["strict"]) == {"a1", "a2", "avg"}
    gold_rows, pred_rows = random_post_pair(rng, grain, one_pred)
    gold_tsv, pred_tsv = write_post_tsv(gold_rows, tmp_path / "g.tsv"), write_post_tsv(pred_rows, tmp_path / "p.tsv")
    assert read_post_tsv(gold_tsv, inventory()).rows == gold_rows.rows
    scores, _ = ours(f"post-{grain}", str(gold_tsv), str(pred_tsv), one_pred)
    assert 0.0 <= scores["strict"]["avg"]["f1"] <= 1.0
    # the same seed draws the same files, so a failing check can be rerun on them
    assert random_span_pair(random.Random(7), grain, one_pred) == random_span_pair(random.Random(7), grain, one_pred)

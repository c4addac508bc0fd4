"""Probabilities out and soft-label scores in, end to end: folds, faina.predict, ensembles, faina.tag, faina.evaluate.

The session's shared tiny span-f run (2 folds) and post-f run (1 fold, ``helpers.trained``) are read; every
way of predicting must write the one ``probabilities.jsonl`` layout (a fold's gzip-compressed), and the soft-label
scores of a fold's ``metrics.json`` must be what ``faina.evaluate --probabilities`` computes from the fold's files,
up to the file's rounding (the fold scores its unrounded values).
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from faina.evaluate import main as evaluate_main
from faina.formats.conll import read_conll
from faina.formats.probability_file import read_probabilities
from faina.formats.tsv import read_post_tsv
from faina.predict import main as predict_main
from faina.tag import main as tag_main


@pytest.fixture(scope="module")
def runs(trained_runs):
    return {"span": trained_runs.span, "post": trained_runs.post}


def test_every_fold_writes_probabilities_beside_its_predictions(runs):
    fold = runs["span"] / "fold0"
    probabilities = read_probabilities(fold / "probabilities.jsonl.gz")
    predicted = read_conll(fold / "predictions.conll")
    assert probabilities.level == "span" and probabilities.views == ("a1", "a2") and len(probabilities.labels) == 20
    assert [p.post_id for p in probabilities.posts] == [p.post_id for p in predicted.posts]
    for post, record in zip(probabilities.posts, predicted.posts):
        assert post.tokens == record.tokens and post.values.shape == (2, 20, len(record.tokens))
        assert ((post.values >= 0) & (post.values <= 1)).all()
    rows = read_probabilities(runs["post"] / "fold0" / "probabilities.jsonl.gz")
    assert rows.level == "post" and rows.posts[0].values.shape == (2, len(rows.labels)) == (2, 20)
    assert len(rows) == len(read_post_tsv(runs["post"] / "fold0" / "predictions.tsv").rows)


@pytest.mark.parametrize("level", ["span", "post"])
def test_fold_soft_scores_are_what_evaluate_soft_computes_from_the_fold_files(runs, level, capsys):
    fold = runs[level] / "fold0"
    metrics = json.loads((fold / "metrics.json").read_text())
    soft = metrics["probability_scores"]
    assert soft["prior_from"] == "train" and soft["level"] == level and soft["gold_views"] == 2
    for who in ("model", "prior", "oracle"):
        assert set(soft[who]) == {"cross_entropy", "manhattan", "ece"}
    assert soft["oracle"]["manhattan"] == 0.0 and soft["oracle"]["cross_entropy"] <= soft["model"]["cross_entropy"]
    assert set(soft["perspectivist"]["error_rate"]) == {"a1", "a2", "avg"}
    ext = "conll" if level == "span" else "tsv"
    task = "span-fine" if level == "span" else "post-fine"
    arguments = ["-T", task, "-G", str(fold / f"gold.{ext}"), "-P", str(fold / f"predictions.{ext}")]
    arguments += ["--probabilities", str(fold / "probabilities.jsonl.gz")]
    scores = evaluate_main([*arguments, "--json"])
    assert scores["strict"] == metrics["test"]["strict"]  # the hard scores do not move
    assert scores["probability_scores"]["prior_from"] == "gold"
    for measure in ("cross_entropy", "manhattan", "ece"):  # the file holds the probabilities to 4 significant digits
        assert scores["probability_scores"]["model"][measure] == pytest.approx(soft["model"][measure], abs=1e-4)
        assert scores["probability_scores"]["oracle"][measure] == pytest.approx(soft["oracle"][measure], abs=1e-6)
    assert scores["probability_scores"]["perspectivist"] == soft["perspectivist"]
    capsys.readouterr()
    evaluate_main(arguments)
    table = capsys.readouterr().out
    assert "[probability scores]" in table and "cross-entropy" in table and "[perspectivist] error rate" in table


def test_predict_writes_the_same_probabilities_as_the_fold_and_ensembles_write_theirs(runs, tmp_path):
    fold = runs["span"] / "fold0"
    out = tmp_path / "again.jsonl"
    predict_main([str(fold), str(fold / "gold.conll"), str(tmp_path / "again.conll"), "--probabilities", str(out)])
    again, original = read_probabilities(out), read_probabilities(fold / "probabilities.jsonl.gz")
    assert [p.post_id for p in again.posts] == [p.post_id for p in original.posts]
    for a, b in zip(again.posts, original.posts):  # other batches, other padding: float noise only
        assert np.allclose(a.values, b.values, atol=1e-4)
    assert (tmp_path / "again.conll").read_text() == (fold / "predictions.conll").read_text()
    ensemble_out = tmp_path / "ensemble.jsonl"
    predict_main(
        [
            str(runs["span"]),
            str(fold / "gold.conll"),
            str(tmp_path / "ensemble.conll"),
            "--probabilities",
            str(ensemble_out),
        ]
    )
    ensemble = read_probabilities(ensemble_out)
    assert ensemble.views == original.views and len(ensemble) == len(original)


def test_tag_writes_probabilities_of_raw_posts(runs, tmp_path, capsys):
    out = tmp_path / "tagged.jsonl"
    tag_main(
        [
            str(runs["post"] / "fold0"),
            "--text",
            "I soliti politici ci rubano tutto",
            "--text",
            "Ciao",
            "--json",
            "--probabilities",
            str(out),
        ]
    )
    capsys.readouterr()
    tagged = read_probabilities(out)
    assert [p.post_id for p in tagged.posts] == ["1", "2"] and tagged.level == "post"


def test_evaluate_soft_refuses_probabilities_of_other_posts(runs, tmp_path, capsys):
    fold = runs["span"] / "fold0"
    lines = gzip.decompress((fold / "probabilities.jsonl.gz").read_bytes()).decode().splitlines()
    shorter = tmp_path / "shorter.jsonl"
    shorter.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(SystemExit) as stopped:
        evaluate_main(
            [
                "-T",
                "span-fine",
                "-G",
                str(fold / "gold.conll"),
                "-P",
                str(fold / "predictions.conll"),
                "--soft",
                str(shorter),
            ]
        )
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert "shorter.jsonl" in error and f"has {len(lines) - 1} posts, the gold file {len(lines)}" in error
    with pytest.raises(SystemExit):
        evaluate_main(
            [
                "-T",
                "span-coarse",
                "-G",
                str(fold / "gold.conll"),
                "-P",
                str(fold / "predictions.conll"),
                "--soft",
                str(fold / "probabilities.jsonl.gz"),
            ]
        )
    assert "a coarse task needs a coarse model" in capsys.readouterr().err

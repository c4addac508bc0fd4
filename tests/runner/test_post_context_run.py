"""A model trained with the posts' context (``data.context``): it records it, and predict / tag / export read it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from common.errors import UserError
from faina.serving.export import export_fold
from faina.serving.prediction import predict_file
from faina.serving.tagger import FallacyTagger
from train import run

pytestmark = pytest.mark.e2e

POSTS = ["I soliti politici ci rubano tutto, è una vergogna", "Studio americano: la mutazione è pericolosa"]


@pytest.fixture(scope="module")
def context_run(tmp_path_factory, tiny_encoder, small_sample):
    from helpers.configs import compose_train

    root = tmp_path_factory.mktemp("context_run")
    cfg = compose_train(
        f"paths.root_dir={root}",
        "callbacks=none",
        "logger=none",
        "loader.batch_size=8",
        f"encoder.name_or_path={tiny_encoder}",
        "data=custom",
        f"data.train_path={small_sample / 'sample.conll'}",
        "task=span-f",
        "debug=fast",
        "cv.folds=[0]",
        "+data.context=[topic,date]",
    )
    run(cfg)
    return Path(cfg.paths.results_dir) / cfg.name / "fold0"


def test_the_saved_model_records_its_context_and_predicts_what_the_run_did(context_run, tmp_path):
    assert json.loads((context_run / "model.json").read_text())["context"] == ["topic", "date"]
    again = predict_file(str(context_run), str(context_run / "gold.conll"), str(tmp_path / "again.conll"))
    assert Path(again).read_bytes() == (context_run / "predictions.conll").read_bytes()


def probabilities(tagger: FallacyTagger) -> np.ndarray:
    """Every token probability the tagger gives the posts, in one array."""
    return np.concatenate([post.values.ravel() for post in tagger.tag_with_probabilities(POSTS)[1].posts])


def test_the_tagger_reads_the_topic_and_date_it_is_given(context_run):
    plain = probabilities(FallacyTagger.load(context_run, device="cpu"))
    same = probabilities(FallacyTagger.load(context_run, device="cpu"))
    with_topic = probabilities(FallacyTagger.load(context_run, device="cpu", topic="vaccini", date="2021-08"))
    assert np.array_equal(plain, same)
    assert not np.allclose(plain, with_topic)  # the prefix reaches the encoder


def test_an_exported_model_keeps_its_context(context_run, tmp_path):
    folder = export_fold(context_run, tmp_path / "export")
    assert json.loads((folder / "config.json").read_text())["context"] == ["topic", "date"]
    assert "- input: each post's topic and date before its text" in (folder / "README.md").read_text()
    from_fold = FallacyTagger.load(context_run, device="cpu", topic="vaccini", date="2021-08")
    from_export = FallacyTagger.load(folder, device="cpu", topic="vaccini", date="2021-08")
    assert from_export.context == ("topic", "date")
    assert np.allclose(probabilities(from_export), probabilities(from_fold), atol=1e-6)


def test_an_unknown_context_field_stops_the_run_with_one_message(make_cfg):
    cfg = make_cfg("task=span-f", "debug=fast", "cv.folds=[0]", "+data.context=[weather]")
    with pytest.raises(UserError) as caught:
        run(cfg)
    assert "data.context names 'weather', not a context field" in str(caught.value)
    assert not list(Path(cfg.paths.results_dir).rglob("model.json"))


def test_the_tag_command_takes_the_topic_and_date_and_says_when_they_are_missing(context_run, caplog, capsys):
    from faina.tag import main as tag_main

    with caplog.at_level("WARNING"):
        tag_main([str(context_run), "--text", POSTS[0], "--json"])
    assert "reads each post's topic and date before its text" in caplog.text
    assert "pass --topic ... --date ..." in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        tagged = tag_main([str(context_run), "--text", POSTS[0], "--json", "--topic", "vaccini", "--date", "2021-08"])
    assert "data.context" not in caplog.text and len(tagged) == 1


def test_an_ensemble_refuses_folds_that_read_different_contexts(trained_runs, tmp_path):
    from faina.serving.loading import load_predictor
    from helpers.trained import copy_of

    run = copy_of(trained_runs.span, tmp_path)
    meta_path = run / "fold1" / "model.json"
    meta_path.write_text(json.dumps(json.loads(meta_path.read_text()) | {"context": ["topic"]}))
    with pytest.raises(UserError) as caught:
        load_predictor(run)
    assert "fold1 differs from fold0 in context" in str(caught.value)

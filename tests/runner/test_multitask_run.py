"""``train.py task=multi`` end to end: a span + post run of one corpus and a two-corpus run train one shared encoder,
score each entry with its own scorer, save a fold folder per head that ``faina.predict`` / ``faina.tag`` /
``faina.export`` read (``--head``), and a bad entry stops the run with one message before anything trains."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch

from faina.formats.any_file import read_any
from replica_cli import assert_ran, run_cli

pytestmark = pytest.mark.e2e


def train_multi(root: Path, name: str, tiny_encoder: str, *overrides: str):
    return run_cli(
        "train.py",
        "task=multi",
        f"encoder.name_or_path={tiny_encoder}",
        "trainer.max_epochs=1",
        "loader.batch_size=8",
        "cv.num_folds=2",
        "callbacks=none",
        "logger=csv",
        f"paths.root_dir={root}",
        f"name={name}",
        *overrides,
    )


def sample_entries(sample: Path) -> list[str]:
    return [
        f"task.entries.span_f.data.train_path={sample / 'sample.conll'}",
        f"task.entries.span_f.data.test_path={sample / 'sample-unlabelled.conll'}",
        f"task.entries.post_f.data.train_path={sample / 'sample.conll'}",
    ]


@pytest.fixture(scope="module")
def span_and_post(tmp_path_factory, tiny_encoder, small_sample):
    """Span-f (target) and post-f of the 60-post sample, 2 folds, one epoch: the run's folder and its output."""
    root = tmp_path_factory.mktemp("multi")
    result = train_multi(root, "both", tiny_encoder, *sample_entries(small_sample))
    assert_ran(result)
    return root / "results" / "both", result


def test_each_entry_is_scored_with_its_own_scorer_in_every_fold(span_and_post):
    run, result = span_and_post
    saved = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert saved["target"] == "span_f" and set(saved["entries"]) == {"span_f", "post_f"}
    assert set(saved["entries"]["span_f"]["summary"]) == {"strict", "soft", "exact"}  # the span scorer
    assert set(saved["entries"]["post_f"]["summary"]) == {"strict"}  # the post scorer
    assert all("probability_summary" in block for block in saved["entries"].values())
    assert "### span_f (span-f, target)" in result.stdout and "### post_f (post-f, auxiliary)" in result.stdout
    for fold in (0, 1):
        metrics = json.loads((run / f"fold{fold}" / "metrics.json").read_text(encoding="utf-8"))
        span, post = metrics["entries"]["span_f"], metrics["entries"]["post_f"]
        assert span["test_posts"] == post["test_posts"] == 30  # the same posts: one corpus, split once
        span_gold = read_any(run / f"fold{fold}" / "span_f" / "gold.conll", level="span")
        post_gold = read_any(run / f"fold{fold}" / "post_f" / "gold.tsv", level="post")
        assert [p.post_id for p in span_gold.items] == [r.post_id for r in post_gold.items]  # the very same posts
        assert (run / f"fold{fold}" / "span_f" / "reliability.json").is_file()  # the data; the figure per entry
        assert "probability_scores" in post and "tuned_on_dev" in post  # post-f's own rule, fitted on its dev
        assert metrics["phases"]["notes"]["dev_pass"] == "validation"  # each entry's own validation pass served
    assert all((run / f"reliability-{entry}.png").is_file() for entry in ("span_f", "post_f"))


def test_the_dev_metrics_are_logged_per_entry_and_select_on_the_target(span_and_post):
    run, _ = span_and_post
    with (run / "fold0" / "logs" / "metrics.csv").open(encoding="utf-8") as handle:
        columns = next(csv.reader(handle))
    logged = ("val/span_f/f1", "val/post_f/f1", "val/span_f/loss", "val/post_f/loss", "train/span_f/loss", "val/f1")
    tests = ("test/post_f/strict/avg/f1", "test/span_f/exact/avg/f1", "test/strict/avg/f1")  # the last: the target's
    for name in logged + tests:
        assert name in columns, name


def test_a_fold_folder_holds_every_head_and_predict_chooses_by_input_or_head(span_and_post, small_sample, tmp_path):
    run, _ = span_and_post
    fold = run / "fold0"
    index = json.loads((fold / "heads.json").read_text(encoding="utf-8"))
    assert index == {
        "target": "span_f",
        "heads": {"span_f": {"folder": "span_f", "head": "span_f"}, "post_f": {"folder": "post_f", "head": "post_f"}},
    }
    assert_ran(
        run_cli(
            "-m", "faina.predict", str(fold), str(small_sample / "sample-unlabelled.conll"), str(tmp_path / "p.conll")
        )
    )
    direct = tmp_path / "direct.conll"
    head_only = (str(fold / "span_f"), str(small_sample / "sample-unlabelled.conll"), str(direct))
    assert_ran(run_cli("-m", "faina.predict", *head_only))
    assert (tmp_path / "p.conll").read_text() == direct.read_text()  # the span head alone read the .conll file
    out = run_cli(
        "-m",
        "faina.predict",
        str(fold),
        str(small_sample / "sample-unlabelled.tsv"),
        str(tmp_path / "p.tsv"),
        "--head",
        "post_f",
    )
    assert_ran(out)
    assert "(head post_f)" in out.stderr and (tmp_path / "p.tsv").is_file()
    wrong = run_cli(
        "-m", "faina.predict", str(fold), str(small_sample / "sample.tsv"), str(tmp_path / "x.tsv"), "--head", "nope"
    )
    assert wrong.returncode == 2 and "the model has no head 'nope'" in wrong.stderr and "post_f, span_f" in wrong.stderr


def test_the_results_folder_predicts_with_each_heads_ensemble(span_and_post, small_sample, tmp_path):
    run, _ = span_and_post
    out = run_cli(
        "-m",
        "faina.predict",
        str(run),
        str(small_sample / "sample-unlabelled.tsv"),
        str(tmp_path / "e.tsv"),
        "--head",
        "post_f",
    )
    assert_ran(out)
    single = run_cli(
        "-m",
        "faina.predict",
        str(run / "fold0" / "post_f"),
        str(small_sample / "sample-unlabelled.tsv"),
        str(tmp_path / "one.tsv"),
    )
    assert_ran(single)
    # the ensemble is the two folds' post heads: its probabilities are the mean of theirs, post by post
    from faina.formats.probability_file import read_probabilities

    probabilities = []
    models = (
        (run, "e", ["--head", "post_f"]),
        (run / "fold0" / "post_f", "f0", []),
        (run / "fold1" / "post_f", "f1", []),
    )
    for model, name, head in models:
        written = tmp_path / f"{name}.jsonl"
        args = ["-m", "faina.predict", str(model), str(small_sample / "sample-unlabelled.tsv"), str(tmp_path / "x.tsv")]
        assert_ran(run_cli(*args, *head, "--probabilities", str(written)))
        probabilities.append({post.post_id: post.values for post in read_probabilities(written).posts})
    ensemble, first, second = probabilities
    assert set(ensemble) == set(first) == set(second) and len(ensemble) == len(read_any(small_sample / "sample.tsv"))
    for post_id, values in ensemble.items():
        # each file holds its values to 4 significant digits (docs/soft-labels.md): the mean agrees to their rounding
        assert values == pytest.approx((first[post_id] + second[post_id]) / 2, abs=1e-4)
    assert len(read_any(tmp_path / "e.tsv").rows) == len(ensemble)


def test_tag_and_export_serve_every_head_or_the_chosen_one(span_and_post, tmp_path):
    run, _ = span_and_post
    fold = run / "fold0"
    tagged = run_cli("-m", "faina.tag", str(fold), "--text", "i vaccini sono veleno, lo dicono tutti", "--json")
    assert_ran(tagged)
    posts = [json.loads(line) for line in tagged.stdout.splitlines() if line.strip()]
    assert sorted(post["head"] for post in posts) == ["post_f", "span_f"]
    assert "post_labels" in next(p for p in posts if p["head"] == "post_f")
    assert_ran(run_cli("-m", "faina.export", str(fold), str(tmp_path / "all")))
    assert (tmp_path / "all" / "span_f" / "config.json").is_file() and (
        tmp_path / "all" / "post_f" / "config.json"
    ).is_file()
    assert_ran(run_cli("-m", "faina.export", str(fold), str(tmp_path / "one"), "--head", "post_f"))
    assert (tmp_path / "one" / "config.json").is_file()
    one = run_cli("-m", "faina.tag", str(tmp_path / "one"), "--text", "i vaccini sono veleno", "--json")
    assert_ran(one)
    assert "head" not in json.loads(one.stdout.splitlines()[0])


def test_a_second_corpus_trains_in_every_fold_and_sequential_sampling_trains_it_first(
    tmp_path, tiny_encoder, small_sample
):
    second = tmp_path / "second"
    assert_ran(run_cli("-m", "faina.sample", str(second), "--posts", "24", "--seed", "7"))
    result = train_multi(
        tmp_path,
        "two",
        tiny_encoder,
        "experiment=multi-two-corpora",
        *sample_entries(small_sample)[:2],
        f"task.entries.second.data.train_path={second / 'sample.conll'}",
        "task.sampling.strategy=sequential",
        "task.sampling.auxiliary_epochs=1",
        "trainer.max_epochs=2",
        "cv.folds=[0]",
    )
    assert_ran(result)
    fold = tmp_path / "results" / "two" / "fold0"
    metrics = json.loads((fold / "metrics.json").read_text(encoding="utf-8"))
    second_entry = metrics["entries"]["second"]
    assert second_entry["train_posts"] + second_entry["dev_posts"] == 24 and "test" not in second_entry
    with (fold / "logs" / "metrics.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    trained = {
        (int(row["epoch"]), name) for row in rows for name in ("span_f", "second") if row.get(f"train/{name}/loss")
    }
    assert {name for epoch, name in trained if epoch == 0} == {"second"}  # the auxiliary corpus first
    assert {name for epoch, name in trained if epoch == 1} == {"span_f"}  # then the target alone


@pytest.mark.parametrize(
    "override, message",
    [
        ("task.entries.post_f.weight=0", "task.entries.post_f.weight=0: a loss weight must be a number above 0"),
        ("task.entries.post_f.level=token", "task.entries.post_f.level='token' is not a level"),
        ("task.sampling.strategy=shuffled", "task.sampling.strategy='shuffled' is not a sampling strategy"),
        ("model.module.head_lr=0.5", "model.module.head_lr=0.5 changes nothing in a run of several task entries"),
    ],
)
def test_a_bad_entry_stops_the_run_with_one_message_before_training(
    tmp_path, tiny_encoder, small_sample, override, message
):
    result = train_multi(tmp_path, "bad", tiny_encoder, *sample_entries(small_sample), override)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [line for line in lines if line.startswith("error:")] and message in lines[-1], result.stderr
    assert not (tmp_path / "results" / "bad" / "fold0").exists()


def test_an_experiment_file_that_sets_the_top_level_model_stops_the_run_naming_the_file(
    tmp_path, tiny_encoder, small_sample
):
    conf = tmp_path / "conf"
    (conf / "experiment").mkdir(parents=True)
    experiment = conf / "experiment" / "joint-head-lr.yaml"
    experiment.write_text("# @package _global_\nmodel:\n  module:\n    head_lr: 0.5\n", encoding="utf-8")
    result = train_multi(
        tmp_path,
        "bad",
        tiny_encoder,
        *sample_entries(small_sample),
        f"hydra.searchpath=[file://{conf}]",
        "experiment=joint-head-lr",
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0].startswith(f"error: {experiment} sets model.module.head_lr=0.5, which changes nothing"), lines
    assert "task.entries.span_f.model.module.head_lr=0.5" in result.stderr
    assert not (tmp_path / "results" / "bad" / "fold0").exists()


def test_a_lora_decoder_encoder_is_shared_and_each_head_saves_the_adapters_only(tmp_path, small_sample):
    from safetensors import safe_open

    result = run_cli(
        "train.py",
        "task=multi",
        "encoder=tiny-llama",
        "encoder.peft=lora",
        "encoder.max_length=16",
        *sample_entries(small_sample),
        "cv.folds=[0]",
        "debug=fast",
        "loader.batch_size=8",
        f"paths.root_dir={tmp_path}",
        "name=lora",
    )
    assert_ran(result)
    fold = tmp_path / "results" / "lora" / "fold0"
    for head in ("span_f", "post_f"):
        with safe_open(str(fold / head / "model.safetensors"), framework="pt") as weights:
            encoder = [name for name in weights.keys() if name.startswith("encoder.")]
        assert encoder and all(".lora_" in name for name in encoder), head  # no frozen base weight
    # the post head with the shared LoRA encoder, read back in a fresh process, predicts its fold's test posts as
    # the run did: the same file, byte for byte
    out = tmp_path / "p.tsv"
    assert_ran(run_cli("-m", "faina.predict", str(fold), str(fold / "post_f" / "gold.tsv"), str(out)))
    assert out.read_text() == (fold / "post_f" / "predictions.tsv").read_text()


def test_gradual_unfreezing_freezes_the_shared_encoder_in_the_first_epoch(tmp_path, tiny_encoder, small_sample):
    """``task=multi`` with the target's gradual unfreezing, one epoch: every head trained, the shared encoder did
    not move (both heads' saved encoders are the tiny encoder's own weights), and nothing was refused."""
    from safetensors.torch import load_file

    result = train_multi(
        tmp_path, "unfreeze", tiny_encoder, *sample_entries(small_sample),
        "task.entries.span_f.model.module.gradual_unfreezing=true", "cv.folds=[0]",
    )  # fmt: skip
    assert_ran(result)
    pretrained = load_file(str(Path(tiny_encoder) / "model.safetensors"))
    fold = tmp_path / "results" / "unfreeze" / "fold0"
    for head in ("span_f", "post_f"):
        saved = load_file(str(fold / head / "model.safetensors"))
        encoder = {
            name.split("encoder.model.", 1)[1]: value for name, value in saved.items() if "encoder.model." in name
        }
        assert encoder and set(encoder) <= set(pretrained), head
        assert all(torch.equal(value, pretrained[name]) for name, value in encoder.items()), head
    untrained = train_multi(
        tmp_path, "plain", tiny_encoder, *sample_entries(small_sample), "cv.folds=[0]"
    )  # the same run without it: the encoder moves
    assert_ran(untrained)
    moved = load_file(str(tmp_path / "results" / "plain" / "fold0" / "span_f" / "model.safetensors"))
    encoder = {name.split("encoder.model.", 1)[1]: v for name, v in moved.items() if "encoder.model." in name}
    assert any(not torch.equal(value, pretrained[name]) for name, value in encoder.items())


def test_cv_official_ensemble_writes_each_heads_submission(tmp_path, tiny_encoder, small_sample):
    """``task=multi cv=official cv.ensemble=2``: each model predicts the target's test file in its own entry folder,
    and the run writes the span head's ensemble over both models, what ``faina.predict`` gives for the results folder
    and that head, byte for byte."""
    result = train_multi(
        tmp_path, "official", tiny_encoder, *sample_entries(small_sample), "cv=official", "cv.ensemble=2"
    )
    assert_ran(result)
    exp = tmp_path / "results" / "official"
    ensembled = exp / "submission-ensemble-span_f.conll"
    unlabelled = read_any(small_sample / "sample-unlabelled.conll")
    assert [p.tokens for p in read_any(ensembled).posts] == [p.tokens for p in unlabelled.posts]
    assert (exp / "probabilities-ensemble-span_f.jsonl.gz").is_file()
    assert not list(exp.glob("submission-ensemble-post_f.*"))  # the post entry has no test file
    for k in (0, 1):
        assert (exp / f"fold{k}" / "span_f" / "submission.conll").is_file()
    again = tmp_path / "again.conll"
    args = ("-m", "faina.predict", str(exp), str(small_sample / "sample-unlabelled.conll"), str(again))
    assert_ran(run_cli(*args, "--head", "span_f"))
    assert again.read_bytes() == ensembled.read_bytes()

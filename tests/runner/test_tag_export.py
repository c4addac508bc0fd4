"""Raw-text tagging (faina.tag, FallacyTagger) and self-contained model folders (faina.export), end to end.

A tiny span-f run (2 folds) and post-f run (1 fold) are trained once with fast_dev_run on a copy of the tiny
encoder; the copy is deleted before the exported folder is used, so the folder must carry everything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from faina.serving.export import export_fold
from faina.serving.prediction import predict_file
from faina.serving.tagger import FallacyTagger
from faina.tag import main as tag_main
from tests_paths import CONF, REPO
from train import register_config_resolvers

POSTS = [
    "Studio americano: la mutazione è pericolosa... l'Italia agli italiani! [USER] #vaccini",
    "Ciao",
    "I soliti politici ci rubano tutto, è una vergogna",
]


def _train(root: Path, encoder: Path, sample: Path, task: str, *overrides: str) -> Path:
    from train import run

    register_config_resolvers()
    ext = "conll" if task.startswith("span") else "tsv"
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        cfg = compose(
            config_name="train",
            overrides=[
                f"paths.root_dir={root}",
                f"task={task}",
                "debug=fast",
                "loader.batch_size=8",
                f"encoder.name_or_path={encoder}",
                "data=custom",
                f"data.train_path={sample / ('sample.' + ext)}",
                *overrides,
            ],
        )
    run(cfg)
    return Path(cfg.paths.results_dir) / cfg.name


@pytest.fixture(scope="module")
def exported(tmp_path_factory, tiny_encoder, small_sample):
    """Runs, their exports (made while the encoder existed), then the encoder copy is removed."""
    root = tmp_path_factory.mktemp("tag_export")
    encoder = root / "encoder_copy"
    shutil.copytree(tiny_encoder, encoder)
    span_run = _train(root, encoder, small_sample, "span-f", "cv.num_folds=2")
    post_run = _train(root, encoder, small_sample, "post-f", "cv.folds=[0]")
    folders = {
        "span": export_fold(span_run / "fold1", root / "span-model"),
        "post": export_fold(post_run / "fold0", root / "post-model"),
    }
    in_process = {
        level: [p.to_dict() for p in FallacyTagger.load(run_dir / fold, device="cpu")(POSTS)]
        for level, run_dir, fold in (("span", span_run, "fold1"), ("post", post_run, "fold0"))
    }
    fold_file = predict_file(
        str(span_run / "fold1"), str(small_sample / "sample-unlabelled.conll"), str(root / "fold1-predictions.conll")
    )
    shutil.rmtree(encoder)
    return {
        "root": root,
        "span_run": span_run,
        "post_run": post_run,
        "folders": folders,
        "fold_out": in_process,
        "fold_file": Path(fold_file),
    }


def test_exported_folder_is_self_contained_and_predicts_the_same_in_a_fresh_process(exported):
    folder = exported["folders"]["span"]
    names = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert {
        "config.json",
        "model.safetensors",
        "labels.yaml",
        "README.md",
        "encoder/config.json",
        "encoder/tokenizer_config.json",
    } <= names
    assert not any(name.endswith((".pkl", ".ckpt", ".bin")) for name in names)
    config = json.loads((folder / "config.json").read_text())
    assert config["architecture"] == "MVMD" and config["task"] == "span-f" and config["views"] == ["a1", "a2"]
    assert len(config["labels"]) == 20 and "optimizer" not in config["module"]
    # the training run and the encoder it started from are gone: the folder alone must be enough
    moved = exported["root"] / "runs-moved-away"
    shutil.move(str(exported["span_run"].parent), moved)
    try:
        script = (
            "import json, sys; from faina import FallacyTagger; "
            "t = FallacyTagger.load(sys.argv[1], device='cpu'); "
            "print(json.dumps([p.to_dict() for p in t(json.loads(sys.argv[2]))]))"
        )
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        result = subprocess.run(
            [sys.executable, "-c", script, str(folder), json.dumps(POSTS)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        shutil.move(str(moved), exported["span_run"].parent)
    assert result.returncode == 0, result.stderr[-2000:]
    fresh = json.loads(result.stdout.strip().splitlines()[-1])
    assert fresh == exported["fold_out"]["span"]
    assert sum(len(p["spans"]) for p in fresh) > 0  # a random model tags something: the comparison has content


def test_card_lists_the_runs_real_numbers(exported):
    card = (exported["folders"]["span"] / "README.md").read_text()
    for fold in (0, 1):
        metrics = json.loads((exported["span_run"] / f"fold{fold}" / "metrics.json").read_text())
        mark = " (this model)" if fold == 1 else ""
        row = next(line for line in card.splitlines() if line.startswith(f"| {fold}{mark} |"))
        assert f"| {metrics['test_posts']} |" in row
        assert f"{100 * metrics['test']['strict']['avg']['f1']:.1f}" in row
        assert f"{100 * metrics['test']['soft']['a1']['f1']:.1f}" in row
    assert "| mean ± std | 60 |" in card
    assert "dataset: `custom` (file `sample.conll`)" in card and "## Intended use and limits" in card
    assert "lr 0.0001" in card and "head_lr=0.01" in card
    assert "decision.tuned=False" in card and "decision.min_evidence=30" in card  # the rule's settings, one by one


def test_predict_cli_gives_the_same_file_from_the_fold_and_from_the_export(exported, small_sample, tmp_path):
    exported_file = predict_file(
        str(exported["folders"]["span"]), str(small_sample / "sample-unlabelled.conll"), str(tmp_path / "b.conll")
    )
    assert Path(exported_file).read_bytes() == exported["fold_file"].read_bytes()


def test_tag_cli_json_lines_with_offsets_that_slice_the_text(exported, capsys):
    posts = tag_main(
        [str(exported["folders"]["span"]), "--text", POSTS[0], "--text", POSTS[1], "--json", "--device", "cpu"]
    )
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == posts == exported["fold_out"]["span"][:2]
    for post in printed:
        assert set(post) == {"text", "tokens", "spans"}
        for span in post["spans"]:
            assert set(span) == {"view", "label", "start_char", "end_char", "start_token", "end_token", "text"}
            assert post["text"][span["start_char"] : span["end_char"]] == span["text"]
            assert span["text"].startswith(post["tokens"][span["start_token"]])
            assert span["text"].endswith(post["tokens"][span["end_token"] - 1])


def test_post_model_from_files_gives_label_sets_and_a_page(exported, tmp_path, capsys):
    txt, jsonl, page = tmp_path / "posts.txt", tmp_path / "posts.jsonl", tmp_path / "page.html"
    txt.write_text(POSTS[0] + "\n\n" + POSTS[2] + "\n")
    jsonl.write_text(json.dumps({"text": POSTS[0], "id": 1}) + "\n" + json.dumps(POSTS[2]) + "\n")
    from_txt = tag_main([str(exported["folders"]["post"]), "--input", str(txt), "--json", "--html", str(page)])
    from_jsonl = tag_main([str(exported["folders"]["post"]), "--input", str(jsonl)])
    assert from_txt == from_jsonl == [exported["fold_out"]["post"][0], exported["fold_out"]["post"][2]]
    assert all(set(p["post_labels"]) == {"a1", "a2"} and p["spans"] == [] for p in from_txt)
    out = capsys.readouterr().out
    assert "post 2: I soliti politici" in out and "a2  labels:" in out
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "I soliti politici" in html and "<script" not in html


@pytest.mark.parametrize(
    "args, message",
    [
        (["--text", "  "], "post 1 is empty"),
        (["--text", "ok", "--text", ""], "post 2 is empty"),
    ],
)
def test_empty_posts_get_one_message(exported, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        tag_main([str(exported["folders"]["span"]), *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_inputs_and_folders_end_in_one_line(exported, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"txt": "typo"}\n')
    not_model = tmp_path / "empty_dir"
    not_model.mkdir()
    cases = [
        ([str(exported["folders"]["span"]), "--input", str(bad)], 'bad.jsonl:2: a line without a "text" string'),
        ([str(exported["folders"]["span"] / "encoder"), "--text", "ciao"], "not a Faina model folder"),
    ]
    for args, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            tag_main(args)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    # as a command: one line on stderr, exit status 2, no traceback
    result = subprocess.run(
        [sys.executable, "-m", "faina.tag", str(not_model), "--text", "ciao"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-1500:]
    assert "neither an exported model folder" in result.stderr  # nor a results folder (faina.serving.loading)


def test_push_to_hub_offline_is_one_clear_message(exported, monkeypatch):
    from common.errors import UserError
    from faina.serving.export import push_to_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match="cannot reach the Hugging Face hub to upload 'someone/model'") as err:
        push_to_hub(exported["folders"]["span"], "someone/model")
    assert str(exported["folders"]["span"]) in err.value.fix  # the user learns the folder itself is complete

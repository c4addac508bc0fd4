"""Raw-text tagging (faina.tag, FallacyTagger) and self-contained model folders (faina.export), end to end.

The session's shared tiny runs (span-f, 2 folds; post-f, 1 fold: ``helpers.trained``) and their exports; the
encoder copy they were trained with and the runs are moved away while a fresh process loads an exported folder,
so the folder must carry everything.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from faina.serving.prediction import predict_file
from faina.serving.tagger import FallacyTagger
from faina.tag import main as tag_main
from tests_paths import REPO
from tiers import fixture_tier

POSTS = [
    "Studio americano: la mutazione è pericolosa... l'Italia agli italiani! [USER] #vaccini",
    "Ciao",
    "I soliti politici ci rubano tutto, è una vergogna",
]


def json_of_a_fresh_process(script: str, *args: str):
    """The JSON a ``python -c script args...`` process prints last, offline (it must exit 0)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
@fixture_tier("fast")
def exported(trained_runs, tmp_path_factory):
    """The session's shared tiny runs (``helpers.trained``), their exports, and what the runs' own folds predict."""
    root = tmp_path_factory.mktemp("tag_export")
    span_run, post_run = trained_runs.span, trained_runs.post
    in_process = {
        level: [p.to_dict() for p in FallacyTagger.load(run_dir / fold, device="cpu")(POSTS)]
        for level, run_dir, fold in (("span", span_run, "fold1"), ("post", post_run, "fold0"))
    }
    fold_file = predict_file(
        str(span_run / "fold1"),
        str(trained_runs.sample / "sample-unlabelled.conll"),
        str(root / "fold1-predictions.conll"),
    )
    return {
        "runs": trained_runs,
        "span_run": span_run,
        "post_run": post_run,
        "folders": {"span": trained_runs.exports["span-fold1"], "post": trained_runs.exports["post-fold0"]},
        "fold_out": in_process,
        "fold_file": Path(fold_file),
    }


@pytest.mark.slow  # a fresh Python process that imports torch
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
    # the training runs and the encoder they started from are gone: the folder alone must be enough
    with exported["runs"].without_sources():
        script = (
            "import json, sys; from faina import FallacyTagger; "
            "t = FallacyTagger.load(sys.argv[1], device='cpu'); "
            "print(json.dumps([p.to_dict() for p in t(json.loads(sys.argv[2]))]))"
        )
        fresh = json_of_a_fresh_process(script, str(folder), json.dumps(POSTS))
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


def test_one_text_flag_takes_several_posts_and_the_page_draws_their_spans(exported, tmp_path, capsys):
    """``--text A B C`` (the synopsis of docs/commands.md) and ``--text A B --text C`` tag the same posts, in order."""
    folder = str(exported["folders"]["span"])
    page = tmp_path / "tagged.html"
    one_flag = tag_main([folder, "--text", *POSTS, "--json", "--device", "cpu", "--html", str(page)])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    repeated = tag_main([folder, "--text", POSTS[0], POSTS[1], "--text", POSTS[2], "--json", "--device", "cpu"])
    assert printed == one_flag == repeated == exported["fold_out"]["span"]
    html = page.read_text(encoding="utf-8")
    spans = [span for post in one_flag for span in post["spans"]]
    assert html.count('<span class="label"') == len(spans) > 0  # one label box per span, drawn by the renderer
    assert {f'data-label="{span["label"]}"' for span in spans} <= set(re.findall(r'data-label="[^"]*"', html))
    assert '<p class="legend">' in html and "<script" not in html


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


@pytest.mark.slow  # ends with the command in a fresh process
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


@pytest.mark.slow  # a fresh Python process that imports torch
def test_exported_folder_loads_through_transformers_auto_classes_in_a_fresh_process(exported):
    """``AutoConfig`` / ``AutoModel`` once the framework is imported: its classes are registered, no remote code."""
    folder = exported["folders"]["span"]
    script = (
        "import json, sys\n"
        "import faina.serving.auto_classes\n"
        "from transformers import AutoConfig, AutoModel\n"
        "config = AutoConfig.from_pretrained(sys.argv[1])\n"
        "model = AutoModel.from_pretrained(sys.argv[1])\n"
        "print(json.dumps({'config': type(config).__name__, 'model_type': config.model_type, 'task': config.task,\n"
        "    'model': type(model).__name__, 'inner': type(model.fallacy).__name__,\n"
        "    'tagged': [p.to_dict() for p in model.tag(json.loads(sys.argv[2]))]}))\n"
    )
    loaded = json_of_a_fresh_process(script, str(folder), json.dumps(POSTS))
    assert (loaded["config"], loaded["model_type"], loaded["task"]) == (
        "FallacyModelConfig",
        "fallacy-framework",
        "span-f",
    )
    assert (loaded["model"], loaded["inner"]) == ("FallacyModel", "MVMD")
    assert loaded["tagged"] == exported["fold_out"]["span"]  # the same predictions as the fold it came from


def test_exported_folder_names_no_local_path_and_its_files_share_one_mode(exported):
    folder = exported["folders"]["span"]
    root = str(exported["runs"].root)
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix != ".safetensors":
            text = path.read_text(encoding="utf-8")
            assert root not in text and "site-packages" not in text, f"{path.name} names a local path"
    config = json.loads((folder / "config.json").read_text())
    assert config["encoder"]["source"] == exported["runs"].encoder.name  # the folder's name, not its path here
    card = (folder / "README.md").read_text()
    assert "pipeline_tag" not in card and "AutoModel.from_pretrained" in card
    modes = {path.name: path.stat().st_mode & 0o777 for path in folder.rglob("*") if path.is_file()}
    assert modes["model.safetensors"] == modes["config.json"] == modes["README.md"], modes


def test_the_offline_encoder_is_named_by_its_hub_id_and_other_folders_by_their_name(tmp_path):
    from models.encoder import OFFLINE_HUB_ID, hub_id_of, offline_encoder_path

    assert hub_id_of(offline_encoder_path()) == OFFLINE_HUB_ID == "sentence-transformers/all-MiniLM-L6-v2"
    assert hub_id_of("m-polignano-uniba/bert_uncased_L-12_H-768_A-12_italian_alb3rt0").startswith("m-polignano")
    (tmp_path / "my-encoder").mkdir()
    assert hub_id_of(str(tmp_path / "my-encoder")) == "my-encoder"


def test_long_loops_show_progress_on_stderr_and_keep_stdout_for_results(
    exported, small_sample, tmp_path, capsys, monkeypatch
):
    """On a terminal the loops show their bars on stderr; into a file or a pipe they are quiet (the results on
    stdout either way)."""
    from faina.predict import main as predict_main

    posts = tmp_path / "posts.txt"
    posts.write_text("\n".join(POSTS * 4) + "\n")  # 12 posts: 3 batches of 4
    tag_main([str(exported["folders"]["span"]), "--input", str(posts), "--batch-size", "4", "--json"])
    quiet = capsys.readouterr()
    assert len(quiet.out.splitlines()) == 12 and "tagging" not in quiet.err  # stderr is no terminal here
    for module in ("common.progress", "common.progress_bar"):
        monkeypatch.setattr(f"{module}.on_terminal", lambda: True)
    tag_main([str(exported["folders"]["span"]), "--input", str(posts), "--batch-size", "4", "--json"])
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 12 and all(
        line.startswith('{"text"') for line in captured.out.splitlines()
    )
    assert "tagging 12 posts" in captured.err and "3/3" in captured.err
    out = tmp_path / "predicted.conll"
    predict_main(
        [str(exported["folders"]["span"]), str(small_sample / "sample-unlabelled.conll"), str(out), "--batch-size", "8"]
    )
    captured = capsys.readouterr()
    assert captured.out == "" and "Predicting" in captured.err and out.is_file()

"""``python train.py task=... llm=... mode=zero-shot`` through Hydra: files, scores, audit, errors."""

from __future__ import annotations

import importlib
import json

import pytest

from common.errors import UserError
from faina.data.task_data import read_level
from faina.formats.labels import LabelInventory
from faina.formats.records import SpanCorpus
from faina.scoring.official import evaluate_files
from helpers.configs import compose_train

runner = importlib.import_module("faina.zero_shot.runner")
TASKS = ["span-f", "span-c", "post-f", "post-c"]


def compose_cfg(tmp_path, task: str, *extra: str):
    return compose_train(f"task={task}", "llm=tiny-llama", "mode=zero-shot", f"paths.root_dir={tmp_path}", *extra)


def run(cfg):
    from train import run as train_run

    return train_run(cfg)


def gold_answers(cfg, view: int = 0) -> list[str]:
    """What a perfect model of annotator ``view`` would answer, in the requested format."""
    corpus = read_level(cfg.data.train_path, cfg.task.level, cfg.task.grain, LabelInventory.load())
    if isinstance(corpus, SpanCorpus):
        return [
            "\n".join(f"[{s.first}-{s.last} = {s.label}]" for s in post.spans[view]) or "[None]"
            for post in corpus.posts
        ]
    return ["\n".join(f"[{label}]" for label in row.labels[view]) or "[None]" for row in corpus.rows]


@pytest.mark.parametrize("task", TASKS)
def test_perfect_answers_score_one_against_their_view(tmp_path, monkeypatch, task):
    cfg = compose_cfg(tmp_path, task, "task.zero_shot.limit=12")
    answers = gold_answers(cfg)
    seen = {}

    def fake_generate(llm, prompts, settings):
        seen.update(llm=llm["name"], n=len(prompts), seed=settings.seed)
        return answers[: len(prompts)]

    monkeypatch.setattr(runner, "generate_answers", fake_generate)
    metrics = run(cfg)
    assert seen == {"llm": "tiny-llama", "n": 12, "seed": cfg.seed}
    assert metrics["test/strict/a1/f1"] == pytest.approx(1.0)
    assert metrics["test/strict/a1/precision"] == pytest.approx(1.0)
    assert metrics["test/strict/avg/f1"] < 1.0 or task.startswith("post-c")  # a2 disagrees with a1
    assert metrics["audit/answer_only"] == 1.0 and metrics["audit/answers/requested_format"] == 1.0
    out = tmp_path / "results" / f"{task}-sample-zeroshot-tiny-llama-definitions"
    ext = cfg.task.file_ext
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["posts"] == 12 and saved["scores"]["strict"]["a1"]["f1"] == pytest.approx(1.0)
    assert json.loads((out / "audit.json").read_text())["outputs"] == 12
    assert len((out / "outputs.jsonl").read_text().splitlines()) == 12
    # the prediction file is an ordinary one-column file that the evaluator scores again with -O
    again = evaluate_files(cfg.task.eval_task, out / f"gold.{ext}", out / f"predictions.{ext}", one_pred=True)
    assert again == saved["scores"]


def test_noisy_answers_are_parsed_scored_and_audited(tmp_path, monkeypatch):
    cfg = compose_cfg(tmp_path, "span-f", "task.zero_shot.limit=4", "task.zero_shot.labels=names")
    answers = gold_answers(cfg)
    noisy = [
        f"Sure! Here are the fallacies:\n{answers[0]}\n{answers[0]}",  # explanation + repetition
        "[1-500 = Loaded language]",  # clipped, normalised
        "Post:\n1\tfoo\n2\tbar\n3\tbaz",  # prompt continuation only
        "[2-3 = Whataboutism]",
    ]  # label outside the inventory
    monkeypatch.setattr(runner, "generate_answers", lambda llm, prompts, settings: noisy)
    metrics = run(cfg)
    audit = json.loads((tmp_path / "results" / "span-f-sample-zeroshot-tiny-llama-names" / "audit.json").read_text())
    assert audit["output_kinds"] == {
        "answer_only": 0.75,
        "instructions_only": 0.25,
        "answer_and_instructions": 0.0,
        "nothing": 0.0,
    }
    assert audit["answer_traits"] == {
        "requested_format": 2 / 3,
        "explanations": 1 / 3,
        "labels_outside_inventory": 1 / 3,
        "repetitions": 1 / 3,
    }
    assert audit["parser_counts"]["out_of_range_clipped"] == 1
    assert audit["unknown_labels"] == {"Whataboutism": 1}
    assert 0 < metrics["test/strict/a1/recall"] < 1


def test_whole_file_is_scored_against_the_original_gold(tmp_path, monkeypatch):
    cfg = compose_cfg(tmp_path, "post-f")
    monkeypatch.setattr(runner, "generate_answers", lambda llm, prompts, settings: ["[None]"] * len(prompts))
    run(cfg)
    out = tmp_path / "results" / "post-f-sample-zeroshot-tiny-llama-definitions"
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["gold_file"] == cfg.data.train_path and not (out / "gold.tsv").exists()
    assert saved["posts"] == 300


@pytest.mark.parametrize(
    "override,message",
    [
        ("task.zero_shot.labels=everything", "names, definitions, macro"),
        ("task.zero_shot.limit=0", "limit"),
        ("task.zero_shot.out_of_range=wrap", "clip, reject"),
        ("+task.zero_shot.temperature=0.7", "unknown task.zero_shot keys"),
    ],
)
def test_bad_settings_are_user_errors(tmp_path, monkeypatch, override, message):
    cfg = compose_cfg(tmp_path, "span-f", override)
    monkeypatch.setattr(runner, "generate_answers", lambda *a: pytest.fail("must fail before generating"))
    with pytest.raises(UserError, match=message):
        run(cfg)


@pytest.mark.filterwarnings("ignore::metrics.faina_scores.ZeroDenominatorWarning")
def test_tiny_llm_end_to_end(tmp_path):
    """A random 1-layer Llama really generates; whatever it says, the files are written and evaluable."""
    cfg = compose_cfg(
        tmp_path,
        "span-f",
        "task.zero_shot.limit=2",
        "task.zero_shot.max_new_tokens=6",
        "task.zero_shot.labels=names",
        "task.zero_shot.batch_size=2",
    )
    metrics = run(cfg)
    out = tmp_path / "results" / "span-f-sample-zeroshot-tiny-llama-names"
    assert evaluate_files("span-fine", out / "gold.conll", out / "predictions.conll", one_pred=True)
    assert sum(v for k, v in metrics.items() if k.startswith("audit/") and "/answers/" not in k) == pytest.approx(1.0)
    assert len((out / "outputs.jsonl").read_text().splitlines()) == 2


@pytest.mark.slow
def test_smollm2_end_to_end(tmp_path):
    """The packaged SmolLM2 (GGUF) answers three sample posts; the predictions are scored and audited."""
    cfg = compose_cfg(
        tmp_path,
        "post-c",
        "llm=smollm2",
        "task.zero_shot.limit=3",
        "task.zero_shot.max_new_tokens=12",
        "task.zero_shot.labels=names",
        "task.zero_shot.batch_size=3",
    )
    metrics = run(cfg)
    out = tmp_path / "results" / "post-c-sample-zeroshot-smollm2-names"
    scores = evaluate_files("post-coarse", out / "gold.tsv", out / "predictions.tsv", one_pred=True)
    assert metrics["test/strict/avg/f1"] == pytest.approx(scores["strict"]["avg"]["f1"])
    outputs = [json.loads(line) for line in (out / "outputs.jsonl").read_text().splitlines()]
    assert len(outputs) == 3 and all(isinstance(o["output"], str) for o in outputs)

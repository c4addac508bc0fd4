"""Zero-shot LLM baselines on the Faina tasks (the paper's ZSWD models): prompt, parse, write, score, audit.

    python train.py task=span-f llm=llama3-8b-instruct mode=zero-shot
    python train.py task=post-c llm=smollm2 mode=zero-shot data=sample task.zero_shot.limit=20

Every labelled post of ``data.train_path`` (or the first ``task.zero_shot.limit``) is prompted once; the
parsed answers are written in the official file layout with one prediction column, scored by the
project's evaluator against every annotator view (``-O``), and audited (``faina.zero_shot.audit``).
Writes, under ``task.zero_shot.output_dir``: ``predictions.<ext>``, ``gold.<ext>`` (only when ``limit``
selects a subset), ``outputs.jsonl`` (raw output and parse of each post), ``prompt-example.txt``,
``metrics.json``, ``audit.json`` and ``config.yaml``, each written atomically.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from common.errors import UserError
from common.io import atomic_write_json, atomic_write_text
from faina.data.task_data import load_task_data
from faina.formats.any_file import write_any
from faina.formats.records import Post, PostCorpus, PostRow, SpanCorpus
from faina.scoring.official import evaluate_files
from faina.zero_shot.audit import audit_output, format_audit, summarise_audit
from faina.zero_shot.definitions import load_definitions
from faina.zero_shot.parser import LabelMatcher, ParsedAnswer, build_parser
from faina.zero_shot.prompts import PromptBuilder


@dataclass(frozen=True)
class ZeroShotSettings:
    """``task.zero_shot`` of the task configs."""

    output_dir: str
    labels: str = "definitions"  # names | definitions | macro (faina.zero_shot.prompts.LABEL_LISTS)
    definitions: str = "faina"  # YAML of label definitions/aliases (faina/fallacy_definitions.yaml)
    max_new_tokens: int = 256
    batch_size: int = 16  # posts per generate call (length-sorted, padded left)
    limit: int | None = None  # only the first N posts (quick runs); null: all
    seed: int = 1
    out_of_range: str = "clip"  # token indices outside the post: clip | reject
    use_chat_template: bool = True
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and int(self.limit) < 1:
            raise UserError(
                f"task.zero_shot.limit is {self.limit}", fix="give a positive number of posts, or null for all"
            )
        if int(self.max_new_tokens) < 1 or int(self.batch_size) < 1:
            raise UserError(
                "task.zero_shot.max_new_tokens and batch_size must be positive",
                fix="e.g. task.zero_shot.max_new_tokens=256 task.zero_shot.batch_size=4",
            )

    @classmethod
    def from_config(cls, node: Any) -> ZeroShotSettings:
        values = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise UserError(f"unknown task.zero_shot keys {unknown}", fix=f"use only {sorted(known)}")
        return cls(**values)


def generate_answers(llm: dict, prompts: Sequence[str], settings: ZeroShotSettings) -> list[str]:
    """Load the configured causal LM (``llm.backend``) and generate one answer per prompt (greedy, seeded,
    batched by length; answers in prompt order)."""
    from models.llm.backends import build_backend
    from models.llm.generation import GenerationSettings

    generation = GenerationSettings(
        max_new_tokens=settings.max_new_tokens,
        batch_size=settings.batch_size,
        num_beams=1,
        seed=settings.seed,
        use_chat_template=settings.use_chat_template,
        system_prompt=settings.system_prompt,
    )
    return build_backend(llm, seed=settings.seed).generate(prompts, generation)


def first_posts(corpus: SpanCorpus | PostCorpus, limit: int | None) -> SpanCorpus | PostCorpus:
    if isinstance(corpus, SpanCorpus):
        return corpus.replace_posts(corpus.posts[:limit])
    return replace(corpus, rows=corpus.rows[:limit])


def prediction_corpus(gold: SpanCorpus | PostCorpus, parsed: Sequence[ParsedAnswer]) -> SpanCorpus | PostCorpus:
    """The gold posts with one label column: the model's parsed answer (scored against every view)."""
    if isinstance(gold, SpanCorpus):
        posts = [post.with_spans([answer.predictions]) for post, answer in zip(gold.posts, parsed, strict=True)]
        return SpanCorpus(tuple(posts), 1, path=gold.path, trailing_blank_line=gold.trailing_blank_line)
    rows = tuple(
        PostRow(r.post_id, r.date, r.topic, r.text, (tuple(a.predictions),), r.line)
        for r, a in zip(gold.rows, parsed, strict=True)
    )
    return PostCorpus(rows, 1, path=gold.path)


def flat_metrics(scores: dict, audit: dict) -> dict[str, float]:
    flat = {
        f"test/{mode}/{view}/{measure}": float(value)
        for mode, views in scores.items()
        for view, measures in views.items()
        for measure, value in measures.items()
    }
    flat.update({f"audit/{kind}": float(v) for kind, v in audit["output_kinds"].items()})
    flat.update({f"audit/answers/{trait}": float(v) for trait, v in audit["answer_traits"].items()})
    return flat


def format_scores(scores: dict, title: str) -> str:
    lines = [title, f"  {'scoring':8}{'view':6}{'P':>8}{'R':>8}{'F1':>8}"]
    for mode, views in scores.items():
        for view, m in views.items():
            lines.append(f"  {mode:8}{view:6}" + "".join(f"{100 * m[k]:8.2f}" for k in ("precision", "recall", "f1")))
    return "\n".join(lines)


def run_zero_shot(cfg: DictConfig, settings: ZeroShotSettings) -> dict[str, float]:
    task = cfg.task
    data = load_task_data(
        cfg.data.train_path, None, task.level, task.grain, cfg.data.labels, cfg.data.get("repair", False), cfg.data.name
    )
    gold = first_posts(data.labelled, settings.limit)
    items = gold.items
    definitions = load_definitions(data.inventory, settings.definitions)
    prompts = [
        PromptBuilder(task.level, task.grain, data.inventory, definitions, settings.labels)(item) for item in items
    ]
    parser = build_parser(task.level, LabelMatcher(data.labels, definitions), settings.out_of_range)
    llm = OmegaConf.to_container(cfg.llm, resolve=True)

    started = time.perf_counter()
    outputs = generate_answers(llm, prompts, settings)
    seconds = time.perf_counter() - started
    parsed = [
        parser.parse(text, len(item.tokens) if isinstance(item, Post) else None)
        for text, item in zip(outputs, items, strict=True)
    ]

    out_dir = Path(settings.output_dir)
    ext = task.file_ext
    prediction_file = write_any(prediction_corpus(gold, parsed), out_dir / f"predictions.{ext}")
    gold_file = (
        Path(cfg.data.train_path) if len(items) == len(data.labelled) else write_any(gold, out_dir / f"gold.{ext}")
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = evaluate_files(task.eval_task, gold_file, prediction_file, one_pred=True, inventory=data.inventory)
    audit = summarise_audit(outputs, parsed, prompts)

    atomic_write_text(out_dir / "prompt-example.txt", prompts[0] + "\n")
    atomic_write_text(
        out_dir / "outputs.jsonl",
        "".join(
            json.dumps(output_record(item.post_id, text, p, prompt), ensure_ascii=False) + "\n"
            for item, text, p, prompt in zip(items, outputs, parsed, prompts)
        ),
    )
    atomic_write_json(out_dir / "audit.json", audit)
    atomic_write_json(
        out_dir / "metrics.json",
        {
            "task": task.name,
            "eval_task": task.eval_task,
            "llm": llm.get("name"),
            "labels": settings.labels,
            "data": cfg.data.name,
            "posts": len(items),
            "one_prediction": True,
            "scores": scores,
            "prediction_file": str(prediction_file),
            "gold_file": str(gold_file),
            "generation_seconds": round(seconds, 2),
            "warnings": sorted({str(w.message) for w in caught}),
        },
    )
    atomic_write_text(out_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))

    title = (
        f"{task.name} · zero-shot {llm.get('name')} · labels={settings.labels} · {cfg.data.name} "
        f"({len(items)} posts, one prediction scored against every view)"
    )
    print(format_scores(scores, title))
    print(format_audit(audit))
    print(f"results: {out_dir}")
    return flat_metrics(scores, audit)


def output_record(post_id: str, text: str, parsed: ParsedAnswer, prompt: str | None = None) -> dict:
    """One line of outputs.jsonl: the raw output beside what the parser made of it."""
    return {
        "post_id": post_id,
        "output": text,
        "kind": audit_output(text, parsed, prompt).kind,
        "predictions": [_plain(x) for x in parsed.predictions],
        "said_none": parsed.said_none,
        "unknown_labels": list(parsed.unknown_labels),
        "counts": {k: v for k, v in parsed.counts.items() if v},
    }


def _plain(prediction) -> Any:
    return [prediction.first, prediction.last, prediction.label] if hasattr(prediction, "label") else prediction


def run(cfg: DictConfig) -> dict[str, float]:
    """Hydra runner (``task.runners.zero-shot``): settings from ``task.zero_shot``, model from ``llm``."""
    if cfg.task.get("zero_shot") is None:
        raise UserError(f"task {cfg.task.name!r} has no zero_shot settings", fix="add a task.zero_shot block")
    return run_zero_shot(cfg, ZeroShotSettings.from_config(cfg.task.zero_shot))

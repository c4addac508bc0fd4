"""Zero-shot argument reconstruction with any causal LM: prompt for every R_i, parse, write, evaluate.

Hydra: ``python train.py task=missci-gen llm=smollm2 mode=zero-shot`` reaches ``run(cfg)`` through
``conf/task/missci-gen.yaml``. Unit tests and notebooks call ``reconstruct`` / ``run_zero_shot`` directly.
Writes ``<output_dir>/predictions-<split>.jsonl`` (format: missci/dataset/prediction_file.py) and
``<output_dir>/metrics-<split>.json``; returns the flat metric dict.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from common.io import atomic_write_json
from metrics.missci_premise import PremiseMetricConfig
from missci.analysis.evaluation import evaluate
from missci.dataset.prediction_file import FallacyPrediction, RankedPremise, write_predictions
from missci.dataset.reader import Argument, iter_fallacies, load_split
from missci.dataset.selection import select
from missci.prompting.answer_parser import parse_output
from missci.prompting.prompts import PromptOptions, classification_prompt, reconstruction_prompt
from models.llm.backends import GenerationBackend, build_backend
from models.llm.generation import GenerationSettings

log = logging.getLogger(__name__)


def reconstruct(
    backend: GenerationBackend,
    arguments: list[Argument],
    options: PromptOptions,
    settings: GenerationSettings,
    consistency: bool = False,
) -> list[FallacyPrediction]:
    """One prediction per R_i of ``arguments``; the prompts are independent, so the backend batches them."""
    pairs = list(iter_fallacies(arguments))
    outputs = backend.generate([reconstruction_prompt(a, f, options) for a, f in pairs], settings)
    predictions = []
    for (argument, fallacy), text in zip(pairs, outputs):
        parsed = parse_output(text)
        predictions.append(
            FallacyPrediction(
                argument.id,
                fallacy.id,
                [RankedPremise(c, p) for c, p in parsed.pairs],
                raw_output=text,
                unparsed_lines=parsed.unparsed_lines + int(parsed.fallback),
            )
        )
    if consistency:
        reclassify_own_premises(backend, pairs, predictions, options, settings)
    return predictions


def reclassify_own_premises(
    backend: GenerationBackend,
    pairs,
    predictions: list[FallacyPrediction],
    options: PromptOptions,
    settings: GenerationSettings,
) -> None:
    """Consistency check: the model classifies its own top-1 premise; stored as ``reclassified``."""
    prompts = [
        classification_prompt(a, f, pred.predictions[0].premise, options) for (a, f), pred in zip(pairs, predictions)
    ]
    short = dataclasses.replace(settings, max_new_tokens=min(settings.max_new_tokens, 32))
    for pred, text in zip(predictions, backend.generate(prompts, short)):
        pred.reclassified = [parse_output(text).classes[0]]


def run_zero_shot(
    *,
    llm: dict[str, Any],
    split: str = "dev",
    data_dir: str | None = None,
    prompt: dict[str, Any] | None = None,
    generation: dict[str, Any] | None = None,
    output_dir: str | Path = "outputs/missci",
    max_arguments: int | None = None,
    max_fallacies: int | None = None,
    consistency: bool = False,
    max_k: int = 6,
    premise_metrics: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Plain-argument runner (what ``run(cfg)`` calls)."""
    arguments = select(load_split(split, data_dir), max_arguments, max_fallacies)
    options = PromptOptions(**(prompt or {}))
    settings = GenerationSettings(**(generation or {}))
    predictions = reconstruct(build_backend(llm), arguments, options, settings, consistency)
    output_dir = Path(output_dir)
    write_predictions(output_dir / f"predictions-{split}.jsonl", predictions)
    premises = None if premise_metrics is None else PremiseMetricConfig(**premise_metrics)
    result = evaluate(arguments, predictions, max_k, premises)
    result.update(split=split, llm=llm.get("name", llm.get("name_or_path")), prompt=options.tag)
    atomic_write_json(output_dir / f"metrics-{split}.json", result)
    for metric, reason in result["unavailable"].items():
        log.warning("%s unavailable: %s", metric, reason)
    return {f"{split}/{k}": float(v) for k, v in result["metrics"].items()}


def common_arguments(cfg) -> tuple[dict, dict]:
    """``(task, common)``: the resolved task block and the arguments every Missci prompting runner takes
    from a composed config (model, split, data, prompt, generation with the run's seed, output, subset)."""
    from omegaconf import OmegaConf

    task = OmegaConf.to_container(cfg.task, resolve=True)
    generation = dict(task.get("generation") or {})
    if cfg.get("seed") is not None:
        generation["seed"] = int(cfg.seed)
    common = {
        "llm": OmegaConf.to_container(cfg.llm, resolve=True),
        "split": task["split"],
        "data_dir": task.get("data_dir"),
        "prompt": task.get("prompt"),
        "generation": generation,
        "output_dir": task["output_dir"],
        "max_arguments": task.get("max_arguments"),
        "max_fallacies": task.get("max_fallacies"),
    }
    return task, common


def print_results(title: str, metrics: dict[str, float], output_dir: str | Path) -> None:
    """A zero-shot run's results on stdout, as the command contract wants them (docs/commands.md): a title, one
    metric per line, and where the predictions and metrics files are."""
    from missci.cli_options import print_result

    print(f"### {title}")
    print_result(metrics, as_json=False)
    print(f"results: {output_dir}")


def run(cfg) -> dict[str, float]:
    """Hydra runner: reads ``cfg.task`` (split, prompt, generation, …) and ``cfg.llm`` (the model)."""
    task, common = common_arguments(cfg)
    metrics = run_zero_shot(
        **common,
        consistency=bool(task.get("consistency", False)),
        max_k=int(task.get("max_k", 6)),
        premise_metrics=task.get("premise_metrics"),
    )
    print_results(f"missci-gen · zero-shot · {cfg.llm.name} · {common['split']}", metrics, common["output_dir"])
    return metrics

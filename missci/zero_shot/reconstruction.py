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
from missci.dataset.reader import Argument, iter_fallacies
from missci.dataset.selection import select  # noqa: F401  (re-exported: the runners' subset rule)
from missci.prompting.answer_parser import parse_output
from missci.prompting.prompts import PromptOptions, classification_prompt, reconstruction_prompt
from missci.zero_shot.prompting_run import PromptingRun, run_from_config
from models.llm.backends import GenerationBackend
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
    consistency: bool = False,
    max_k: int = 6,
    premise_metrics: dict[str, Any] | None = None,
    **run_arguments: Any,
) -> dict[str, float]:
    """Plain-argument runner (what ``run(cfg)`` calls); ``run_arguments`` are the fields of ``PromptingRun``."""
    run = PromptingRun(**run_arguments)
    arguments, options, settings, backend = run.set_up()
    predictions = reconstruct(backend, arguments, options, settings, consistency)
    write_predictions(run.out / f"predictions-{run.split}.jsonl", predictions)
    premises = None if premise_metrics is None else PremiseMetricConfig(**premise_metrics)
    result = evaluate(arguments, predictions, max_k, premises)
    result.update(split=run.split, llm=run.model_name, prompt=options.tag)
    atomic_write_json(run.out / f"metrics-{run.split}.json", result)
    for metric, reason in result["unavailable"].items():
        log.warning("%s unavailable: %s", metric, reason)
    return {f"{run.split}/{k}": float(v) for k, v in result["metrics"].items()}


def print_results(title: str, metrics: dict[str, float], output_dir: str | Path) -> None:
    """A zero-shot run's results on stdout, as the command contract wants them (docs/commands.md): a title, one
    metric per line, and where the predictions and metrics files are."""
    from missci.cli_options import print_result

    print(f"### {title}")
    print_result(metrics, as_json=False)
    print(f"results: {output_dir}")


def run(cfg) -> dict[str, float]:
    """Hydra runner: reads ``cfg.task`` (split, prompt, generation, …) and ``cfg.llm`` (the model)."""
    task, prompting = run_from_config(cfg)
    metrics = run_zero_shot(
        **vars(prompting),
        consistency=bool(task.get("consistency", False)),
        max_k=int(task.get("max_k", 6)),
        premise_metrics=task.get("premise_metrics"),
    )
    print_results(f"missci-gen · zero-shot · {cfg.llm.name} · {prompting.split}", metrics, prompting.output_dir)
    return metrics

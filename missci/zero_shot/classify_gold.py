"""Fallacy classification given the gold premise (paper: 454 test rows), zero-shot with any causal LM.

Hydra: ``python train.py task=missci-cls llm=... mode=zero-shot``. Writes
``<output_dir>/classify-<split>.jsonl`` (one line per interchangeable fallacy: id, gold and predicted class,
raw output) and ``metrics-classify-<split>.json``; returns accuracy and macro-F1.
"""

from __future__ import annotations

from typing import Any

from common.io import atomic_write_json
from metrics.missci_classification import classification_metrics, classification_report
from missci.analysis.paper_figures import classification_reference
from missci.dataset.classes import CLASS_NAMES, OTHER
from missci.prompting.gold_premises import class_rows, classification_prompts, gold_premises, write_class_rows
from missci.prompting.prompts import PromptOptions
from missci.zero_shot.prompting_run import PromptingRun, run_from_config
from missci.zero_shot.reconstruction import print_results
from models.llm.backends import GenerationBackend
from models.llm.generation import GenerationSettings


def classify_gold_premises(
    backend: GenerationBackend, arguments, options: PromptOptions, settings: GenerationSettings
) -> list[dict[str, Any]]:
    items = gold_premises(arguments)
    return class_rows(items, backend.generate(classification_prompts(items, options), settings))


def class_details(rows: list[dict]) -> dict:
    """Per-class precision/recall/F1 and the confusion matrix of classification rows (the 9 classes, then
    "Other"), next to the paper's Table 3 figures."""
    report = classification_report([r["gold"] for r in rows], [r["predicted"] for r in rows], CLASS_NAMES + (OTHER,))
    return {"per_class": report["per_class"], "confusion": report["confusion"], "paper": classification_reference()}


def classify_split(**run_arguments: Any) -> dict[str, float]:
    """Classify the gold premises of a split (``run_arguments``: the fields of ``PromptingRun``), write the rows
    and the metrics; returns the flat metric dict."""
    run = PromptingRun(**run_arguments)
    arguments, options, settings, backend = run.set_up()
    rows = classify_gold_premises(backend, arguments, options, settings)
    write_class_rows(run.out / f"classify-{run.split}.jsonl", rows)
    metrics = classification_metrics([r["gold"] for r in rows], [r["predicted"] for r in rows])
    atomic_write_json(
        run.out / f"metrics-classify-{run.split}.json",
        {
            "metrics": metrics,
            "rows": len(rows),
            "split": run.split,
            "prompt": options.tag,
            "llm": run.model_name,
            **class_details(rows),
        },
    )
    return {f"{run.split}/cls/{k}": v for k, v in metrics.items()}


def run(cfg) -> dict[str, float]:
    """Hydra runner of task=missci-cls mode=zero-shot."""
    _, prompting = run_from_config(cfg)
    metrics = classify_split(**vars(prompting))
    print_results(f"missci-cls · zero-shot · {cfg.llm.name} · {prompting.split}", metrics, prompting.output_dir)
    return metrics

"""Fallacy classification given the gold premise (paper: 454 test rows), zero-shot with any causal LM.

Hydra: ``python train.py task=missci-cls llm=... mode=zero-shot``. Writes
``<output_dir>/classify-<split>.jsonl`` (one line per interchangeable fallacy: id, gold and predicted class,
raw output) and ``metrics-classify-<split>.json``; returns accuracy and macro-F1.
"""

from __future__ import annotations

import json
from typing import Any

from common.io import atomic_write_json, atomic_write_text
from metrics.missci_classification import classification_metrics, classification_report
from missci.analysis.paper_figures import classification_reference
from missci.dataset.classes import CLASS_NAMES, OTHER
from missci.prompting.answer_parser import parse_output
from missci.prompting.prompts import PromptOptions, classification_prompt
from missci.zero_shot.prompting_run import PromptingRun, run_from_config
from models.llm.backends import GenerationBackend
from models.llm.generation import GenerationSettings


def classify_gold_premises(
    backend: GenerationBackend, arguments, options: PromptOptions, settings: GenerationSettings
) -> list[dict[str, Any]]:
    rows = [(a, f, alt) for a in arguments for f in a.fallacies for alt in f.interchangeable]
    outputs = backend.generate([classification_prompt(a, f, alt.premise, options) for a, f, alt in rows], settings)
    return [
        {
            "id": alt.id,
            "fallacy_id": f.id,
            "gold": alt.fallacy_class,
            "predicted": parse_output(text).classes[0],
            "raw_output": text,
        }
        for (a, f, alt), text in zip(rows, outputs)
    ]


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
    atomic_write_text(
        run.out / f"classify-{run.split}.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    )
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
    return classify_split(**vars(prompting))

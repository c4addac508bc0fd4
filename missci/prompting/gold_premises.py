"""Classifying the gold premises (missci-cls), shared by the zero-shot and the LoRA runners.

Every interchangeable fallacious premise of every R_i is one item (the paper's 454 test rows); its prompt asks for
the class of that premise, and its row records the gold class, the class parsed from the model's answer and the
answer itself. The rows file is JSON lines, one row per item, in file order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.io import atomic_write_text
from missci.dataset.reader import Argument, Fallacy, InterchangeableFallacy
from missci.prompting.answer_parser import parse_output
from missci.prompting.prompts import PromptOptions, classification_prompt

GoldPremise = tuple[Argument, Fallacy, InterchangeableFallacy]


def gold_premises(arguments: Sequence[Argument]) -> list[GoldPremise]:
    """Every (argument, R_i, interchangeable premise) of ``arguments``, in file order."""
    return [(a, f, alt) for a in arguments for f in a.fallacies for alt in f.interchangeable]


def classification_prompts(items: Sequence[GoldPremise], options: PromptOptions) -> list[str]:
    return [classification_prompt(a, f, alt.premise, options) for a, f, alt in items]


def class_rows(items: Sequence[GoldPremise], answers: Sequence[str]) -> list[dict[str, Any]]:
    """One row per item: its id, its R_i's id, the gold class, the class parsed from the answer, the answer."""
    return [
        {
            "id": alt.id,
            "fallacy_id": f.id,
            "gold": alt.fallacy_class,
            "predicted": parse_output(text).classes[0],
            "raw_output": text,
        }
        for (_, f, alt), text in zip(items, answers, strict=True)
    ]


def write_class_rows(path: str | Path, rows: Sequence[dict]) -> Path:
    return atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def read_class_rows(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]

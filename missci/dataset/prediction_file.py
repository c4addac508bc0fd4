"""The prediction file format of reconstruction runs (JSONL, one line per fallacious reasoning R_i).

Line format::

    {"argument_id": "arg-34", "fallacy_id": "arg-34:1",
     "predictions": [{"class": "Hasty Generalization", "premise": "..."}, ...],   # rank order, best first
     "raw_output": "<the model's text>",              # absent for baselines
     "unparsed_lines": 0,                             # lines of raw_output the parser could not use
     "reclassified": ["Hasty Generalization", ...]}   # optional: the model's class for its own premises

Classes are the 9 Missci names or "Other". Keeping the raw output lets anyone re-parse a run later.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import UserError
from common.io import atomic_write_text
from common.json_files import read_json_lines
from common.unique_keys import UniqueKeys
from metrics.missci_ranking import RankedRow
from missci.dataset.classes import CLASS_NAMES, OTHER
from missci.dataset.reader import Argument

VALID_CLASSES = set(CLASS_NAMES) | {OTHER}


@dataclass(frozen=True)
class RankedPremise:
    fallacy_class: str
    premise: str


@dataclass
class FallacyPrediction:
    argument_id: str
    fallacy_id: str
    predictions: list[RankedPremise]
    raw_output: str | None = None
    unparsed_lines: int = 0
    reclassified: list[str] | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        obj = {
            "argument_id": self.argument_id,
            "fallacy_id": self.fallacy_id,
            "predictions": [{"class": p.fallacy_class, "premise": p.premise} for p in self.predictions],
            "unparsed_lines": self.unparsed_lines,
        }
        if self.raw_output is not None:
            obj["raw_output"] = self.raw_output
        if self.reclassified is not None:
            obj["reclassified"] = self.reclassified
        obj.update(self.extra)
        return obj


def write_predictions(path: str | Path, predictions: list[FallacyPrediction]) -> Path:
    text = "".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in predictions)
    return atomic_write_text(path, text)


LINE_FIX = "see missci/dataset/prediction_file.py for the line format."


def read_predictions(path: str | Path) -> list[FallacyPrediction]:
    path = Path(path)
    result = []
    # two predictions for one R_i: which one to score is a guess
    fallacy_ids = UniqueKeys(
        path,
        "a second prediction for fallacy {key!r} (first at line {first}).",
        "keep one line per fallacious reasoning step R_i.",
    )
    for number, obj in read_json_lines(path, LINE_FIX, missing_fix="pass the JSONL a zero-shot run wrote."):
        prediction = _from_json(obj, path, number)
        fallacy_ids.add(prediction.fallacy_id, number)
        result.append(prediction)
    return result


def _from_json(obj, path: Path, number: int) -> FallacyPrediction:
    def fail(problem: str):
        raise UserError(problem, path=path, line=number, fix=LINE_FIX)

    if not isinstance(obj, dict):
        fail("a line must be a JSON object.")
    for key in ("argument_id", "fallacy_id", "predictions"):
        if key not in obj:
            fail(f"field {key!r} is missing.")
        if key != "predictions" and (not isinstance(obj[key], str) or not obj[key].strip()):
            fail(f"field {key!r} must be a non-empty string.")
    if not isinstance(obj["predictions"], list):
        fail("field 'predictions' must be a list.")
    ranked = []
    for i, item in enumerate(obj["predictions"]):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("class"), str)
            or not isinstance(item.get("premise"), str)
        ):
            fail(f"field predictions[{i}] must have string 'class' and 'premise'.")
        if item["class"] not in VALID_CLASSES:
            fail(f"field predictions[{i}].class {item['class']!r} is not one of the 9 classes or 'Other'.")
        ranked.append(RankedPremise(item["class"], item["premise"]))
    raw_output, unparsed, reclassified = obj.get("raw_output"), obj.get("unparsed_lines", 0), obj.get("reclassified")
    if raw_output is not None and not isinstance(raw_output, str):
        fail("field 'raw_output' must be a string.")
    if unparsed is None:
        unparsed = 0
    if isinstance(unparsed, bool) or not isinstance(unparsed, int) or unparsed < 0:
        fail(f"field 'unparsed_lines' must be a count (a whole number >= 0), not {str(unparsed)[:40]!r}.")
    if reclassified is not None and (
        not isinstance(reclassified, list) or not all(isinstance(c, str) for c in reclassified)
    ):
        fail("field 'reclassified' must be a list of class names.")
    known = {"argument_id", "fallacy_id", "predictions", "raw_output", "unparsed_lines", "reclassified"}
    return FallacyPrediction(
        argument_id=obj["argument_id"],
        fallacy_id=obj["fallacy_id"],
        predictions=ranked,
        raw_output=raw_output,
        unparsed_lines=unparsed,
        reclassified=reclassified,
        extra={k: v for k, v in obj.items() if k not in known},
    )


def align_with_gold(
    arguments: list[Argument],
    predictions: list[FallacyPrediction],
    path: str | Path = "<predictions>",
    only_predicted: bool = False,
) -> list[tuple[Argument, object, FallacyPrediction]]:
    """Pair each gold R_i (file order) with its prediction; a missing R_i is an error unless
    ``only_predicted`` restricts the evaluation to the arguments that have predictions."""
    by_id = {p.fallacy_id: p for p in predictions}
    predicted_args = {p.argument_id for p in predictions}
    pairs, missing = [], []
    for argument in arguments:
        if only_predicted and argument.id not in predicted_args:
            continue
        for fallacy in argument.fallacies:
            if fallacy.id in by_id:
                pairs.append((argument, fallacy, by_id[fallacy.id]))
            else:
                missing.append(fallacy.id)
    if missing:
        raise UserError(
            f"{len(missing)} fallacies of the split have no prediction (first: {missing[0]}).",
            path=path,
            fix="predict every R_i of the split, check --split, or pass --only-predicted.",
        )
    if not pairs:
        raise UserError("no prediction matches an argument of the split.", path=path, fix="check --split.")
    return pairs


def ranked_rows(pairs) -> list[RankedRow]:
    return [
        RankedRow(argument.id, fallacy.gold_classes, tuple(p.fallacy_class for p in pred.predictions))
        for argument, fallacy, pred in pairs
    ]

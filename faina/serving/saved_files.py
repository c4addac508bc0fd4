"""The schemas of a trained Faina model's files: a fold's ``model.json`` and an exported folder's ``config.json``.

Both may come from someone else (a colleague's results folder, a hub download), so they are data only: every
field is checked here (types, ranges, closed sets, labels against the label inventory) before a tensor or
an object is built, and the model parts are names mapped through ``models.registry`` (``models.saved_model``).
``trust_remote_code`` read from such a file is refused unless the user asked for it on their own command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from common.errors import UserError
from common.labels import LabelInventory
from common.untrusted import Strict, read_json_object, refuse_code, validated
from faina.data.post_context import CONTEXT_FIELDS
from models.encoder_settings import DecoderSettings, EncoderSettings
from models.saved_model import CheckedModel, check_model_block

FOLD_FORMAT = "faina-fold-model"
# 1: no "format" key, Hydra _target_ nodes in "model"; 2: the decision rule as flat module keys (both still read,
# translated: models.saved_model); 3: the decision rule as one "decision" block
FOLD_FORMAT_VERSION = 3
FOLDER_FORMAT_VERSION = 2  # 1: the decision rule as flat module keys (still read, translated)
MAX_VIEWS = 64
MAX_LABELS = 10_000

Text = Annotated[str, Field(min_length=1, max_length=4096)]
Label = Annotated[str, Field(min_length=1, max_length=200)]
Labels = Annotated[list[Label], Field(min_length=1, max_length=MAX_LABELS)]
Views = Annotated[int, Field(ge=1, le=MAX_VIEWS)]
MaxLength = Annotated[int, Field(ge=2, le=1_000_000)]
Level = Literal["span", "post"]


def _each_once(fields: list[str]) -> list[str]:
    if len(set(fields)) != len(fields):
        raise ValueError(f"names a field twice: {fields}")
    return fields


# the header fields a model reads before each post's text, each once
Context = Annotated[
    list[Literal[tuple(CONTEXT_FIELDS)]], Field(max_length=len(CONTEXT_FIELDS)), AfterValidator(_each_once)
]
Grain = Literal["fine", "coarse"]
FOLD_FIX = "train the fold again, or restore the model.json that the run wrote"
FOLDER_FIX = "export the model again with python -m faina.export"


# a fold's encoder block: the run's encoder settings (earlier releases wrote the first four keys only)
EncoderBlock = EncoderSettings


class FoldModelFile(Strict):
    format: Literal["faina-fold-model"] = FOLD_FORMAT
    format_version: Annotated[int, Field(ge=1, le=FOLD_FORMAT_VERSION)] = 1
    task: Annotated[str, Field(min_length=1, max_length=100)]
    level: Level
    grain: Grain
    labels: Labels
    num_views: Views
    labels_inventory: Text
    model: dict[str, Any]
    encoder: dict[str, Any]
    context: Context = []


class FolderEncoder(DecoderSettings):
    name: Annotated[str, Field(max_length=200)] | None = None
    source: Annotated[str, Field(max_length=4096)] | None = None
    max_length: MaxLength
    model_type: Annotated[str, Field(max_length=100)] | None = None
    # a folder inside the model folder, by its plain name
    path: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")] = "encoder"
    # and a decoder LLM's settings (DecoderSettings; absent in older exports: a BERT-style encoder). With peft,
    # model.safetensors holds the adapter and the heads, and the base weights load from source


Rules = dict[Annotated[str, Field(max_length=200)], float | list[float] | list[list[float]]]


class ModelFolderConfig(Strict):
    format: Literal["faina-model"]
    format_version: Annotated[int, Field(ge=1, le=FOLDER_FORMAT_VERSION)]
    model_type: Literal["fallacy-framework"] | None = None  # transformers' AutoConfig key; absent in older exports
    architecture: str
    task: Annotated[str, Field(min_length=1, max_length=100)]
    level: Level
    grain: Grain
    labels: Labels
    views: Annotated[list[Label], Field(min_length=1, max_length=MAX_VIEWS)]
    num_views: Views
    thresholds: Rules = {}
    module: dict[str, Any] = {}
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.2
    encoder: FolderEncoder
    context: Context = []


def refuse_remote_code(encoder: EncoderBlock, path: Path, allowed: bool) -> None:
    if encoder.trust_remote_code and not allowed:
        raise UserError(
            "encoder.trust_remote_code is true: loading this model would run Python code that ships with "
            f"its encoder ({encoder.name_or_path}), and a saved file cannot switch that on",
            path=path,
            fix="only if you trust that code, pass --trust-remote-code (python -m faina.predict) or "
            "the argument trust_remote_code of load_exported; otherwise use a model whose encoder needs no custom code",
        )


def check_labels(labels: list[str], grain: str, inventory: LabelInventory, path: Path, fix: str) -> None:
    """The model's labels are its grain's labels in the inventory, in the inventory's (decoder) order."""
    if len(set(labels)) != len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise UserError(f"the field labels lists {', '.join(twice)} twice", path=path, fix=fix)
    expected = list(inventory.labels_of(grain))
    if labels != expected:
        unknown = [label for label in labels if label not in expected]
        missing = [label for label in expected if label not in labels]
        detail = (
            (f"unknown: {', '.join(unknown)}" if unknown else "")
            + ("; " if unknown and missing else "")
            + (f"missing: {', '.join(missing)}" if missing else "")
        )
        raise UserError(
            f"the field labels does not match the {grain} labels of {inventory.source} ({detail or 'another order'})",
            path=path,
            fix=fix,
        )


def read_fold_model_file(
    path: Path, trust_remote_code: bool = False
) -> tuple[FoldModelFile, CheckedModel, EncoderBlock]:
    """``model.json`` of a fold folder, checked (format 1 of earlier releases is translated)."""
    raw = read_json_object(path, "the model description", FOLD_FIX)
    refuse_code({k: v for k, v in raw.items() if k != "model"}, path)  # the model block: its own translation
    top = validated(FoldModelFile, raw, path, fix=FOLD_FIX)
    checked = check_model_block(top.model, path)
    encoder = validated(EncoderBlock, top.encoder, path, "encoder", fix=FOLD_FIX)
    refuse_remote_code(encoder, path, trust_remote_code)
    return top, checked, encoder


def fold_model_json(
    task: str,
    level: str,
    grain: str,
    labels,
    num_views: int,
    labels_inventory: str,
    model: CheckedModel,
    encoder: dict,
    context: Sequence[str] = (),
) -> dict:
    """The content of a fold's ``model.json``: names and plain values only (``context`` only when the model reads
    one, so the files of models without it are those of earlier releases)."""
    return {
        "format": FOLD_FORMAT,
        "format_version": FOLD_FORMAT_VERSION,
        "task": task,
        "level": level,
        "grain": grain,
        "labels": list(labels),
        "num_views": num_views,
        "labels_inventory": labels_inventory,
        "model": model.saved(),
        "encoder": EncoderBlock.model_validate(encoder).model_dump(),
        **({"context": list(context)} if context else {}),
    }


def read_folder_config(path: Path) -> ModelFolderConfig:
    """``config.json`` of an exported folder, checked (the module settings by ``check_folder_model``)."""
    raw = read_json_object(path, "the model config", FOLDER_FIX)
    if raw.get("format") != "faina-model":
        raise UserError(
            'not a Faina model folder (config.json has no "format": "faina-model")',
            path=path,
            fix="point to a folder written by python -m faina.export, or to a fold folder of a run",
        )
    version = raw.get("format_version", 0)
    if isinstance(version, int) and version > FOLDER_FORMAT_VERSION:
        raise UserError(
            f"model folder format {version} is newer than this code reads ({FOLDER_FORMAT_VERSION})",
            path=path,
            fix="update the fallacy-framework package",
        )
    refuse_code(raw, path)
    config = validated(ModelFolderConfig, raw, path, fix=FOLDER_FIX)
    if config.views != [f"a{v + 1}" for v in range(config.num_views)]:
        raise UserError(
            f"the field views must be a1..a{config.num_views} for num_views={config.num_views}",
            path=path,
            fix=FOLDER_FIX,
        )
    for name, value in config.thresholds.items():
        if "threshold" in name.rsplit(".", 1)[-1] and not all(0 <= x <= 1 for x in _flat(value)):
            raise UserError(f"the field thresholds.{name} has values outside [0, 1]", path=path, fix=FOLDER_FIX)
    return config


def check_folder_model(config: ModelFolderConfig, path: Path) -> CheckedModel:
    """The exported architecture and its settings as a checked model block (no optimiser: the class default)."""
    return check_model_block(
        {"architecture": config.architecture, "dropout": config.dropout, "module": config.module}, path, prefix=""
    )


def _flat(value) -> list[float]:
    if isinstance(value, list):
        return [x for item in value for x in _flat(item)]
    return [value]

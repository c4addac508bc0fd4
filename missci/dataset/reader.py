"""Typed reader for the official Missci JSONL files.

Every argument is validated on reading (required fields, types, the 9 class names), so later stages never
meet a half-formed record; a malformed line ends in one ``UserError`` naming the file, line and field.
The data folder is never hard-wired: ``--data DIR`` wins, then the ``MISSCI_DATA`` environment variable,
then ``data/missci`` under the repository root. The name ``sample`` (in any of them) means the synthetic
sample shipped in the package (``missci/sample_data/``, written by ``python -m missci.sample``). It is never
picked silently: a run on synthetic data must be asked for, so its numbers are not mistaken for Missci's.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import UserError
from common.json_files import parse_json, read_json_lines
from common.unique_keys import UniqueKeys
from missci.dataset.classes import CLASS_NAMES

SPLITS = ("dev", "test")
log = logging.getLogger(__name__)
REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "sample"
SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"
LINE_FIX = "each line must be one JSON object; repair the line or re-download the file."
DOWNLOAD_FIX = (
    "fetch the files with `python -m missci.download DIR` and pass `--data DIR` (or set MISSCI_DATA); "
    "`--data sample` (task.data_dir=sample) uses the synthetic sample shipped with the package."
)


@dataclass(frozen=True)
class InterchangeableFallacy:
    """One alternative fallacious premise p̄_i,j with its class f_i,j; any one of them bridges the gap."""

    id: str
    premise: str
    fallacy_class: str


@dataclass(frozen=True)
class Fallacy:
    """One fallacious reasoning step R_i of an argument."""

    id: str
    context: str
    consolidation_comment: str
    interchangeable: tuple[InterchangeableFallacy, ...]

    @property
    def gold_classes(self) -> tuple[str, ...]:
        return tuple(f.fallacy_class for f in self.interchangeable)


@dataclass(frozen=True)
class Argument:
    id: str
    claim: str
    accurate_premise: str
    hidden_premises: tuple[str, ...]
    fallacies: tuple[Fallacy, ...]
    study_url: str
    meta: dict


def resolve_data_dir(data: str | Path | None = None) -> Path:
    """The folder holding ``{dev,test}.missci.jsonl``: the argument, else MISSCI_DATA, else data/missci;
    ``sample`` names the packaged synthetic sample."""
    chosen = data or os.environ.get("MISSCI_DATA") or REPO_ROOT / "data" / "missci"
    return SAMPLE_DIR if str(chosen) == SAMPLE else Path(chosen)


def is_sample(data: str | Path | None = None) -> bool:
    """Whether ``data`` (resolved as above) is the packaged synthetic sample, not the real Missci files."""
    return resolve_data_dir(data).resolve() == SAMPLE_DIR.resolve()


def split_path(split: str, data: str | Path | None = None) -> Path:
    if split not in SPLITS:
        raise UserError(f"unknown Missci split {split!r}.", fix=f"use one of {', '.join(SPLITS)}.")
    path = resolve_data_dir(data) / f"{split}.missci.jsonl"
    if not path.is_file():
        raise UserError("Missci data file not found.", path=path, fix=DOWNLOAD_FIX)
    return path


def load_split(split: str, data: str | Path | None = None) -> list[Argument]:
    """All arguments of ``split`` ("dev" or "test") from the data folder, in file order."""
    path = split_path(split, data)
    if is_sample(data):
        _warn_synthetic_once()
    return read_arguments(path)


@functools.lru_cache(maxsize=1)
def _warn_synthetic_once() -> None:
    log.warning(
        "reading the synthetic Missci sample (%s), not Missci: its scores say nothing about the paper's task",
        SAMPLE_DIR,
    )


def read_arguments(path: str | Path) -> list[Argument]:
    path = Path(path)
    arguments: list[Argument] = []
    argument_ids = UniqueKeys(path, "duplicate argument id {key!r}.", "each argument must appear once.")
    # predictions are matched to R_i by this id: it must name one
    fallacy_ids = UniqueKeys(
        path,
        "duplicate fallacy id {key!r} (first at line {first}).",
        "give every fallacious reasoning step its own id.",
    )
    for line_number, raw in read_json_lines(path, LINE_FIX, missing_fix=DOWNLOAD_FIX):
        argument = argument_from_json(raw, path, line_number)
        argument_ids.add(argument.id, line_number)
        for fallacy in argument.fallacies:
            fallacy_ids.add(fallacy.id, line_number)
        arguments.append(argument)
    if not arguments:
        raise UserError("the Missci file holds no arguments.", path=path, fix=DOWNLOAD_FIX)
    return arguments


def parse_argument_line(line: str, path: Path, line_number: int) -> Argument:
    return argument_from_json(parse_json(line, path, line_number, LINE_FIX), path, line_number)


def argument_from_json(raw: Any, path: Path, line_number: int) -> Argument:
    reader = _FieldReader(path, line_number)
    obj = reader.mapping(raw, "")
    body = reader.mapping(reader.get(obj, "argument", ""), "argument")
    p0 = reader.mapping(reader.get(body, "accurate_premise_p0", "argument"), "argument.accurate_premise_p0")
    fallacy_list = reader.get(body, "fallacies", "argument")
    if not isinstance(fallacy_list, list) or not fallacy_list:
        reader.fail("argument.fallacies", "must be a non-empty list")
    fallacies = tuple(reader.fallacy(item, f"argument.fallacies[{i}]") for i, item in enumerate(fallacy_list))
    hidden = body.get("hidden_premises")
    if hidden is None:
        hidden = []
    if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
        reader.fail("argument.hidden_premises", "must be a list of strings")
    study = obj.get("study")
    study = {} if study is None else reader.mapping(study, "study")
    url = study.get("url")
    if url is not None and not isinstance(url, str):
        reader.fail("study.url", "must be a string")
    meta = obj.get("meta")
    return Argument(
        id=reader.text(obj, "id", ""),
        claim=reader.text(body, "claim", "argument"),
        accurate_premise=reader.text(p0, "premise", "argument.accurate_premise_p0"),
        hidden_premises=tuple(hidden),
        fallacies=fallacies,
        study_url=url or "",
        meta={} if meta is None else reader.mapping(meta, "meta"),
    )


class _FieldReader:
    """Reads fields of one line and raises a UserError naming the exact field when one is wrong."""

    def __init__(self, path: Path, line_number: int):
        self.path, self.line_number = path, line_number

    def fail(self, field: str, problem: str):
        raise UserError(
            f"field {field!r} {problem}.",
            path=self.path,
            line=self.line_number,
            fix="repair the line or re-download the official file.",
        )

    def get(self, obj: dict, key: str, where: str) -> Any:
        field = f"{where}.{key}" if where else key
        if key not in obj:
            self.fail(field, "is missing")
        return obj[key]

    def mapping(self, value: Any, field: str) -> dict:
        if not isinstance(value, dict):
            self.fail(field or "<line>", "must be a JSON object")
        return value

    def text(self, obj: dict, key: str, where: str, allow_empty: bool = False) -> str:
        value = self.get(obj, key, where)
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            self.fail(f"{where}.{key}" if where else key, "must be a non-empty string")
        return value

    def fallacy(self, raw: Any, where: str) -> Fallacy:
        obj = self.mapping(raw, where)
        alternatives = self.get(obj, "interchangeable_fallacies", where)
        if not isinstance(alternatives, list) or not alternatives:
            self.fail(f"{where}.interchangeable_fallacies", "must be a non-empty list")
        items = []
        for j, alt in enumerate(alternatives):
            alt_where = f"{where}.interchangeable_fallacies[{j}]"
            alt_obj = self.mapping(alt, alt_where)
            name = self.text(alt_obj, "class", alt_where)
            if name not in CLASS_NAMES:
                raise UserError(
                    f"field {alt_where}.class has unknown fallacy class {name!r}.",
                    path=self.path,
                    line=self.line_number,
                    fix=f"use one of the 9 classes: {', '.join(CLASS_NAMES)}.",
                )
            items.append(
                InterchangeableFallacy(
                    id=self.text(alt_obj, "id", alt_where),
                    premise=self.text(alt_obj, "premise", alt_where),
                    fallacy_class=name,
                )
            )
        comment = obj.get("consolidation_comment")
        if comment is not None and not isinstance(comment, str):
            self.fail(f"{where}.consolidation_comment", "must be a string")
        return Fallacy(
            id=self.text(obj, "id", where),
            context=self.text(obj, "fallacy_context", where, allow_empty=True),
            consolidation_comment=comment or "",
            interchangeable=tuple(items),
        )


def iter_fallacies(arguments: list[Argument]) -> Iterator[tuple[Argument, Fallacy]]:
    """Every (argument, R_i) pair in file order."""
    for argument in arguments:
        for fallacy in argument.fallacies:
            yield argument, fallacy

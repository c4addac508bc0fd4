"""The task entries of a multi-task run (``task=multi``): what each trains on, read and checked before training.

A multi-task run lists entries under ``task.entries`` (a mapping, so ``task.entries.post_f.weight=0.5`` reaches one
entry from the command line). Each entry is a single-task run's worth of settings: its level (``span``: an MVMD
decoder set, ``post``: an MVML head set), its grain, its data block (the keys of ``conf/data``), its model block (the
keys of ``conf/model``), a loss weight, a head name (entries with the same head name share one head, as MaChAmp shares
decoders by task name), whether it is the target (the one whose folds the run splits and whose dev score selects
the checkpoint by default) and its corpus (a name; by default its training file): entries of the same corpus hold
the same posts, which stay in the same part of every fold (``faina.data.entry_folds``). Everything is checked here, with one message naming the entry and the fix, before a
model is built.

Each entry's data block is read as a single-task run's (``faina.data.task_data.read_task_data``): Faina files or a
``datasets`` dataset, a CoNLL file for a post-level entry giving the post labels of its spans, a file named by
several entries read once. A single-task run is the one-entry case (``single_entry``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import UserError
from faina.data.task_data import TaskData, read_task_data

LEVEL_MODELS = {"span": "mvmd", "post": "mvml"}  # the model each level trains (conf/model)
LEVEL_FILES = {"span": "conll", "post": "tsv"}  # the file layout of each level's predictions
GRAINS = ("fine", "coarse")
ENTRY_KEYS = {"level", "grain", "data", "model", "weight", "head", "target", "corpus"}


@dataclass(frozen=True)
class TaskEntry:
    """One entry of a multi-task run, its data read. ``task``: the ``task`` block a single-task run of this entry
    would have (name, level, grain, file layout, evaluator task), so the single-task scorers and writers serve it."""

    name: str
    level: str
    grain: str
    head: str
    weight: float
    target: bool
    data: TaskData
    task: dict[str, Any]
    data_block: dict[str, Any]
    model_block: dict[str, Any]
    option: str = field(default="", compare=False)  # where its settings live: task.entries.<name>
    corpus: str = ""  # entries of one corpus (the same name) keep each post in the same fold part


def entry_task_block(level: str, grain: str) -> dict[str, Any]:
    """The ``task`` block of a single-task run at ``level`` and ``grain`` (``span`` + ``fine``: span-f's)."""
    return {
        "name": f"{level}-{grain[0]}",
        "level": level,
        "grain": grain,
        "file_ext": LEVEL_FILES[level],
        "eval_task": f"{level}-{grain}",
    }


def read_entries(entries: Mapping[str, Any] | None, official: bool = False) -> list[TaskEntry]:
    """The entries of ``task.entries`` (plain values: the resolved config; an entry set to null is switched off),
    their data read and every rule checked:
    at least one entry, known levels and grains, weights > 0, exactly one target, readable non-empty data, and entries
    sharing a head agreeing on level, labels and views."""
    entries = {name: spec for name, spec in (entries or {}).items() if spec is not None}  # null: switched off
    if not entries:
        raise UserError(
            "task=multi lists no task entries",
            fix="add entries under task.entries (docs/multitask.md), e.g. task=multi",
        )
    cache: dict[tuple, Any] = {}
    read = [_read_entry(str(name), spec, official, cache) for name, spec in entries.items()]
    targets = [entry.name for entry in read if entry.target]
    if len(targets) != 1:
        found = "none is" if not targets else f"{len(targets)} are ({', '.join(targets)})"
        raise UserError(
            f"a multi-task run needs exactly one target entry; {found}",
            fix="mark one entry task.entries.<name>.target=true and the others false",
        )
    check_shared_heads(read)
    return read


def _read_entry(name: str, spec: Mapping[str, Any], official: bool, cache: dict) -> TaskEntry:
    option = f"task.entries.{name}"
    unknown = sorted(set(spec) - ENTRY_KEYS)
    if unknown:
        raise UserError(
            f"{option} has unknown key(s): {', '.join(unknown)}", fix=f"use only {', '.join(sorted(ENTRY_KEYS))}"
        )
    level = spec.get("level")
    if level not in LEVEL_MODELS:
        raise UserError(
            f"{option}.level={level!r} is not a level", fix=f"set {option}.level to one of {', '.join(LEVEL_MODELS)}"
        )
    grain = spec.get("grain", "fine")
    if grain not in GRAINS:
        raise UserError(f"{option}.grain={grain!r} is not a grain", fix=f"set {option}.grain to fine or coarse")
    weight = spec.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) or weight <= 0:
        raise UserError(
            f"{option}.weight={weight!r}: a loss weight must be a number above 0",
            fix=f"set {option}.weight to a positive number (1.0: the entry's loss as it is)",
        )
    model_block = dict(spec.get("model") or {})
    expected = LEVEL_MODELS[level]
    if model_block.get("name") != expected:
        raise UserError(
            f"{option} is a {level}-level entry and its model is {model_block.get('name')!r}",
            fix=f"give it the {expected} model ({option}.model is composed from conf/model/{expected}.yaml in "
            "conf/task/multi.yaml)",
        )
    data_block = dict(spec.get("data") or {})
    data = _read_entry_data(option, level, grain, data_block, official, cache)
    head = spec.get("head") or name
    corpus = spec.get("corpus") or str(Path(data_block.get("train_path") or data_block.get("path")).resolve())
    return TaskEntry(
        name,
        level,
        grain,
        str(head),
        float(weight),
        bool(spec.get("target", False)),
        data,
        entry_task_block(level, grain),
        data_block,
        model_block,
        option,
        str(corpus),
    )


def _read_entry_data(option: str, level: str, grain: str, block: Mapping[str, Any], official: bool, cache: dict):
    try:
        return read_task_data(block, level, grain, official, where=f"{option}.data", cache=cache)
    except UserError as error:  # the reader's message, said of the entry
        raise UserError(
            f"task entry {option.split('.')[-1]!r}: {error.message}", path=error.path, line=error.line, fix=error.fix
        ) from None


def single_entry(
    task: Mapping[str, Any], data_block: Mapping[str, Any], model_block: Mapping[str, Any], official: bool
) -> TaskEntry:
    """A single-task run (``task=span-f``) as the one entry it is: the task's level and grain, the run's ``data``
    and ``model`` blocks, its own head, the target. Its messages name ``data.*`` as the run's options are named."""
    level, grain = task["level"], task["grain"]
    data = read_task_data(data_block, level, grain, official)
    source = data_block.get("train_path") or data_block.get("path") or task["name"]
    return TaskEntry(
        str(task["name"]),
        level,
        grain,
        str(task["name"]),
        1.0,
        True,
        data,
        {key: task[key] for key in ("name", "level", "grain", "file_ext", "eval_task")},
        dict(data_block),
        dict(model_block),
        "",
        str(source),
    )


def check_shared_heads(entries: list[TaskEntry]) -> None:
    """Entries naming the same head train one head: they must agree on level, label list and model views."""
    first: dict[str, TaskEntry] = {}
    for entry in entries:
        other = first.setdefault(entry.head, entry)
        if other is entry:
            continue
        mine = (entry.level, entry.data.labels, entry.data.model_views)
        theirs = (other.level, other.data.labels, other.data.model_views)
        if mine != theirs:
            raise UserError(
                f"task entries {other.name!r} and {entry.name!r} share the head {entry.head!r} but differ: "
                f"{_describe(other)} against {_describe(entry)}",
                fix=f"give one of them its own head ({entry.option}.head=null) or the same level, label inventory "
                "and views",
            )


def _describe(entry: TaskEntry) -> str:
    return f"{entry.level} level, {len(entry.data.labels)} labels, {entry.data.model_views} view(s)"


def target_entry(entries: list[TaskEntry]) -> TaskEntry:
    return next(entry for entry in entries if entry.target)

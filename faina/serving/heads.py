"""The heads of a multi-task model folder, and which of them a command serves (``--head NAME``).

A fold of a multi-task run (``task=multi``) holds one folder per entry, each a complete single-task model folder
(``model.json`` + ``model.safetensors``: the entry's head with the shared encoder), and ``heads.json`` naming them:
``{"target": NAME, "heads": {NAME: {"folder": NAME, "head": HEAD}}}``. ``faina.predict``, ``faina.tag`` and
``faina.export`` take such a fold folder with ``--head NAME`` (one head) or without it (every head, one output each);
a single-task folder takes no ``--head``. The file is data: a folder name is a plain name inside the fold folder,
never a path elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path

from common.errors import UserError

HEADS_FILE = "heads.json"
HEAD_FIX = "point to a fold folder of a finished task=multi run (results/<name>/fold0), written by this project"


def head_folders(model_dir: str | Path, head: str | None = None) -> list[tuple[str | None, Path]]:
    """``(head name, model folder)`` of each head ``head`` chooses (all when ``None``); ``[(None, model_dir)]`` for a
    single-task folder. For the results folder of a multi-task run (its folds hold ``heads.json``) the folder is
    ``model_dir`` itself, whose fold models of that head make an ensemble (``load_predictor(..., head=)``)."""
    model_dir = Path(model_dir)
    index_path = model_dir / HEADS_FILE
    first_fold = sorted(model_dir.glob(f"fold*/{HEADS_FILE}"))
    if not index_path.is_file() and first_fold:  # a results folder: the heads of its first fold name them all
        names = [name for name, _ in head_folders(first_fold[0].parent, head)]
        return [(name, model_dir) for name in names]
    if not index_path.is_file():
        if head is not None:
            raise UserError(
                f"--head {head} chooses a head of a multi-task model, and this folder holds a single-task model "
                f"(no {HEADS_FILE})",
                path=model_dir,
                fix="drop --head, or point to a fold folder of a task=multi run",
            )
        return [(None, model_dir)]
    heads = read_heads_file(index_path)
    if head is None:
        return [(name, model_dir / folder) for name, folder in heads.items()]
    if head not in heads:
        raise UserError(
            f"the model has no head {head!r}", path=index_path, fix=f"use --head with one of: {', '.join(heads)}"
        )
    return [(head, model_dir / heads[head])]


def read_heads_file(path: Path) -> dict[str, str]:
    """Head name → folder name, checked: a JSON object whose ``heads`` maps names to plain folder names that exist."""
    from common.untrusted import read_json_object

    heads = read_json_object(path, HEADS_FILE, HEAD_FIX).get("heads")
    if not isinstance(heads, dict) or not heads:
        raise UserError(f"{HEADS_FILE} lists no heads", path=path, fix=HEAD_FIX)
    folders = {}
    for name, entry in heads.items():
        folder = entry.get("folder") if isinstance(entry, dict) else None
        plain = isinstance(folder, str) and folder not in ("", ".", "..") and Path(folder).name == folder
        if not plain or "\\" in folder:
            raise UserError(
                f"head {name!r} names the folder {folder!r}, not a plain folder name", path=path, fix=HEAD_FIX
            )
        if not (path.parent / folder).is_dir():
            raise UserError(f"head {name!r}: its folder {folder} is missing", path=path, fix=HEAD_FIX)
        folders[str(name)] = folder
    return folders


def heads_reading(heads: list[tuple[str | None, Path]], input_path: str | Path) -> list[tuple[str | None, Path]]:
    """The heads of ``heads`` whose level reads ``input_path`` (a ``.conll`` file: span heads; ``.tsv``: post heads),
    all of them when none does (the first then says which files it reads)."""
    if len(heads) < 2:
        return heads
    suffix = Path(input_path).suffix.lower()
    reading = [(name, folder) for name, folder in heads if _level_files(folder, name) == suffix]
    return reading or heads


def _level_files(folder: Path, name: str | None) -> str | None:
    """The file suffix a saved head's level reads (``model.json``'s ``level``; of a results folder, its first fold's
    model of head ``name``), ``None`` when unreadable."""
    from faina.data.task_entries import LEVEL_FILES

    model_json = folder / "model.json"
    folds = sorted(folder.glob(f"fold*/{HEADS_FILE}"))
    if not model_json.is_file() and folds and name is not None:
        model_json = folds[0].parent / read_heads_file(folds[0])[name] / "model.json"
    try:
        level = json.loads(model_json.read_text(encoding="utf-8")).get("level")
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, AttributeError):
        return None
    return f".{LEVEL_FILES[level]}" if level in LEVEL_FILES else None


def head_output(path: str | Path, head: str | None, several: bool) -> str:
    """Where one head's output goes: ``path`` itself for a single head, else ``<stem>.<head><suffix>`` beside it."""
    path = Path(path)
    if head is None or not several:
        return str(path)
    return str(path.with_name(f"{path.stem}.{head}{path.suffix}"))

"""Parsed small YAML files kept as JSON, so a scoring command need not import PyYAML on every run.

Why: ``python -m faina.evaluate`` on a small file should cost about what the official scorer costs (at most twice
its CPU time: docs/speed-and-scale.md). On a small file the scoring itself takes milliseconds, and importing PyYAML
to read the label inventory was a large part of the difference. A JSON file holding the YAML text *and* its parsed
value is read with the ``json`` module every command imports anyway.

The cache is a convenience that can never change a result:
- an entry is used only when the text it stores equals the file's text byte for byte (no hash to trust, no
  modification time to go stale), and only when its value is plain JSON data (mappings, lists, strings,
  numbers, booleans, null); anything else is parsed again from the YAML;
- it stores only values that survive a JSON round trip unchanged, so a cached value and a fresh parse are equal;
- an unreadable, corrupt or foreign entry is ignored, and a failed write is ignored: the caller gets the parse;
- ``FALLACY_YAML_CACHE=off`` switches it off; ``FALLACY_YAML_CACHE=DIR`` puts it in DIR. The default folder is
  ``$XDG_CACHE_HOME/fallacy-framework/yaml`` (``~/.cache/...``; ``%LOCALAPPDATA%`` on Windows), found without
  ``platformdirs`` because that import alone costs as much as PyYAML's.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV_VAR = "FALLACY_YAML_CACHE"
DISABLED = {"off", "none", "false", "0", "no", "disabled"}
FORMAT = 1
MAX_TEXT = 1 << 20  # files larger than this are not worth a copy


def cache_dir(setting: str | None = None) -> Path | None:
    """The cache folder, or ``None`` when switched off (``setting`` first, then the environment variable)."""
    value = setting if setting is not None else os.environ.get(ENV_VAR)
    if value is not None and value.strip().lower() in DISABLED:
        return None
    if value:
        return Path(value).expanduser()
    from common.user_cache import user_cache_root

    return user_cache_root() / "yaml"


def _entry_path(folder: Path, text: str) -> Path:
    data = text.encode("utf-8")
    return folder / f"{zlib.crc32(data):08x}-{len(data)}.json"


def _is_plain(value: Any) -> bool:
    """True for data JSON keeps as it is (str keys only; no floats that JSON would print differently)."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_plain(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_is_plain(item) for item in value)
    return value is None or isinstance(value, (str, bool, int, float))


def cached_parse(text: str, parse: Callable[[str], Any], setting: str | None = None) -> Any:
    """``parse(text)``, or the value a previous call stored for exactly this text.

    ``parse`` raises as it likes (a caller's ``UserError`` passes through untouched); only successful parses
    of plain JSON data are stored.
    """
    folder = cache_dir(setting) if len(text) <= MAX_TEXT else None
    if folder is None:
        return parse(text)
    path = _entry_path(folder, text)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("text") == text:
            return entry["value"]
    except (OSError, ValueError, KeyError):
        pass  # no entry yet, or one we cannot use: parse
    value = parse(text)
    try:  # a YAML alias can make a value contain itself: not JSON data, so not stored
        storable = _is_plain(value) and json.loads(json.dumps(value)) == value
    except (RecursionError, ValueError):
        storable = False
    if storable:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"format": FORMAT, "text": text, "value": value}), encoding="utf-8")
            os.replace(temporary, path)  # atomic: a concurrent reader sees the old entry or the new one
        except OSError:
            pass  # a read-only home or a full disk costs only the speed-up
    return value

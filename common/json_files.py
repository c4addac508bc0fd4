"""Reading JSON and JSON Lines files that came from elsewhere, with one ``UserError`` for every way they break.

``json.loads`` alone lets a user meet a traceback (``UnicodeDecodeError`` for a latin-1 or UTF-16 file,
``RecursionError`` for a value nested thousands of levels deep) or lose data silently (an object that names a
key twice keeps only the last value). These readers turn each case into one message naming the file and line,
accept a UTF-8 byte-order mark and CRLF line ends (both harmless), and leave the checking of the values to the
caller, which knows its fields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.errors import UserError

REENCODE_FIX = "re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`"


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(f"the key {key!r} appears twice in one object")
        obj[key] = value
    return obj


def read_text(path: str | Path, fix: str) -> str:
    """The file's text (UTF-8, a leading byte-order mark dropped); ``fix`` says what to do when it is missing."""
    path = Path(path)
    if not path.is_file():
        raise UserError("file not found.", path=path, fix=fix)
    data = path.read_bytes()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise UserError(
            f"not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start}).",
            path=path,
            line=data[: err.start].count(b"\n") + 1,
            fix=REENCODE_FIX,
        ) from None


def parse_json(text: str, path: str | Path, line: int | None, fix: str) -> Any:
    """One JSON value; a syntax error, a key given twice or absurd nesting is a ``UserError`` at ``line``."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as err:
        raise UserError(f"{err}.", path=path, line=line, fix=fix) from None
    except json.JSONDecodeError as err:
        where = err.lineno if line is None else line
        raise UserError(f"not valid JSON ({err.msg}, column {err.colno}).", path=path, line=where, fix=fix) from None
    except RecursionError:
        raise UserError("not valid JSON (nested too deeply).", path=path, line=line, fix=fix) from None


def read_json(path: str | Path, fix: str, missing_fix: str | None = None) -> Any:
    """The JSON value of a whole file."""
    return parse_json(read_text(path, missing_fix or fix), path, None, fix)


def read_json_lines(path: str | Path, fix: str, missing_fix: str | None = None) -> list[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON Lines file (CRLF line ends are fine)."""
    text = read_text(path, missing_fix or fix)
    return [
        (number, parse_json(line, path, number, fix))
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip()
    ]

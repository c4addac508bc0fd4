"""Raw posts to tag: a text file (one post per line) or JSONL (one object with a ``text`` per line)."""

from __future__ import annotations

import json
from pathlib import Path

from common.errors import UserError
from faina.formats.text_file import read_lines


def read_posts(path: str | Path) -> list[str]:
    """The posts of a ``.txt`` (one per non-blank line) or ``.jsonl`` file, with file:line errors."""
    path = Path(path)
    lines = read_lines(path)
    if path.suffix.lower() == ".jsonl":
        posts = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError) as err:  # RecursionError: JSON nested thousands of levels deep
                raise UserError(
                    f"not valid JSON ({err})",
                    path=path,
                    line=number,
                    fix='write one object per line, e.g. {"text": "..."}',
                ) from None
            text = value.get("text") if isinstance(value, dict) else value
            if not isinstance(text, str):
                raise UserError(
                    'a line without a "text" string',
                    path=path,
                    line=number,
                    fix='write one object per line with the post in "text", e.g. {"text": "..."}',
                )
            if not text.strip():
                raise UserError("empty post text", path=path, line=number, fix="remove the line or give it text")
            posts.append(text)
        return posts
    if path.suffix.lower() != ".txt":
        raise UserError(
            f"cannot tell the input kind from the extension {path.suffix!r}",
            path=path,
            fix='give a .txt file (one post per line) or a .jsonl file ({"text": ...} per line)',
        )
    return [line for line in lines if line.strip()]

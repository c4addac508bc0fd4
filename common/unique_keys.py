"""Keys a file must not repeat (post ids, fallacy ids, one prediction per item), with the line each was first read at.

Readers of different datasets refuse a repeated key the same way: one ``UserError`` naming the file, the line of
the repeat and the line of the first, and saying how to fix it. The wording of the problem is the reader's.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

from common.errors import UserError


class UniqueKeys:
    """``add(key, line)`` records where ``key`` was read and refuses a second one.

    ``problem`` is the message, formatted with ``key`` and ``first`` (the line of the first occurrence), e.g.
    ``"duplicate post id {key!r} (first at line {first})"``; ``fix`` says what to change.
    """

    def __init__(self, path: str | Path, problem: str, fix: str):
        self.path = path
        self.problem = problem
        self.fix = fix
        self.first_line: dict[Hashable, int] = {}

    def add(self, key: Hashable, line: int) -> None:
        if key in self.first_line:
            raise UserError(
                self.problem.format(key=key, first=self.first_line[key]), path=self.path, line=line, fix=self.fix
            )
        self.first_line[key] = line

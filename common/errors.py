"""Errors a user can cause, and the one place that turns them into a clean message.

A researcher who points the framework at a malformed file or a missing model must see one line that
names the file, the line and the fix — never a traceback. Every module raises a ``UserError`` (or a
subclass) for such mistakes; command-line entry points wrap their ``main`` with ``exit_on_user_error``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class UserError(Exception):
    """A mistake in the user's input or configuration, with a location and a fix."""

    def __init__(
        self, message: str, *, path: str | Path | None = None, line: int | None = None, fix: str | None = None
    ):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.fix = fix
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        text = f"{where}{self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


def user_error_behind(err: BaseException | None) -> UserError | None:
    """The ``UserError`` that ``err`` is or wraps, or None. OmegaConf wraps what a config resolver raises (a model
    that is not set up, ``${offline_mpnet:}``) in its own ``InterpolationResolutionError``; the message a user
    should see is the one inside."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, UserError):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def exit_on_user_error(main: Callable[..., T] | None = None, *, show_logs: bool = True):
    """Run ``main`` with progress shown on stderr; on a ``UserError`` print ``error: <message>`` to stderr and
    exit with status 2.

    ``@exit_on_user_error(show_logs=False)`` is for a command none of whose code logs (the scorer): it then
    starts without importing ``logging`` (a scoring run should cost about what the official scorer costs:
    docs/speed-and-scale.md); its warnings still reach stderr through ``warnings``.
    """
    if main is None:
        return functools.partial(exit_on_user_error, show_logs=show_logs)

    @functools.wraps(main)
    def wrapper(*args, **kwargs):
        if show_logs:
            from common.logs import show_progress

            show_progress()
        try:
            return main(*args, **kwargs)
        except UserError as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper

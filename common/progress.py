"""Progress bars for the long loops outside Lightning's own (prediction, tagging a file, LLM generation).

tqdm on stderr, so stdout keeps only a command's results; a loop of one step shows none (nothing to wait for), and
neither does a loop whose stderr is not a terminal (a log file, a pipe, a batch job): frames of a bar there are
noise, and the project's log lines say what is being done. Lightning's loops have their own bars
(``common.progress_bar.TerminalProgressBar``, the same rule), and so do the datasets library's
(``datasets_bars``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")


def on_terminal() -> bool:
    """Whether stderr (where every bar goes) is a terminal now."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def progress(items: Iterable[Item], description: str, total: int | None = None, unit: str = "batch") -> Iterator[Item]:
    from tqdm import tqdm

    if total is None:
        total = len(items) if hasattr(items, "__len__") else None
    hidden = (total or 0) < 2 or not on_terminal()
    return iter(tqdm(items, desc=description, total=total, unit=unit, file=sys.stderr, disable=hidden))


@contextlib.contextmanager
def datasets_bars() -> Iterator[None]:
    """The datasets library's bars (``Dataset.map``) while the block runs: on a terminal as the library has them,
    off otherwise (restored afterwards)."""
    import datasets

    if on_terminal() or not datasets.is_progress_bar_enabled():
        yield
        return
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        datasets.enable_progress_bars()

"""Progress bars for the long loops outside Lightning's own (prediction, tagging a file, LLM generation).

tqdm on stderr, so stdout keeps only a command's results; a loop of one step shows none (nothing to wait for).
Lightning's loops have their own bars (``callbacks.rich_progress_bar``, also on stderr).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

Item = TypeVar("Item")


def progress(items: Iterable[Item], description: str, total: int | None = None, unit: str = "batch") -> Iterator[Item]:
    from tqdm import tqdm

    if total is None:
        total = len(items) if hasattr(items, "__len__") else None
    return iter(tqdm(items, desc=description, total=total, unit=unit, file=sys.stderr, disable=(total or 0) < 2))

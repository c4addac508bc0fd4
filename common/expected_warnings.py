"""Warnings a run expects, said once as a plain log line instead of through Python's warning machinery.

Some warnings describe a normal state of a run, not a fault: a score whose denominator is 0 while a model still
predicts nothing in its first epochs, decoders that predict (almost) nothing at an early validation. Python prints
each distinct message with its source line under it, several times a run, and a reader who learns to skip them
misses the one that matters. Inside ``said_once`` each ``Expected`` rule turns the warnings it matches into one
line of the given logger at the rule's level, the first time only (later ones of the same rule are counted, not
printed); every other warning goes on to the handler that was there before, unchanged. The rules are chosen by
the caller (``train.py``), so this module knows no task.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Expected:
    """Warnings of ``category`` whose message matches ``pattern`` (a regular expression searched for in it): said
    once per run at ``level``, followed by ``why`` (what the state means, in a few words)."""

    category: type[Warning]
    pattern: str = ""
    level: int = logging.INFO
    why: str = ""

    def matches(self, message: Warning | str, category: type[Warning]) -> bool:
        return issubclass(category, self.category) and re.search(self.pattern, str(message)) is not None


@contextlib.contextmanager
def said_once(expected: Sequence[Expected], logger: logging.Logger) -> Iterator[dict[Expected, int]]:
    """While the block runs, the warnings matching a rule of ``expected`` become one line of ``logger`` each (the
    first of each rule); yields how many warnings each rule took (said or not)."""
    counts: dict[Expected, int] = {}
    with warnings.catch_warnings():
        shown_before = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            rule = next((rule for rule in expected if rule.matches(message, category)), None)
            if rule is None:
                shown_before(message, category, filename, lineno, file, line)
                return
            counts[rule] = counts.get(rule, 0) + 1
            if counts[rule] == 1:
                logger.log(rule.level, "%s%s", message, f"; {rule.why}" if rule.why else "")

        warnings.showwarning = show
        for rule in expected:  # every occurrence reaches ``show`` (not once per source line): the count is ours
            warnings.filterwarnings("always", category=rule.category)
        yield counts

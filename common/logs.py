"""Progress messages: the project's modules log, and every entry point shows them on stderr.

Library code says what it is doing with ``logging.getLogger(__name__).info(...)`` (resuming a fold, reusing
cached features, repairs it made to a file) instead of ``print``, so a command's stdout holds only its output
(a table, a JSON document) and its progress goes to stderr. ``train.py`` and the command-line tools call
``show_progress`` once: INFO and above by default, ``-q`` warnings only, ``-v`` debug. Other libraries keep their
own levels (only the project's packages are raised to INFO). In a distributed run only rank 0 shows progress;
the other processes (which would repeat it) show warnings and errors.
"""

from __future__ import annotations

import logging
import os
import sys

PROJECT_PACKAGES = ("common", "metrics", "models", "faina", "missci", "fallacy", "train", "__main__")
LEVELS = {-1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}
# what a process of a distributed run (DDP) is told its rank by: torchrun / Lightning's launcher, SLURM, LSF
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK")


def _has_own_handler(name: str) -> bool:
    """Whether a logger below the root on ``name``'s chain prints by itself (Lightning's does)."""
    logger = logging.getLogger(name)
    while logger is not None and logger.name != "root":
        if logger.handlers:
            return True
        logger = logger.parent if logger.propagate else None
    return False


class _CurrentStderr(logging.StreamHandler):
    """A handler that writes to whatever ``sys.stderr`` is when a record is emitted (pytest swaps it).

    It prints the project's records and other libraries' warnings, except those a library's own handler has
    printed already (so Lightning's notices do not show twice)."""

    def __init__(self):
        super().__init__(sys.stderr)

    def filter(self, record: logging.LogRecord) -> bool:
        if _has_own_handler(record.name):
            return False
        ours = record.name.split(".")[0] in PROJECT_PACKAGES
        return (ours or record.levelno >= logging.WARNING) and super().filter(record)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


def show_progress(verbosity: int = 0) -> None:
    """Show the project's log records on stderr: ``verbosity`` -1 (quiet), 0 (INFO) or 1 (DEBUG); other libraries'
    known-harmless notices are silenced (``common.library_noise``)."""
    from common.library_noise import quiet_libraries

    quiet_libraries()
    root = logging.getLogger()
    if not any(isinstance(handler, _CurrentStderr) for handler in root.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
    level = LEVELS[max(-1, min(1, verbosity))]
    if process_rank() > 0:  # a DDP replica repeats rank 0's progress line for line: it shows warnings and errors
        level = max(level, logging.WARNING)
    for package in PROJECT_PACKAGES:
        logging.getLogger(package).setLevel(level)


def process_rank() -> int:
    """This process's rank in a distributed run (0 outside one), from the variables its launcher sets."""
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def verbosity_from_argv(argv: list[str]) -> tuple[int, list[str]]:
    """Take ``-q``/``--quiet`` and ``-v``/``--verbose`` out of ``argv`` (Hydra's parser does not know them)."""
    verbosity, rest = 0, []
    for arg in argv:
        if arg in ("-q", "--quiet"):
            verbosity -= 1
        elif arg in ("-v", "--verbose"):
            verbosity += 1
        else:
            rest.append(arg)
    return verbosity, rest

"""One run per experiment folder at a time: ``<results>/<name>/.lock``, held with ``flock``.

Two runs of the same experiment would train the same fold twice and overwrite each other's files. The lock
is an advisory ``flock`` on a file in the experiment folder: the kernel releases it when its process ends,
however it ends (SIGKILL, out of memory, a reboot), so a killed run never leaves a stale lock behind. The file
keeps the holder's pid, host and start time, only so the refused run can say who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from common.errors import UserError

LOCK_FILE = ".lock"


@contextlib.contextmanager
def experiment_lock(exp_dir: str | Path) -> Iterator[Path]:
    """Hold the experiment's lock for the ``with`` block, or raise one ``UserError`` at once if it is held."""
    path = Path(exp_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(
                f"another run of this experiment is in progress ({_holder(fd)})",
                path=path,
                fix="wait for it to finish, or give this run its own name=...",
            ) from None
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode("utf-8"), 0)
        yield path
    finally:
        os.close(fd)  # releases the lock; the file stays (deleting it would race with a waiting run)


def _holder(fd: int) -> str:
    try:
        holder = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return f"pid {holder['pid']} on {holder['host']}, started {holder['started']}"
    except (ValueError, KeyError, OSError):
        return "holder unknown"

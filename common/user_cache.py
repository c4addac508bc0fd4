"""The framework's folder in the user's cache: ``$XDG_CACHE_HOME/fallacy-framework`` (``~/.cache/...``;
``%LOCALAPPDATA%`` on Windows), outside any checkout, so a run writes into the repository nothing but its results
folder. The parsed label inventories (``common.yaml_cache``) and, by default, the tokenised features
(``paths.feature_cache``, docs/training.md) live there. Found without ``platformdirs``, whose import alone costs
as much as PyYAML's on a scoring command's path.
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_root() -> Path:
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "fallacy-framework"


def user_cache_dir(name: str) -> str:
    """``user_cache_root() / name`` as a string (the ``${user_cache:NAME}`` resolver of ``conf/``)."""
    return str(user_cache_root() / name)

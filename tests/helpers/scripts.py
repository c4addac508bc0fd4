"""A file of ``scripts/`` loaded as a module, so a test calls its functions and ``main`` in-process."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests_paths import REPO


def load_script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (its ``if __name__ == "__main__"`` block does not run)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

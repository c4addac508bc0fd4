"""Faina's label inventory: the shared ``LabelInventory`` with Faina's own file as its default.

``faina/faina_labels.yaml`` holds Faina's 20 fine labels, their short ids and the taxonomy; ``LabelInventory.load()``
(or ``load("faina")``) reads it, any other path reads that dataset's inventory.
"""

from __future__ import annotations

from pathlib import Path

import faina
from common.labels import LabelInventory as SharedLabelInventory

# The package folder from the package itself (not importlib.resources, whose import is a tenth of a scoring
# command's start-up); the file travels with the package.
DEFAULT_LABELS_FILE = Path(faina.__file__).resolve().parent / "faina_labels.yaml"


class LabelInventory(SharedLabelInventory):
    """``common.labels.LabelInventory`` whose ``load`` defaults to Faina's inventory."""

    @classmethod
    def load(cls, path: str | Path | None = None) -> LabelInventory:
        """Read an inventory YAML; ``None`` or ``"faina"`` gives Faina's default inventory."""
        if path is None or str(path) == "faina":
            path = DEFAULT_LABELS_FILE
        return super().load(path)

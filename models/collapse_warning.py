"""The warning category of the collapse alarm (``models.base``), in a module of its own so that ``train.py`` can
name it without importing torch or Lightning."""

from __future__ import annotations


class CollapseWarning(UserWarning):
    """The heads predicted (almost) nothing on a split (below ``models.base.COLLAPSE_FRACTION`` of the gold items):
    normal at an early validation of a short run, a fault when the selected model does it on the test split."""

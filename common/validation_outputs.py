"""The outputs of a module's latest validation pass, kept while asked for, so that the pass of the chosen epoch can
serve what comes after training instead of a second pass over the same dev posts.

A module that offers this holds a ``ValidationOutputs`` as ``validation_outputs``: it calls ``start()`` when a
validation pass begins and ``keep(loader, outputs)`` for each batch (``loader``: the index of the validation loader,
one per task entry of a multi-task run). Nothing is kept unless ``recording`` (set by the runner, which knows
whether anything will use them). ``FoldCheckpoint`` (``common.checkpointing``) holds on to ``latest()`` of the epoch
whose weights it keeps as the best.
"""

from __future__ import annotations

from typing import Any


class ValidationOutputs:
    """Per validation loader, the outputs of each batch of the latest pass (module docstring)."""

    def __init__(self) -> None:
        self.recording = False
        self._latest: dict[int, list[Any]] = {}

    def record(self, on: bool = True) -> None:
        self.recording = bool(on)
        self._latest = {}

    def start(self) -> None:
        """A new pass: forget the last one (a new dict, so a holder of ``latest()`` keeps the old pass whole)."""
        self._latest = {}

    def keep(self, loader: int, outputs: Any) -> None:
        if self.recording and outputs is not None:
            self._latest.setdefault(loader, []).append(outputs)

    def latest(self) -> dict[int, list[Any]]:
        """The latest pass's outputs by loader index (empty when not recording)."""
        return self._latest

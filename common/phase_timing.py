"""Where a fold's time goes: seconds per phase and the bytes the process wrote, recorded as data.

A ``PhaseClock`` starts with the fold. Its ``phase(name)`` blocks add their wall seconds to ``name`` (a phase run for
several entries adds up); ``ValidationClock``, a Lightning callback, measures the validation passes inside ``fit``;
the checkpoint writer adds its own seconds (``common.checkpointing.AtomicCheckpointIO``). ``record()`` is what a
fold's ``metrics.json`` keeps under ``phases``: the seconds of each phase, the fold's total and what no phase
covered (``other``), the ``notes`` of how it went (which dev pass served), and the bytes the process wrote to
storage during the fold (Linux ``/proc/self/io``
``write_bytes``; ``None`` where the system does not count them). ``summary_line`` is the one line a run prints per
fold.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import lightning.pytorch as pl

PROC_IO = Path("/proc/self/io")


def bytes_written() -> int | None:
    """Bytes this process has caused to be written to storage so far, or ``None`` where that is not counted."""
    try:
        for line in PROC_IO.read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "write_bytes":
                return int(value)
    except (OSError, ValueError):
        return None
    return None


class PhaseClock:
    """Seconds per named phase of one fold (module docstring)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.notes: dict[str, str] = {}
        self._start = time.perf_counter()
        self._written = bytes_written()

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def note(self, name: str, value: str) -> None:
        """A fact about how the fold spent its time (e.g. which dev pass served), kept beside the seconds."""
        self.notes[name] = value

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def record(self) -> dict[str, Any]:
        """The fold's phases so far: ``seconds`` (each phase, ``other``, ``total``) and ``bytes_written``."""
        total = time.perf_counter() - self._start
        nested = {"validation", "checkpoints"}  # parts of fit, not beside it
        covered = sum(value for name, value in self.seconds.items() if name not in nested)
        seconds = {name: round(value, 3) for name, value in self.seconds.items()}
        seconds.update(other=round(max(0.0, total - covered), 3), total=round(total, 3))
        now = bytes_written()
        written = None if now is None or self._written is None else now - self._written
        return {"seconds": seconds, "bytes_written": written, **({"notes": dict(self.notes)} if self.notes else {})}


class ValidationClock(pl.Callback):
    """Adds the seconds of every validation pass of ``fit`` (the sanity check included) to ``clock``."""

    def __init__(self, clock: PhaseClock):
        self.clock = clock
        self._start: float | None = None

    def on_validation_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self._start = time.perf_counter()

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self._start is not None:
            self.clock.add("validation", time.perf_counter() - self._start)
            self._start = None


def megabytes(count: int | None) -> str:
    return "bytes written not counted here" if count is None else f"{count / 1e6:.1f} MB written"


def summary_line(index: int, phases: Mapping[str, Any]) -> str:
    """One line for fold ``index``: its total, each phase (fit with its validation and checkpoint writes inside),
    and the bytes written."""
    seconds = dict(phases["seconds"])
    total, other = seconds.pop("total"), seconds.pop("other")
    inside = [f"{name} {seconds.pop(name):.1f}" for name in ("validation", "checkpoints") if name in seconds]
    parts = []
    for name, value in seconds.items():
        part = f"{name} {value:.1f}"
        if name in phases.get("notes", {}):  # e.g. dev_pass 0.0 (validation): the chosen epoch's pass served
            part += f" ({phases['notes'][name]})"
        if name == "fit" and inside:
            part += f" ({', '.join(inside)})"
        parts.append(part)
    parts.append(f"other {other:.1f}")
    return f"fold {index}: {total:.1f} s = {', '.join(parts)} s; {megabytes(phases.get('bytes_written'))}"

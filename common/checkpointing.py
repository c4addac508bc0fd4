"""How a fold checkpoints: the best dev weights, and everything a rerun needs to continue exactly.

Per fold, ``checkpoints/`` holds
- ``last.ckpt``, written at the end of an epoch once the resume interval has passed (``resume_every_minutes``
  of training since the last one, default 10, or every ``resume_every_n_epochs`` epochs; either that is set
  triggers it): weights, optimiser, scheduler and loop counters (Lightning's), plus this callback's state: the
  best-so-far score and epoch, and the RNG states of python, numpy and torch at that moment. A fold resumed from it
  trains exactly as if it had never stopped: the same dropout masks (restored RNG), the same batches
  (``common.sampling.EpochShuffle``), the same frozen layers (gradual unfreezing is a function of the epoch) and
  learning rates (scheduler state). A fold killed before its first ``last.ckpt`` trains again from scratch, to the
  same numbers. A full checkpoint is three times the weights (Adam's two moments); written every epoch of every
  fold it was most of what a run wrote (docs/speed-and-scale.md), hence the interval.
- ``best-epoch=<e>.safetensors``: the weights alone of the epoch with the best monitored dev score. They are
  kept in memory when the score improves and written beside each ``last.ckpt`` that needs them (before it:
  ``last.ckpt`` never names a file that is not there), so a fold that ends without a resume point writes no
  weights here at all; the runner predicts from the copy in memory (``best_weights``). With them it keeps that
  epoch's validation outputs, when the module recorded them (``common.validation_outputs``): the runner fits
  decision rules and calibrations on them instead of a second pass over dev. A resumed fold has none for an
  epoch before the resume and makes that pass, to the same outputs.

Both are written atomically (``common.io.atomic_write``). A ``last.ckpt`` that fails its checksums or does not
load is reported by name and the fold restarts from scratch instead of trusting it. Once the fold's
``metrics.json`` exists, the runner deletes ``checkpoints/`` (the exported model holds the best weights)
unless ``checkpoint.keep=true``.
"""

from __future__ import annotations

import logging
import random
import shutil
import time
import zipfile
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import numpy as np
import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
from lightning.pytorch.callbacks import Checkpoint
from safetensors.torch import load_file, save

from common.errors import UserError
from common.faults import kill_point
from common.io import atomic_write, atomic_write_bytes
from common.phase_timing import PhaseClock

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoints"
LAST = "last.ckpt"
BEST_GLOB = "best-epoch=*.safetensors"
REQUIRED_KEYS = ("state_dict", "loops", "callbacks", "global_step")


# --- RNG states ----------------------------------------------------------------------------------------
def capture_rng() -> dict[str, Any]:
    """Python, numpy, torch (and CUDA) RNG states, in types that ``torch.load(weights_only=True)`` accepts."""
    numpy_state = np.random.get_state(legacy=False)
    state = {
        "python": random.getstate(),
        "torch": torch.get_rng_state(),
        "numpy": {
            "bit_generator": numpy_state["bit_generator"],
            "key": torch.from_numpy(numpy_state["state"]["key"].astype(np.int64)),
            "pos": int(numpy_state["state"]["pos"]),
            "has_gauss": int(numpy_state["has_gauss"]),
            "gauss": float(numpy_state["gauss"]),
        },
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    saved = state["numpy"]
    np.random.set_state(
        {
            "bit_generator": saved["bit_generator"],
            "state": {"key": saved["key"].numpy().astype(np.uint32), "pos": saved["pos"]},
            "has_gauss": saved["has_gauss"],
            "gauss": saved["gauss"],
        }
    )
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# --- files ------------------------------------------------------------------------------------------------
def checkpoint_damage(path: str | Path) -> str | None:
    """Why the Lightning checkpoint at ``path`` cannot be trusted, or ``None`` when it is sound.

    ``torch.save`` writes a zip archive with a CRC per entry: a truncated or overwritten file fails here,
    before Lightning would half-restore it. Loading is memory-mapped, so the check costs one read of the file.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
        if bad is not None:
            return f"its entry {bad} fails its checksum"
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as err:  # any failure to read means the same thing: do not resume from it
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        return f"it does not load: {reason}"
    if not isinstance(checkpoint, dict) or any(key not in checkpoint for key in REQUIRED_KEYS):
        return "it is not a Lightning training checkpoint"
    return None


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning's checkpoint writer, made kill-safe: ``torch.save`` into a temporary file beside the target,
    fsync, rename. (Lightning's own writer stages the bytes in memory and in the system temp folder, then
    copies them over the target, which a kill or a full disk can leave truncated.)"""

    def __init__(self, clock: PhaseClock | None = None):
        super().__init__()
        self.clock = clock  # where the seconds of the writes go (a fold's ``checkpoints`` phase)

    def save_checkpoint(self, checkpoint: dict[str, Any], path, storage_options: Any | None = None) -> None:
        start = time.perf_counter()
        atomic_write(path, lambda handle: torch.save(checkpoint, handle))
        if self.clock is not None:
            self.clock.add("checkpoints", time.perf_counter() - start)

    def load_checkpoint(self, path, map_location=lambda storage, loc: storage, weights_only: bool | None = None):
        damage = checkpoint_damage(path)
        if damage is not None:
            raise UserError(
                f"the checkpoint is damaged ({damage})",
                path=path,
                fix="delete it; a rerun then starts this fold from scratch",
            )
        return super().load_checkpoint(path, map_location=map_location, weights_only=True)


def resume_checkpoint(fold_dir: Path, fold: int) -> str | None:
    """The ``last.ckpt`` to resume fold ``fold`` from; a damaged one is reported, deleted with the fold's other
    checkpoints, and the fold restarts from scratch."""
    folder = Path(fold_dir) / CHECKPOINT_DIR
    last = folder / LAST
    if not last.is_file():
        return None
    damage = checkpoint_damage(last)
    if damage is None:
        log.info("fold %d: resuming from %s", fold, last)
        return str(last)
    log.warning(
        "fold %d: %s is damaged (%s); deleting the fold's checkpoints and training it from scratch", fold, last, damage
    )
    shutil.rmtree(folder)
    return None


def remove_checkpoints(fold_dir: Path) -> None:
    shutil.rmtree(Path(fold_dir) / CHECKPOINT_DIR, ignore_errors=True)


def load_weights(path: str | Path) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path))
    except Exception as err:
        raise UserError(
            f"the best weights do not load ({err})",
            path=path,
            fix=f"delete {Path(path).parent} to train this fold again",
        ) from None


# --- the callback -------------------------------------------------------------------------------------------
class _QuietFullCheckpointNote(logging.Filter):
    """Drops Lightning's "`weights_only` was not set, defaulting to `False`" note, logged at every save of
    ``last.ckpt``: that checkpoint holds the full training state on purpose (a killed run resumes from it), and
    the note reads as if a file were *loaded* unsafely (every load here is ``weights_only=True``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("`weights_only` was not set")


def _quiet_full_checkpoint_note() -> None:
    connector = logging.getLogger("lightning.pytorch.trainer.connectors.checkpoint_connector")
    if not any(isinstance(f, _QuietFullCheckpointNote) for f in connector.filters):
        connector.addFilter(_QuietFullCheckpointNote())


def selected_metrics(callback_metrics) -> dict[str, float]:
    """The dev metrics of an epoch (``val/...``) as plain numbers, as Lightning holds them after validation."""
    return {name: float(value) for name, value in callback_metrics.items() if name.startswith("val/")}


DEFAULT_RESUME_MINUTES = 10.0


class ResumeInterval:
    """When a fold writes its resume point: at the end of every ``epochs``-th epoch, and at the end of the first
    epoch after ``minutes`` of training since the last one (or since the fit started); ``None`` turns a rule off,
    both ``None`` writes none (a killed fold then trains again from scratch). Epoch ends only: a resume point
    mid-epoch would not restore the batch order exactly."""

    def __init__(self, epochs: int | None, minutes: float | None):
        self.epochs, self.minutes = epochs, minutes
        self._since = time.monotonic()

    @classmethod
    def of(cls, epochs: int | None, minutes: float | None) -> ResumeInterval:
        if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
            raise UserError(
                f"checkpoint.resume_every_n_epochs must be a whole number of epochs >= 1 or null, not {epochs!r}",
                fix="set checkpoint.resume_every_n_epochs=1 (every epoch) or null",
            )
        if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or minutes < 0):
            raise UserError(
                f"checkpoint.resume_every_minutes must be a number of minutes >= 0 or null, not {minutes!r}",
                fix=f"set checkpoint.resume_every_minutes={DEFAULT_RESUME_MINUTES:g} or null",
            )
        return cls(epochs, None if minutes is None else float(minutes))

    def restart(self) -> None:
        """Count the minutes from now (the fit's start, or a resume point just written)."""
        self._since = time.monotonic()

    def due(self, epoch: int) -> bool:
        """Whether the end of ``epoch`` (0-based) writes a resume point."""
        if self.epochs is not None and (epoch + 1) % self.epochs == 0:
            return True
        return self.minutes is not None and time.monotonic() - self._since >= self.minutes * 60


def resume_interval_settings(checkpoint_block: Any) -> dict[str, Any]:
    """``resume_every_n_epochs`` and ``resume_every_minutes`` of a run's ``checkpoint`` block (absent: the defaults),
    and whether its fold ends with a resume point (``keep``: the kept folder holds one), as ``FoldSettings`` takes
    them."""
    block = checkpoint_block or {}
    return {
        "resume_every_n_epochs": block.get("resume_every_n_epochs"),
        "resume_every_minutes": block.get("resume_every_minutes", DEFAULT_RESUME_MINUTES),
        "final_resume_point": bool(block.get("keep", False)),
    }


class FoldCheckpoint(Checkpoint):
    """Best weights on improvement, a resumable ``last.ckpt`` at the resume interval, RNG states saved and restored.

    Being a Lightning ``Checkpoint``, it runs after the module's ``on_train_epoch_end`` (so it sees metrics
    logged there) and keeps Lightning from adding its default ``ModelCheckpoint``. ``monitor`` absent from
    the logged metrics (no validation, e.g. LoRA fine-tuning) means: no best file, the final weights count.
    """

    def __init__(
        self,
        dirpath: str | Path,
        monitor: str | None = "val/f1",
        mode: str = "max",
        resume_every_n_epochs: int | None = None,
        resume_every_minutes: float | None = DEFAULT_RESUME_MINUTES,
        final_resume_point: bool = False,
    ):
        if mode not in ("max", "min"):
            raise UserError(f"checkpoint.mode must be 'max' or 'min', not {mode!r}", fix="set checkpoint.mode=max")
        self.dirpath = Path(dirpath)
        self.monitor = monitor
        self.mode = mode
        self.interval = ResumeInterval.of(resume_every_n_epochs, resume_every_minutes)
        self.final_resume_point = final_resume_point  # checkpoint.keep: the kept folder ends with one
        self._resume_point_is_current = False
        self.best_model_score: float | None = None
        self.best_epoch: int | None = None
        self.best_metrics: dict[str, float] = {}  # the best epoch's dev metrics (a logger's summary shows them)
        self._best_weights: dict[str, torch.Tensor] | None = None  # the best epoch's, until written (and after)
        # whether the module still holds those weights: captured at the end of this process's last epoch
        self.module_holds_best = False
        # the best epoch's validation outputs, when the module recorded them in this process (not after a resume)
        self.best_validation_outputs: dict[int, list] | None = None
        self._pending_rng: dict | None = None
        _quiet_full_checkpoint_note()

    @property
    def last_model_path(self) -> str:
        return str(self.dirpath / LAST)

    @property
    def best_model_path(self) -> str:
        """Where the best epoch's weights are (or will be) written; empty before any epoch improved."""
        return "" if self.best_epoch is None else str(self._best_file(self.best_epoch))

    def best_weights(self) -> dict[str, torch.Tensor] | None:
        """The best epoch's weights: the copy kept in memory, or (a fold resumed after its best epoch) the file."""
        if self.best_epoch is None:
            return None
        if self._best_weights is None:
            self._best_weights = load_weights(self._best_file(self.best_epoch))
        return self._best_weights

    def _best_file(self, epoch: int) -> Path:
        return self.dirpath / f"best-epoch={epoch}.safetensors"

    def _improves(self, score: float) -> bool:
        if score != score:  # NaN never improves
            return False
        if self.best_model_score is None:
            return True
        return score > self.best_model_score if self.mode == "max" else score < self.best_model_score

    # --- saving ---
    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self.module_holds_best = False  # this step moves the weights away from the copy

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        kill_point("train-batch")  # the fault tests' "killed mid-epoch"

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.interval.restart()

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.sanity_checking or trainer.fast_dev_run:
            return
        score = trainer.callback_metrics.get(self.monitor) if self.monitor else None
        if score is not None and self._improves(float(score)):
            # a copy on the CPU (clone: a CPU model's state_dict shares its tensors, which training moves on)
            self._best_weights = {k: v.detach().cpu().clone().contiguous() for k, v in pl_module.state_dict().items()}
            self.best_model_score, self.best_epoch = float(score), trainer.current_epoch
            self.module_holds_best = True
            recorder = getattr(pl_module, "validation_outputs", None)  # common.validation_outputs
            self.best_validation_outputs = recorder.latest() if recorder is not None and recorder.recording else None
            self.best_metrics = selected_metrics(trainer.callback_metrics)
        # rank 0's clock decides for every rank: the write is a collective
        self._resume_point_is_current = False
        if trainer.strategy.broadcast(self.interval.due(trainer.current_epoch), src=0):
            self.save_resume_point(trainer)

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.final_resume_point and not self._resume_point_is_current and not trainer.fast_dev_run:
            self.save_resume_point(trainer)

    def save_resume_point(self, trainer: pl.Trainer) -> None:
        """``last.ckpt`` (on every rank: a collective; rank 0 writes), after the best weights it names."""
        best = self._best_file(self.best_epoch) if self.best_epoch is not None else None
        if trainer.is_global_zero and best is not None and not best.is_file():
            atomic_write_bytes(best, save(self.best_weights()))
        trainer.save_checkpoint(self.last_model_path)
        self.interval.restart()
        self._resume_point_is_current = True
        if trainer.is_global_zero:
            for stale in self.dirpath.glob(BEST_GLOB):
                if stale != best:
                    stale.unlink()

    def state_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "mode": self.mode,
            "best_model_score": self.best_model_score,
            "best_epoch": self.best_epoch,
            "best_metrics": self.best_metrics,
            "rng": capture_rng(),
        }

    # --- resuming ---
    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.best_model_score = state_dict["best_model_score"]
        self.best_epoch = state_dict["best_epoch"]
        saved = state_dict.get("best_metrics")  # absent from checkpoints of older runs; only for loggers' summaries
        self.best_metrics = (
            {str(k): float(v) for k, v in saved.items() if isinstance(v, (int, float))}
            if isinstance(saved, dict)
            else {}
        )
        if self.best_epoch is not None and not self._best_file(self.best_epoch).is_file():
            raise UserError(
                f"the checkpoint names best weights that are missing ({self._best_file(self.best_epoch).name})",
                path=self.dirpath / LAST,
                fix=f"delete {self.dirpath} to train this fold again",
            )
        self._pending_rng = state_dict["rng"]

    def _restore_rng(self) -> None:
        # applied as late as possible: right before the first resumed batch, exactly where it was captured
        # (nothing draws random numbers between the end of one epoch and the first batch of the next)
        if self._pending_rng is not None:
            restore_rng(self._pending_rng)
            self._pending_rng = None

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._restore_rng()

    def on_fit_end(self, trainer, pl_module) -> None:
        self._restore_rng()  # resumed after the last epoch: nothing trained, continue from the saved state

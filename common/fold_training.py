"""One fold's training, the same for every runner: seed, loggers, checkpoints, resume, kill point, closing.

The Faina cross-validation runner and the Missci LoRA runner differ in what they train and predict, not in
how a fold is driven: each fold is seeded with ``seed + fold``, gets its own logger run, logs the fold's resolved
config once, checkpoints through ``FoldCheckpoint`` with the atomic writer, resumes from its
``last.ckpt`` (loaded with ``weights_only=True``), passes the ``trained`` kill point of the fault tests and, at
the end, logs its test metrics and the selected epoch to every logger and closes it (W&B: the selected epoch's
dev metrics in the run's summary, the prediction file as an artifact, then ``finish()``, so the next fold starts a
new run; ``common.wandb_runs``). A runner that predicts with the chosen weights of the fold
(``load_chosen_weights``) may ask for the mean of the last epochs' weights instead of the best dev epoch's
(``average_last``, ``common.weight_averaging``), and may stop once its dev metric stops improving
(``early_stopping``, ``common.early_stopping``).

A fold is driven from ``FoldSettings``, plain values the runner reads from its config once per fold: nothing here
reads a config key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hydra
import lightning.pytorch as pl
from lightning.pytorch.callbacks.progress import ProgressBar
from lightning.pytorch.loggers import WandbLogger

from common.checkpointing import (
    CHECKPOINT_DIR,
    DEFAULT_RESUME_MINUTES,
    AtomicCheckpointIO,
    FoldCheckpoint,
    resume_checkpoint,
)
from common.early_stopping import DevEarlyStopping
from common.faults import kill_point
from common.phase_timing import PhaseClock, ValidationClock
from common.weight_averaging import LastEpochsAverage

FULL_PRECISION = {"32-true", "32"}  # trainer.precision values whose validation runs as a plain float32 pass


@dataclass(frozen=True)
class FoldSettings:
    """What driving one fold takes, as plain values.

    ``trainer``, each of ``loggers`` and ``callbacks``: blocks with a ``_target_`` (instantiated here), resolved for
    this fold (a logger's folder and run name name the fold); ``hyperparameters``: what every logger records as the
    fold's config; ``monitor`` / ``mode``: the dev measure that selects the fold's weights; ``average_last``: predict
    with the mean of the last epochs' weights instead (``common.weight_averaging``); ``early_stopping``: stop once
    ``monitor`` stops improving (``common.early_stopping``)."""

    seed: int
    trainer: Mapping[str, Any]
    monitor: str = "val/f1"
    mode: str = "max"
    loggers: Sequence[Mapping[str, Any]] = ()
    callbacks: Sequence[Mapping[str, Any]] = ()
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)
    average_last: int = 0
    early_stopping: DevEarlyStopping | None = None
    resume_every_n_epochs: int | None = None
    resume_every_minutes: float | None = DEFAULT_RESUME_MINUTES
    final_resume_point: bool = False


def instantiate_all(blocks: Sequence[Mapping[str, Any]]) -> list:
    return [hydra.utils.instantiate(block) for block in blocks]


class FoldTrainer:
    """Drives the training of fold ``index`` of an experiment into ``fold_dir``."""

    def __init__(self, settings: FoldSettings, index: int, fold_dir: Path):
        self.settings = settings
        self.index, self.fold_dir = index, Path(fold_dir)
        self.fold_dir.mkdir(parents=True, exist_ok=True)
        pl.seed_everything(settings.seed + index, workers=True, verbose=False)
        self.loggers = instantiate_all(settings.loggers)
        for logger in self.loggers:  # the whole resolved config, seed included, next to the hyperparameters
            logger.log_hyperparams(dict(settings.hyperparameters))
        self.checkpoint = FoldCheckpoint(
            self.fold_dir / CHECKPOINT_DIR,
            settings.monitor,
            settings.mode,
            settings.resume_every_n_epochs,
            settings.resume_every_minutes,
            settings.final_resume_point,
        )
        self.average = LastEpochsAverage(settings.average_last) if settings.average_last else None
        self.early_stopping = settings.early_stopping
        self.trainer: pl.Trainer | None = None
        self.clock = PhaseClock()  # the fold's phases from here on (``common.phase_timing``)

    def fit(
        self, module: pl.LightningModule, trainer_overrides: dict[str, Any] | None = None, **fit_inputs: Any
    ) -> pl.Trainer:
        """``Trainer.fit`` from the fold's ``trainer`` config, resumed from ``last.ckpt`` when there is one."""
        optional = [c for c in (self.average, self.early_stopping) if c is not None]
        callbacks = [*instantiate_all(self.settings.callbacks), *optional, self.checkpoint, ValidationClock(self.clock)]
        settings = {}
        if "enable_progress_bar" not in self.settings.trainer:
            # no bar among the callbacks (callbacks=none) means none: Lightning would add its own, on stdout
            settings["enable_progress_bar"] = any(isinstance(c, ProgressBar) for c in callbacks)
        self.trainer = hydra.utils.instantiate(
            dict(self.settings.trainer),
            logger=self.loggers or False,
            callbacks=callbacks,
            plugins=[AtomicCheckpointIO(self.clock)],
            default_root_dir=str(self.fold_dir),
            **{**settings, **(trainer_overrides or {})},
        )
        with self.clock.phase("fit"):
            self.trainer.fit(
                module, **fit_inputs, ckpt_path=resume_checkpoint(self.fold_dir, self.index), weights_only=True
            )
        kill_point("trained")  # the fault tests' "killed after training, before the prediction file"
        return self.trainer

    @property
    def is_global_zero(self) -> bool:
        """Under DDP only rank 0 predicts, writes and scores."""
        return self.trainer is None or self.trainer.is_global_zero

    def load_chosen_weights(self, module: pl.LightningModule) -> str | None:
        """Put the weights that predict into ``module``: the last epochs' mean when averaging, else the best dev
        epoch's (when the monitor saved any); where they come from, for the log."""
        if self.average is not None and self.average.count:
            module.load_state_dict(self.average.weights())
            return f"the mean of the last {self.average.count} epochs' weights"
        best = self.checkpoint.best_weights()
        if best is not None and not self.checkpoint.module_holds_best:  # a later epoch trained on: go back
            module.load_state_dict(best)
        return f"the weights of epoch {self.checkpoint.best_epoch}" if best is not None else None

    def chosen_validation_outputs(self) -> dict[int, list]:
        """The validation outputs of the epoch whose weights predict, by loader, where they are exactly what a new
        pass over dev with those weights would give: one process (no shard of dev), full precision (no autocast),
        the best epoch's weights (not an average) and recorded in this process (not before a resume). Otherwise
        empty, and the runner makes the pass."""
        trainer, kept = self.trainer, self.checkpoint.best_validation_outputs
        averaged = self.average is not None and self.average.count
        if kept is None or averaged or trainer is None or trainer.world_size != 1:
            return {}
        return kept if str(trainer.precision) in FULL_PRECISION else {}

    @property
    def best_score(self) -> float | None:
        """The selected epoch's value of the monitored measure (``checkpoint.monitor``)."""
        score = self.checkpoint.best_model_score
        return float(score) if self.checkpoint.best_epoch is not None and score is not None else None

    @property
    def best_dev_f1(self) -> float | None:
        """The selected epoch's dev F1 (``val/f1``), whatever selected it: a run selected on its dev loss
        (``data.targets=soft``) still reports the F1 of the epoch it kept."""
        if self.best_score is None or self.checkpoint.monitor == "val/f1":
            return self.best_score
        value = self.checkpoint.best_metrics.get("val/f1")
        return None if value is None else float(value)

    def close(self, metrics: dict[str, float], prediction_file: Path | None = None) -> None:
        """Test metrics and the selection (``best_dev_f1``, ``best_epoch``) to every logger, then close each; a
        W&B run's summary then shows the selected epoch's dev metrics, not the last epoch's (``common.wandb_runs``)."""
        selection = self.selection()
        for logger in self.loggers:
            if metrics or selection:
                logger.log_metrics({**metrics, **selection})
            logger.finalize("success")
            finish = getattr(logger, "finish_run", None)
            if finish is not None:
                finish({**self.checkpoint.best_metrics, **selection}, prediction_file)
            elif isinstance(logger, WandbLogger):  # Lightning's own, named in an older config: still one run per fold
                logger.experiment.finish()

    def length(self) -> dict[str, Any]:
        """How long the fold trained when it may stop early (``early_stopping`` of its metrics.json), else empty:
        the patience, the epochs trained and whether it stopped before ``trainer.max_epochs``."""
        if self.early_stopping is None or self.trainer is None:
            return {}
        return {
            "patience": self.early_stopping.patience,
            "epochs_trained": int(self.trainer.current_epoch),
            "stopped_early": self.early_stopping.stopped,
        }

    def selection(self) -> dict[str, float]:
        """Which epoch's weights the fold kept and its dev score (empty when nothing was monitored)."""
        if self.best_score is None:
            return {}
        chosen = {"best_epoch": float(self.checkpoint.best_epoch)}
        if self.best_dev_f1 is not None:
            chosen["best_dev_f1"] = self.best_dev_f1
        if self.checkpoint.monitor != "val/f1":  # the value that selected it, too
            chosen["best_dev_score"] = self.best_score
        return chosen

"""The run's Hydra config read once into the plain settings the layers below the runner take.

Below the runner nothing reads a config key: a fold is driven from ``FoldSettings`` (``common.fold_training``),
predictions run on the device of ``DeviceSettings``, the experiment's W&B run gets its logger blocks and config as
values. ``${fold.*}`` (a logger's folder, a W&B run's name) is filled in here, per fold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from common.checkpointing import resume_interval_settings
from common.early_stopping import DevEarlyStopping, early_stopping_callback
from common.errors import UserError
from common.fold_training import FoldSettings
from common.wandb_runs import EXPERIMENT_RUN_NAME


@dataclass(frozen=True)
class DeviceSettings:
    """Where a fold's model is tuned, calibrated and predicts after training (one device, whatever trained it), and
    the progress bar block shown while it predicts (``None``: no bar)."""

    accelerator: str = "auto"
    precision: str = "32-true"
    progress_bar: dict[str, Any] | None = None


@dataclass(frozen=True)
class OutputSettings:
    """What a run draws beside its scores (``outputs.reliability_plot``): each scored fold always writes its
    reliability data; ``fold_plot`` also draws each fold's ``reliability.png``, ``experiment_plot`` the experiment's,
    over every fold's test items (``faina.training.reliability_outputs``)."""

    fold_plot: bool = False
    experiment_plot: bool = True


RELIABILITY_PLOTS = {
    "experiment": OutputSettings(fold_plot=False, experiment_plot=True),
    "fold": OutputSettings(fold_plot=True, experiment_plot=True),
    "none": OutputSettings(fold_plot=False, experiment_plot=False),
}


def output_settings(cfg: DictConfig) -> OutputSettings:
    """``outputs.*`` as settings; an unknown ``reliability_plot`` stops the run before anything trains."""
    choice = str((cfg.get("outputs") or {}).get("reliability_plot", "experiment"))
    if choice not in RELIABILITY_PLOTS:
        raise UserError(
            f"outputs.reliability_plot={choice} is not one of {', '.join(RELIABILITY_PLOTS)}",
            fix="outputs.reliability_plot=experiment (one plot per experiment), fold (also one per fold) or none",
        )
    return RELIABILITY_PLOTS[choice]


def with_fold(cfg: DictConfig, index: int | None, name: str, folder: Path) -> DictConfig:
    """``cfg`` with ``fold.*`` filled in, so loggers and callbacks can name the fold (or the experiment's run)."""
    return OmegaConf.merge(cfg, {"fold": {"index": index, "name": name, "dir": str(folder)}})


def _blocks(group: Any) -> list[dict]:
    return [dict(block) for block in (group or {}).values() if block is not None]


def early_stopping(cfg: DictConfig) -> DevEarlyStopping | None:
    """The fold's early stopping from ``early_stopping`` and ``checkpoint`` (what it monitors), or ``None``."""
    block = cfg.get("early_stopping") or {}
    return early_stopping_callback(
        block.get("patience"), block.get("min_delta", 0.0), cfg.checkpoint.monitor, cfg.checkpoint.mode
    )


def fold_settings(cfg: DictConfig, index: int, fold_dir: Path) -> FoldSettings:
    """What ``FoldTrainer`` needs for fold ``index``: seed, trainer, loggers and callbacks resolved for the fold, the
    selection (``checkpoint.monitor`` / ``mode``), weight averaging and early stopping."""
    resolved = OmegaConf.to_container(with_fold(cfg, index, f"fold{index}", fold_dir), resolve=True)
    return FoldSettings(
        seed=int(cfg.seed),
        trainer=resolved["trainer"],
        monitor=cfg.checkpoint.monitor,
        mode=cfg.checkpoint.mode,
        loggers=_blocks(resolved.get("logger")),
        callbacks=_blocks(resolved.get("callbacks")),
        hyperparameters=resolved,
        average_last=int(cfg.checkpoint.get("average_last", 0) or 0),
        early_stopping=early_stopping(cfg),
        **resume_interval_settings(cfg.get("checkpoint")),
    )


def device_settings(cfg: DictConfig) -> DeviceSettings:
    bar = (OmegaConf.to_container(cfg.get("callbacks") or {}, resolve=True) or {}).get("rich_progress_bar")
    return DeviceSettings(
        accelerator=str(cfg.trainer.get("accelerator", "auto")),
        precision=str(cfg.trainer.get("precision", "32-true")),
        progress_bar=bar,
    )


def experiment_run(cfg: DictConfig, exp_dir: Path) -> tuple[list[dict], dict]:
    """The logger blocks and the config of the experiment's own run (W&B: ``<name>-summary``)."""
    resolved = OmegaConf.to_container(with_fold(cfg, None, EXPERIMENT_RUN_NAME, exp_dir), resolve=True)
    return _blocks(resolved.get("logger")), resolved


def wanted_folds(cfg: DictConfig) -> set[int] | None:
    """``cv.folds``: the folds to run (``None``: all)."""
    return set(cfg.cv.folds) if cfg.cv.get("folds") is not None else None


def keeps_checkpoints(cfg: DictConfig) -> bool:
    return bool((cfg.get("checkpoint") or {}).get("keep", False))

"""The one entry point: ``python train.py task=span-f encoder=alberto`` (``-q`` quieter, ``-v`` debug).

Hydra composes ``conf/``; ``run(cfg)`` picks the runner that the task config names for the chosen mode
(``mode=finetune`` or ``mode=zero-shot``) and returns its metrics, so sweeps can optimise them.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

import hydra
from omegaconf import DictConfig
from omegaconf.errors import InterpolationResolutionError

from common.errors import UserError, user_error_behind
from common.io import DISK_FULL, disk_full_error
from common.logs import show_progress, verbosity_from_argv
from common.resolvers import register_resolvers


def _sample_data(name: str) -> str:
    from faina.data.synthetic import default_sample_dir

    return str(default_sample_dir() / name)


def _offline_encoder() -> str:
    from models.encoder import offline_encoder_path

    return offline_encoder_path()


def _offline_mpnet() -> str:
    from models.offline_mpnet import mpnet_folder

    return mpnet_folder()


def _targets_suffix(targets: str | None) -> str:
    """``""`` for the paper's per-view targets, ``"-union"`` etc. otherwise (so each target has its folder)."""
    return "" if targets in (None, "views") else f"-{targets}"


def _selection_monitor(targets: str | None) -> str:
    """``checkpoint.monitor``'s default: a model of the annotators' shares (``data.targets=soft``) is selected on how
    well it predicts them, its soft loss on dev (``val/loss``; docs/soft-labels.md), others on ``val/f1``."""
    from faina.data.targets import trains_on_shares

    return "val/loss" if trains_on_shares(targets) else "val/f1"


def _selection_mode(monitor: str | None) -> str:
    """``checkpoint.mode``'s default for a monitored name: ``min`` for a loss (``val/loss``, ``val/a1/loss``),
    ``max`` for a score."""
    return "min" if str(monitor or "").rsplit("/", 1)[-1].endswith("loss") else "max"


def config_resolvers() -> dict[str, Callable[..., str]]:
    """The resolvers ``conf/`` uses that know the project's data and models (``common/`` only registers)."""
    from common.user_cache import user_cache_dir

    return {
        "sample_data": _sample_data,
        "offline_encoder": _offline_encoder,
        "offline_mpnet": _offline_mpnet,
        "targets_suffix": _targets_suffix,
        "selection_monitor": _selection_monitor,
        "selection_mode": _selection_mode,
        "user_cache": user_cache_dir,
    }


def register_config_resolvers() -> None:
    """Register ``config_resolvers()``; code that composes ``conf/`` without ``train.py`` (tests) calls it."""
    register_resolvers(config_resolvers())


register_config_resolvers()


SIGTERM_EXIT = 128 + 15  # what a shell reports for a process ended by SIGTERM


def _stopped_by_sigterm(stop: SystemExit) -> bool:
    """Lightning ends ``fit`` on SIGTERM with ``SIGTERMException``, a ``SystemExit`` *without a code*: the process
    would exit 0, as if the run had finished, and a script (``train.py && next step``) or a scheduler would go
    on without its results."""
    exceptions = sys.modules.get("lightning.pytorch.utilities.exceptions")  # imported by whatever trained
    return exceptions is not None and isinstance(stop, exceptions.SIGTERMException)


def run(cfg: DictConfig) -> dict[str, float]:
    """Run the configured task and mode; return a flat dict of metrics."""
    runners = {mode: runner for mode, runner in (cfg.task.get("runners") or {}).items() if runner is not None}
    if cfg.mode.name not in runners:
        raise UserError(
            f"task {cfg.task.name!r} has no {cfg.mode.name!r} mode", fix=f"choose mode= one of {sorted(runners)}"
        )
    runner = hydra.utils.instantiate(runners[cfg.mode.name])
    from common.expected_warnings import said_once

    with said_once(expected_warnings(), logging.getLogger("train")):
        return runner(cfg)


def expected_warnings() -> list:
    """The warnings a run expects (``common.expected_warnings``): said once per run as a plain line. A collapse on
    the test split (the model a fold keeps predicts nothing) stays a warning, said once too."""
    from common.expected_warnings import Expected
    from metrics.faina_scores import ZeroDenominatorWarning
    from models.collapse_warning import CollapseWarning

    return [
        Expected(
            ZeroDenominatorWarning,
            why="normal while a model predicts nothing for a view, early in training; not repeated in this run",
        ),
        Expected(
            CollapseWarning,
            r"^val: ",
            why="normal at the first validations of a short run; not repeated in this run",
        ),
        Expected(
            CollapseWarning, r"^test: ", logging.WARNING, why="the model this fold kept; not repeated in this run"
        ),
    ]


@hydra.main(version_base="1.3", config_path="conf", config_name="train")
def main(cfg: DictConfig) -> float | None:
    if not logging.getLogger().handlers:  # a job started by a launcher in a fresh process (submitit)
        show_progress()
    try:
        metrics = run(cfg)
    except (UserError, InterpolationResolutionError) as err:  # the second: a resolver of conf/ raised a UserError
        user_error = user_error_behind(err)
        if user_error is None:
            raise
        print(f"error: {user_error}", file=sys.stderr)
        raise SystemExit(2) from None
    except SystemExit as stop:
        if not _stopped_by_sigterm(stop):
            raise
        print(
            "stopped: the run received SIGTERM and ended after its current batch; its last checkpoint is kept. "
            "Rerun the same command to resume from it",
            file=sys.stderr,
        )
        raise SystemExit(SIGTERM_EXIT) from None
    except OSError as err:  # a full disk under a writer that is not ours (a logger): the same one message
        if err.errno not in DISK_FULL:
            raise
        print(f"error: {disk_full_error(err.filename or cfg.paths.results_dir, err)}", file=sys.stderr)
        raise SystemExit(2) from None
    objective = cfg.get("optimized_metric")
    return metrics.get(objective) if objective else None


def refuse_moved_settings(overrides: list[str]) -> None:
    """A setting that moved (``model.module.tuning_scope`` is ``model.module.decision.scope``) is one message
    naming its new key, before Hydra refuses it as unknown."""
    from models.former_settings import moved_override

    moved = moved_override(overrides)
    if moved is not None:
        print(f"error: {moved}", file=sys.stderr)
        raise SystemExit(2)


# Named recipes taken back: the experiment name, why, and what to run instead (docs/benchmark-quality.md#the-best-recipes)
WITHDRAWN_EXPERIMENTS = {
    "best-post-f": (
        "it was the default post-f recipe trained 6 epochs instead of 10, a length never shown to win at the length "
        "it replaces",
        "task=post-f (10 epochs, tuned thresholds with the 0.3 floor: what best-post-f tuned)",
    ),
}


def refuse_withdrawn_experiments(overrides: list[str]) -> None:
    """A named recipe that was withdrawn is one message saying why and what to run, not Hydra's 'could not find'."""
    for override in overrides:
        key, _, value = override.lstrip("+~").partition("=")
        if key == "experiment" and value in WITHDRAWN_EXPERIMENTS:
            why, instead = WITHDRAWN_EXPERIMENTS[value]
            error = UserError(f"experiment={value} was withdrawn: {why}.", fix=f"run {instead}")
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(2)


if __name__ == "__main__":
    verbosity, sys.argv = verbosity_from_argv(sys.argv)  # before Hydra parses the overrides
    refuse_moved_settings(sys.argv[1:])
    refuse_withdrawn_experiments(sys.argv[1:])
    show_progress(verbosity)
    main()

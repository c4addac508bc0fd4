"""Weights & Biases runs as a place to compare: one run per fold, one per experiment.

- A fold's run (``logger=wandb``, ``WandbRun``) logs the per-epoch dev metrics and, when the fold ends, the test
  metrics; its summary then holds the *selected* epoch's dev metrics (the weights that predicted, not the last
  epoch's), ``best_dev_f1`` and ``best_epoch``, and the prediction file as an artifact.
- The experiment's run (``log_experiment_run``), written when the experiment finishes: the resolved config and
  the mean ± std over folds of every score (``val/f1_mean``, ``test/strict/avg/f1_mean``, ``..._std``), in the
  experiment's W&B group beside its folds, job type ``experiment``. In a sweep each trial is one experiment, so
  the trials' experiment runs are one line each in W&B's parallel-coordinates view.

Where offline runs are written and how to sync them: docs/training.md#weights--biases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lightning.pytorch.loggers import WandbLogger

EXPERIMENT_JOB_TYPE = "experiment"
EXPERIMENT_RUN_NAME = "summary"  # the experiment run is ``<name>-summary``


class WandbRun(WandbLogger):
    """Lightning's ``WandbLogger`` with the fold's closing summary, and without the ``anonymous=None`` it passes
    to ``wandb.init`` when no one asked for anonymous logging (wandb then warns that the setting has no effect)."""

    def __init__(self, *args: Any, anonymous: bool | None = None, **kwargs: Any):
        super().__init__(*args, anonymous=anonymous, **kwargs)
        if anonymous is None:
            self._wandb_init.pop("anonymous", None)

    def finish_run(self, summary: Mapping[str, float], prediction_file: Path | None = None) -> None:
        """Overwrite the summary with ``summary`` (W&B keeps each key's last logged value there), attach the
        prediction file, and end the run so the next fold starts its own."""
        experiment = self.experiment
        if summary:
            experiment.summary.update(dict(summary))
        if prediction_file is not None:
            import wandb

            artifact = wandb.Artifact(f"predictions-{experiment.name}", type="predictions")
            artifact.add_file(str(prediction_file))
            experiment.log_artifact(artifact)
        experiment.finish()


def log_experiment_run(
    loggers: Sequence[Mapping[str, Any]],
    hyperparameters: Mapping[str, Any],
    metrics: Mapping[str, float],
    num_folds: int,
) -> int:
    """One experiment-level run per W&B logger among ``loggers`` (logger blocks with a ``_target_``, resolved for the
    experiment's run: its folder, the run name ``summary``): the config ``hyperparameters`` and the over-fold
    ``metrics``; returns how many runs were written (other loggers have the experiment's ``results.json``
    instead)."""
    import hydra

    written = 0
    for block in loggers:
        if not issubclass(hydra.utils.get_class(block["_target_"]), WandbRun):
            continue
        run = hydra.utils.instantiate(dict(block), job_type=EXPERIMENT_JOB_TYPE)
        run.log_hyperparams(dict(hyperparameters))
        summary = {**metrics, "folds": num_folds}
        run.log_metrics(summary)
        run.finish_run(summary)
        written += 1
    return written

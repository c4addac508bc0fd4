"""The reliability diagrams a run writes (``outputs.reliability_plot``; docs/soft-labels.md#calibration).

Every scored fold (of each entry) writes its diagram's data, ``reliability.json`` (``faina.analysis.reliability``):
sums over the probabilities already in memory, milliseconds. Drawing a figure costs seconds (matplotlib), so by
default it is done once per experiment, by the run report, from all folds' data pooled (``reliability.png`` in the
experiment's folder; ``reliability-<entry>.png`` per entry of a run of several). ``fold`` also draws each fold's own
``reliability.png``; ``none`` draws nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from faina.analysis.reliability import FILE_NAME as DATA_FILE
from faina.analysis.reliability import pool_reliability, read_reliability_data, reliability_data, write_reliability_data
from faina.analysis.reliability_plot import FILE_NAME as PLOT_FILE
from faina.analysis.reliability_plot import draw_reliability_plot
from faina.data.task_data import TaskData


def write_fold_reliability(
    data: TaskData, gold, probabilities, uncalibrated, prior_corpus, fold_dir: Path, draw: bool
) -> dict:
    """A scored fold's ``reliability.json`` (and, with ``draw``, its ``reliability.png``); the data written. The
    prior line is the mean soft label of the fold's train part, as in its probability scores."""
    from faina.scoring.soft_scores import annotated_items, votes
    from metrics.soft_labels import prior, soft_labels

    reference = prior(soft_labels(votes(prior_corpus, data.labels), annotated_items(prior_corpus)))
    diagram = reliability_data(gold, probabilities, data.labels, uncalibrated, reference)
    write_reliability_data(diagram, fold_dir)
    if draw:
        draw_reliability_plot(diagram, fold_dir / PLOT_FILE)
    return diagram


def experiment_plot_name(entry: str | None = None) -> str:
    """The experiment's diagram: ``reliability.png``, or ``reliability-<entry>.png`` for an entry of several."""
    return PLOT_FILE if entry is None else f"{Path(PLOT_FILE).stem}-{entry}{Path(PLOT_FILE).suffix}"


def write_experiment_reliability(entry_dirs: Sequence[Path], path: Path) -> Path | None:
    """The diagram over every fold of ``entry_dirs`` that wrote its data (a fold finished before folds wrote it has
    none and is left out), their bin sums pooled, drawn into ``path``; ``None`` when no fold has data."""
    found = [read_reliability_data(folder / DATA_FILE) for folder in entry_dirs if (folder / DATA_FILE).is_file()]
    if not found:
        return None
    return draw_reliability_plot(pool_reliability(found), path)

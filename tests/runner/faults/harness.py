"""The fault-injection harness: run a short real experiment in a subprocess, kill it at a named point, rerun.

``train.py`` runs as a user would start it. ``FALLACY_KILL_AT=<point>@<n>`` (``common.faults``) makes the
process SIGKILL itself the n-th time it reaches a point, so every kill lands at the same place on every
machine, however loaded. ``snapshot`` reads a results folder as ``{relative path: bytes}`` (root paths
replaced, per-run Hydra folders and loggers' CSV files left out, and the folds' wall-clock ``phases`` left out of
the JSON files: seconds differ between any two runs), so a killed-and-rerun experiment can be compared byte for
byte with an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from common.faults import ENV_VAR
from tests_paths import REPO

NAME = "faults"
SKIPPED_DIRS = {"hydra", "logs"}
SKIPPED_FILES = {".lock"}
TEXT_SUFFIXES = {".json", ".yaml", ".md", ".tsv", ".conll"}


def command(root: Path, encoder: str, sample: Path, *extra: str, every_epoch: bool = True) -> list[str]:
    """The tiniest real experiment: tiny BERT, 30 posts, 2 folds, 2 epochs of 3 batches, dropout, shuffling,
    gradual unfreezing and a learning-rate schedule (everything that resuming has to restore). ``every_epoch``: a
    resume point after every epoch, for the kills to land between (else the default interval: none in seconds)."""
    interval = ["checkpoint.resume_every_n_epochs=1"] if every_epoch else []
    return [
        sys.executable,
        "train.py",
        "task=post-c",
        "cv.num_folds=2",
        "trainer.max_epochs=2",
        "loader.batch_size=4",
        "model.module.gradual_unfreezing=true",
        "callbacks=none",
        "logger=csv",
        f"paths.root_dir={root}",
        f"encoder.name_or_path={encoder}",
        "data=custom",
        f"data.train_path={sample / 'sample.tsv'}",
        f"name={NAME}",
        *interval,
        *extra,
    ]


def run(cmd: list[str], kill_at: str | None = None, fsize_limit: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    env.pop(ENV_VAR, None)
    if kill_at:
        env[ENV_VAR] = kill_at

    def limit_file_size():  # a full disk, as the kernel reports it to a writer (EFBIG instead of a signal)
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_limit, fsize_limit))

    return subprocess.run(
        cmd,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        preexec_fn=limit_file_size if fsize_limit else None,
    )


def killed(result: subprocess.CompletedProcess) -> bool:
    return result.returncode == -signal.SIGKILL


def experiment_dir(root: Path) -> Path:
    return root / "results" / NAME


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file a later step could read, as bytes with ``root`` replaced by ``<root>``."""
    exp = experiment_dir(root)
    files = {}
    for path in sorted(exp.rglob("*")):
        relative = path.relative_to(exp)
        if (
            not path.is_file()
            or relative.parts[0] in SKIPPED_DIRS
            or SKIPPED_DIRS & set(relative.parts)
            or path.name in SKIPPED_FILES
        ):
            continue
        data = path.read_bytes()
        if path.suffix == ".json":
            data = json.dumps(without_timings(json.loads(data)), sort_keys=True).encode()
        if path.suffix in TEXT_SUFFIXES:
            data = data.replace(str(root).encode(), b"<root>")
        files[str(relative)] = data
    return files


def fold_notes(root: Path, fold: int) -> dict[str, str]:
    """The notes of how fold ``fold`` spent its time (``phases.notes`` of its ``metrics.json``; which dev pass)."""
    metrics = json.loads((experiment_dir(root) / f"fold{fold}" / "metrics.json").read_text(encoding="utf-8"))
    return metrics["phases"].get("notes", {})


def without_timings(node):
    """A JSON value without its ``phases`` blocks (the wall-clock cost of each fold and of the run)."""
    if isinstance(node, dict):
        return {key: without_timings(value) for key, value in node.items() if key != "phases"}
    if isinstance(node, list):
        return [without_timings(item) for item in node]
    return node


def describe(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"


class LimitFileSize:
    """A Lightning callback (put in by a config override) that caps the size of files this process may write
    from the start of ``epoch`` on: a disk that fills up in the middle of training."""

    def __new__(cls, epoch: int, limit: int):
        import lightning.pytorch as pl

        class _Limit(pl.Callback):
            def on_train_epoch_start(self, trainer, pl_module):
                if trainer.current_epoch == epoch:
                    import resource

                    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

        return _Limit()

"""The notebooks run as documented (``jupyter execute`` from the repository root) on a small run's results and show
their figures inline; the figures' readability is checked in tests/faina/test_fold_comparison.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests_paths import REPO
from train import run


def _images(notebook) -> list[dict]:
    return [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]


@pytest.mark.slow
def test_compare_folds_runs_as_documented_from_the_repository_root(make_cfg, tmp_path):
    """``RESULTS_DIR=results jupyter execute notebooks/compare_folds.ipynb --output=...`` from the checkout: the kernel
    starts in notebooks/, the relative RESULTS_DIR is still read from the root, and both figures show inline."""
    cfg = make_cfg("task=span-f", "debug=fast", "cv.num_folds=2")
    run(cfg)
    results = Path(cfg.paths.results_dir)
    relative = os.path.relpath(results, REPO)  # from notebooks/ this path points elsewhere
    env = {k: v for k, v in os.environ.items() if k not in ("WANDB_PROJECT", "RESULTS_DIR")}
    env.update(RESULTS_DIR=relative, WANDB_MODE="offline")
    jupyter = Path(sys.executable).parent / "jupyter"  # installed by the set-up (nbclient, a dev extra)
    executed = tmp_path / "compared"
    done = subprocess.run(
        [str(jupyter), "execute", "notebooks/compare_folds.ipynb", f"--output={executed}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    notebook = nbformat.read(f"{executed}.ipynb", as_version=4)
    outputs = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert f"1 experiment(s) under {results.resolve()}" in outputs
    assert "W&B: skipped (set WANDB_PROJECT" in outputs  # the variable the W&B logger reads
    assert len(_images(notebook)) == 2  # per-fold and per-label figures, inline
    assert (results / "figures" / "per_fold_f1.png").stat().st_size > 1000
    assert (results / "figures" / "per_label_f1.png").stat().st_size > 1000


def test_compare_folds_without_results_says_so(tmp_path, monkeypatch):
    notebook = nbformat.read(REPO / "notebooks" / "compare_folds.ipynb", as_version=4)
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("WANDB_MODE", "offline")
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}
    ).execute()
    outputs = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "0 experiment(s) under" in outputs and "no results.json with test scores under" in outputs
    assert _images(notebook) == []


@pytest.mark.slow
def test_label_variation_notebook_executes(make_cfg, monkeypatch, small_sample):
    cfg = make_cfg("task=span-f", "debug=fast", "cv.folds=[0]")
    run(cfg)
    results = Path(cfg.paths.results_dir)
    notebook = nbformat.read(REPO / "notebooks" / "label_variation.ipynb", as_version=4)
    monkeypatch.setenv("RESULTS_DIR", str(results))
    monkeypatch.setenv("FAINA_FILE", str(small_sample / "sample.conll"))
    monkeypatch.setenv("FAINA_GAMMA", "0")  # γ is tested in tests/faina/test_stats_cli.py
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "sample.conll: 60 posts, 2 views" in outputs and "1 experiment(s)" in outputs
    shown = "".join(
        str(o.get("data", {}).get("text/plain", ""))
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert "human ceiling" in shown and "debug-span-f" in shown
    assert len(_images(notebook)) == 2  # the overlap heatmap and the model-vs-annotator bars, inline
    assert (results / "figures" / "label_overlap_all.png").stat().st_size > 1000
    assert (results / "figures" / "model_vs_annotator_f1.png").stat().st_size > 1000

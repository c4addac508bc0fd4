"""notebooks/compare_folds.ipynb runs on the results of a small run and draws its figures."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests_paths import REPO
from train import run


def test_compare_folds_notebook_executes(make_cfg, monkeypatch):
    cfg = make_cfg("task=span-f", "debug=fast", "cv.num_folds=2")
    run(cfg)
    results = Path(cfg.paths.results_dir)
    notebook = nbformat.read(REPO / "notebooks" / "compare_folds.ipynb", as_version=4)
    monkeypatch.setenv("RESULTS_DIR", str(results))
    monkeypatch.delenv("WANDB_PROJECT_PATH", raising=False)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "1 experiment(s)" in outputs
    assert (results / "figures" / "per_fold_f1.png").stat().st_size > 1000
    assert (results / "figures" / "per_label_f1.png").stat().st_size > 1000

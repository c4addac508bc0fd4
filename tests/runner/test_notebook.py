"""notebooks/compare_folds.ipynb runs on the results of a small run and draws its figures."""

from __future__ import annotations

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
    assert (results / "figures" / "label_overlap_all.png").stat().st_size > 1000
    assert (results / "figures" / "model_vs_annotator_f1.png").stat().st_size > 1000

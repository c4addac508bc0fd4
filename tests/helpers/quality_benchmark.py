"""What the quality benchmark's end-to-end tests share: the script, a small corpus in the layout it reads, the
overrides that train with the tiny encoder, and where a run's folder is."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests_paths import REPO

SCRIPT = REPO / "scripts" / "benchmark_quality.py"


def write_corpus(folder: Path) -> Path:
    """train-dev.conll / test.conll / labels.yaml in the layout the script reads (the sample's first and last posts)."""
    from faina.data.levels import subset
    from faina.formats.conll import read_conll, write_conll
    from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
    from faina.sample import default_sample_dir

    corpus = read_conll(default_sample_dir() / "sample.conll", LabelInventory.load(DEFAULT_LABELS_FILE))
    write_conll(subset(corpus, range(200)), folder / "train-dev.conll")
    write_conll(subset(corpus, range(260, 300)), folder / "test.conll")
    shutil.copy(DEFAULT_LABELS_FILE, folder / "labels.yaml")
    return folder


def overrides(tiny_encoder: str) -> list[str]:
    """The train.py overrides of every benchmark run of the tests: the tiny encoder, one batch per epoch."""
    return [f"encoder.name_or_path={tiny_encoder}", "debug=fast"]


def run_dir(out: Path, tiny_encoder: str, seed: int, recipe: str = "views") -> Path:
    """The run folder of span-f ``recipe`` at one epoch (``--quick``) and ``seed`` under ``out``."""
    from faina.benchmarks.quality_runs import Length, run_name

    return out / "runs" / run_name("span-f", recipe, Length(1), seed, overrides(tiny_encoder))

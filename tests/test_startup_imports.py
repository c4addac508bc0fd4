"""The scoring, validation and stats commands start without torch: importing them in a fresh interpreter
leaves torch (and the other heavy libraries the training side needs) out of ``sys.modules``.

Importing torch costs seconds of CPU; ``python -m faina.evaluate`` is meant to cost about what the official
scorer costs (``scripts/benchmark_startup.py`` measures both). This checks the cause, not a timing: a module-level
import of torch, torchmetrics, transformers or lightning anywhere under these modules fails it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "torchmetrics", "transformers", "lightning", "peft", "datasets")
# What a command module may import without its command doing heavy work: the argument parser is built and
# `--help` printed after these imports alone.
TORCH_FREE = (
    "faina.evaluate",
    "faina.validate",
    "faina.stats",
    "faina.show",
    "faina.sample",
    "faina.tag",
    "missci.evaluate",
    "missci.stats",
    "missci.baseline",
    "missci.sample",
    "missci.report",
    "missci.download",
    "missci.predict_lora",
    "models.install_mpnet",
    "metrics.faina_span_sums",
    "metrics.faina_post_counts",
    "metrics.missci_ranking",
    "fallacy",
    "fallacy.cli",
)

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in sys.argv[2].split(","))))
"""


def heavy_modules_after_import(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module, ",".join(HEAVY)], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", TORCH_FREE)
def test_command_module_imports_no_torch(module):
    assert heavy_modules_after_import(module) == [], f"{module} imports a heavy library at module level"


def test_the_probe_sees_torch_where_it_is_imported():
    """The check is not vacuous: a module that does import torch is caught."""
    assert "torch" in heavy_modules_after_import("metrics.faina_span")


def test_scoring_a_file_imports_no_torch():
    """Not only the import: a whole `faina.evaluate` run (span-fine, soft and per label) stays torch-free."""
    script = """
import sys
from faina.evaluate import main
from faina.sample import default_sample_dir
gold = str(default_sample_dir() / "sample.conll")
main(["-T", "span-fine", "-G", gold, "-P", gold, "--per-label", "--json"])
print([name for name in sys.modules if name.split(".")[0] in ("torch", "torchmetrics", "transformers")],
      file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"


# What `train.py --help` must not import: the optional libraries (plots, W&B, LoRA, 4-bit) and the model stack.
NOT_FOR_HELP = ("matplotlib", "wandb", "peft", "bitsandbytes", "torch", "transformers", "lightning", "datasets")

TRAIN_HELP = """
import json, runpy, sys
sys.argv = ["train.py", "--help"]
try:
    runpy.run_path("train.py", run_name="__main__")
except SystemExit as stop:
    assert stop.code in (None, 0), stop.code
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})), file=sys.stderr)
"""


def test_train_help_imports_no_optional_library_nor_the_model_stack():
    """``train.py --help`` (Hydra's config groups) runs the entry point's own checks of the overrides and prints;
    none of that needs plots, W&B, peft, bitsandbytes, torch or transformers (docs/speed-and-scale.md)."""
    done = subprocess.run([sys.executable, "-c", TRAIN_HELP], cwd=REPO, capture_output=True, text=True, check=True)
    assert "Configuration groups" in done.stdout
    imported = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "hydra" in imported  # the probe saw the run
    assert sorted(imported & set(NOT_FOR_HELP)) == []

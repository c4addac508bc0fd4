"""The tiny encoder, the small sample and the one shared trained run of the test session.

Every test that needs a trained Faina model reads the same runs, trained once per session (a few seconds) by the
``trained_runs`` fixture (``tests/conftest.py``): a 2-layer, 32-wide random BERT with the packaged MiniLM tokenizer,
60 synthetic posts and ``debug=fast`` (one batch per epoch). They are part of the fast tier; a test that trains its
own run is ``e2e`` (``tests/tiers.py``). The runs are shared: a test never writes into them, it copies what it
changes (``copy_of``). Composing a run like the command line does is :func:`compose_run`, the one place tests build
a training config.
"""

from __future__ import annotations

import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from helpers.configs import compose_train
from tiers import sanctioned_training


def save_tiny_encoder(folder: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from models.encoder import offline_encoder_path

    tokenizer = AutoTokenizer.from_pretrained(offline_encoder_path())
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder)
    return folder


def write_small_sample(folder: Path) -> Path:
    """60 synthetic posts: ``sample.conll`` / ``sample.tsv`` and their unlabelled copies."""
    from faina.data.synthetic import write_sample

    write_sample(folder, posts=60, seed=3, unlabelled=True)
    return folder


def sample_file(sample: Path, task: str, labelled: bool = True) -> Path:
    ext = "conll" if task.startswith("span") else "tsv"
    return sample / (f"sample.{ext}" if labelled else f"sample-unlabelled.{ext}")


def compose_run(root: Path, encoder: Path | str, sample: Path, task: str, *overrides: str):
    """``conf/train.yaml`` composed as ``train.py task=TASK data=custom ... debug=fast`` would, on the small sample."""
    return compose_train(
        f"paths.root_dir={root}",
        f"task={task}",
        "debug=fast",
        "loader.batch_size=8",
        f"encoder.name_or_path={encoder}",
        "data=custom",
        f"data.train_path={sample_file(sample, task)}",
        *overrides,
    )


def train_run(root: Path, encoder: Path | str, sample: Path, task: str, *overrides: str) -> Path:
    """Train ``task`` on the sample; the results folder of the run."""
    from train import run

    cfg = compose_run(root, encoder, sample, task, *overrides)
    run(cfg)
    return Path(cfg.paths.results_dir) / cfg.name


def compose_multi_run(root: Path, encoder: Path | str, sample: Path, *overrides: str):
    """``train.py task=multi debug=fast`` on the small sample: span-f and post-f entries of its CoNLL file."""
    conll = sample / "sample.conll"
    return compose_train(
        f"paths.root_dir={root}",
        "task=multi",
        "debug=fast",
        "loader.batch_size=8",
        f"encoder.name_or_path={encoder}",
        f"task.entries.span_f.data.train_path={conll}",
        f"task.entries.post_f.data.train_path={conll}",
        *overrides,
    )


def train_multi_run(root: Path, encoder: Path | str, sample: Path, *overrides: str) -> Path:
    from train import run

    cfg = compose_multi_run(root, encoder, sample, *overrides)
    run(cfg)
    return Path(cfg.paths.results_dir) / cfg.name


def copy_of(folder: Path, into: Path, name: str = "copy") -> Path:
    """A copy of a shared folder (a run, a fold, an export) as ``into/name``, to change or damage."""
    target = into / name
    shutil.copytree(folder, target)
    return target


@dataclass(frozen=True)
class TrainedRuns:
    """The session's tiny runs: ``span`` (span-f, 2 folds) and ``post`` (post-f, fold 0 only), trained with the
    encoder copy ``encoder`` on ``sample``, with the logger and callbacks of ``conf/train.yaml``; ``exports``:
    ``span-fold0``, ``span-fold1``, ``post-fold0`` (``faina.export`` folders, made while the encoder existed).
    ``coarse``: span-c and post-c (fold 0 each); ``multi``: ``task=multi`` (span-f + post-f of the sample's CoNLL
    file, span-f the target; fold 0). The coarse and multi runs calibrate with the prior fallback
    (``model.module.calibration.fallback=prior``; post-c with ``fallback_margin=1``), the others without."""

    root: Path
    encoder: Path
    sample: Path
    span: Path
    post: Path
    exports: dict
    coarse: dict
    multi: Path

    @contextlib.contextmanager
    def without_sources(self):
        """The encoder copy and the runs moved away for a while: what an exported folder must do without."""
        hidden = self.root / "hidden"
        hidden.mkdir()
        moved = [(self.encoder, hidden / "encoder"), (self.span.parent, hidden / "results")]
        for source, target in moved:
            shutil.move(str(source), target)
        try:
            yield
        finally:
            for source, target in moved:
                shutil.move(str(target), source)
            hidden.rmdir()


def train_shared_runs(root: Path, tiny_encoder: Path | str, sample: Path) -> TrainedRuns:
    from faina.serving.export import export_fold

    encoder = root / "encoder"
    shutil.copytree(tiny_encoder, encoder)
    with sanctioned_training():
        span = train_run(root, encoder, sample, "span-f", "cv.num_folds=2")
        post = train_run(root, encoder, sample, "post-f", "cv.folds=[0]")
        # the coarse runs and both entries of the multi-task run also fit the calibration's prior fallback
        fallback = "model.module.calibration.fallback=prior"
        margin = {"span-c": [], "post-c": ["model.module.calibration.fallback_margin=1"]}  # post-c: with a margin
        coarse = {
            task: train_run(root, encoder, sample, task, "cv.folds=[0]", fallback, *margin[task])
            for task in ("span-c", "post-c")
        }
        entries = [f"task.entries.{entry}.{fallback}" for entry in ("span_f", "post_f")]
        multi = train_multi_run(root, encoder, sample, "cv.folds=[0]", *entries)
    exports = {
        "span-fold0": export_fold(span / "fold0", root / "exports" / "span-fold0"),
        "span-fold1": export_fold(span / "fold1", root / "exports" / "span-fold1"),
        "post-fold0": export_fold(post / "fold0", root / "exports" / "post-fold0"),
    }
    return TrainedRuns(root, encoder, sample, span, post, exports, coarse, multi)

"""Predicting with a trained model (one fold or an ensemble): a corpus, a file (``faina.predict``), a submission.

The one prediction loop: a Lightning ``predict`` pass over the encoded posts, decoded back into records.
"""
from __future__ import annotations

from pathlib import Path

import lightning.pytorch as pl
import torch

from common.errors import UserError
from faina.data.datamodule import FainaDataModule
from faina.data.folds import FoldSplit
from faina.data.levels import LEVELS
from faina.data.task_data import read_level
from faina.formats.labels import LabelInventory
from faina.serving.fold_model import load_tokenizer
from faina.serving.loading import load_predictor


def predict_file(model_dir: str, input_path: str, output_path: str, batch_size: int = 32,
                 trust_remote_code: bool = False) -> str:
    model, meta = load_predictor(model_dir, trust_remote_code)
    level = LEVELS[meta["level"]]
    if not input_path.endswith(f".{level.file_ext}"):
        raise UserError(f"a {meta['level']}-level model reads .{level.file_ext} files", path=input_path,
                        fix=f"give the {level.file_ext.upper()} file of the same posts")
    inventory = LabelInventory.load(meta["labels_inventory"])
    corpus = read_level(input_path, meta["level"], meta["grain"], inventory)
    predicted = predict_corpus(model, meta, corpus, batch_size)
    return str(level.write(predicted, output_path))


def predict_corpus(model, meta: dict, corpus, batch_size: int = 32):
    """The posts of ``corpus`` with ``model``'s labels (one model or an ensemble; ``meta`` from the loader)."""
    level = LEVELS[meta["level"]]
    tokenizer = load_tokenizer(meta["encoder"]["name_or_path"], meta["encoder"].get("trust_remote_code", False))
    features = level.encode(corpus, tokenizer, meta["labels"], meta["num_views"])
    for feature in features:  # gold targets of a labelled input are not needed to predict
        feature.pop("tags", None)
        feature.pop("labels", None)
    split = FoldSplit(0, (), (), tuple(range(len(features))))
    datamodule = FainaDataModule(features, split, tokenizer.pad_token_id, batch_size=batch_size)
    trainer = pl.Trainer(accelerator="auto", devices=1, logger=False, enable_checkpointing=False,
                         enable_model_summary=False, enable_progress_bar=False)
    with torch.inference_mode():
        outputs = trainer.predict(model, dataloaders=datamodule.test_dataloader())
    return level.records(corpus, range(len(features)), outputs, meta["labels"], meta["num_views"])


def write_ensemble_submission(results_dir: Path, corpus, batch_size: int = 32) -> Path:
    """``cv.ensemble``: the ensemble of every model of ``results_dir`` labels ``corpus`` (the unlabelled test
    file), written as ``submission-ensemble.<ext>`` beside the models' own ``fold<k>/submission.<ext>``."""
    model, meta = load_predictor(results_dir)
    level = LEVELS[meta["level"]]
    predicted = predict_corpus(model, meta, corpus, batch_size)
    return level.write(predicted, Path(results_dir) / f"submission-ensemble.{level.file_ext}")

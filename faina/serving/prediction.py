"""Predicting with a trained model (one fold or an ensemble): a corpus, a file (``faina.predict``), a submission.

The one prediction loop, ``predict_outputs``: a Lightning ``predict`` pass over the encoded posts, each batch
answered by the model's ``predict_outputs`` (one model or an ensemble alike, ``models/outputs.py``), decoded back
into records and, when asked, into the model's probabilities (``faina.serving.probabilities``). With ``raw`` it
also returns the scores the decisions were taken on and the gold of a labelled corpus, so a decision rule can be
fitted on them and applied to them again without another forward pass (the quality benchmark,
``faina.benchmarks``).
"""

from __future__ import annotations

from pathlib import Path

import lightning.pytorch as pl

from common.progress_bar import TerminalProgressBar
from faina.data.datamodule import FainaDataModule
from faina.data.folds import FoldSplit
from faina.data.levels import LEVELS
from faina.data.task_data import read_level
from faina.formats.any_file import check_readable_by
from faina.formats.labels import LabelInventory
from faina.formats.probability_file import write_probabilities
from faina.serving.fold_model import load_tokenizer
from faina.serving.loading import load_predictor
from faina.serving.probabilities import probabilities_from_outputs


def predict_file(
    model_dir: str,
    input_path: str,
    output_path: str,
    batch_size: int = 32,
    trust_remote_code: bool = False,
    probabilities_path: str | None = None,
    uncalibrated: bool = False,
    head: str | None = None,
) -> str:
    """Label ``input_path`` into ``output_path``; with ``probabilities_path``, also write the model's probabilities
    there (the ``probabilities.jsonl`` layout, gzip-compressed when its name ends in ``.gz``; docs/soft-labels.md):
    calibrated when the model is, or with ``uncalibrated`` its raw ones. ``head``: for the results folder of a
    multi-task run, the head whose fold models make the ensemble."""
    model, meta = load_predictor(model_dir, trust_remote_code, head)
    level = LEVELS[meta["level"]]
    check_readable_by(input_path, meta["level"], f"{meta['level']}-level model")
    inventory = LabelInventory.load(meta["labels_inventory"])
    corpus = read_level(input_path, meta["level"], meta["grain"], inventory)
    if probabilities_path is None:
        return str(level.write(predict_corpus(model, meta, corpus, batch_size), output_path))
    predicted, probabilities = predict_corpus_with_probabilities(model, meta, corpus, batch_size, uncalibrated)
    path = level.write(predicted, output_path)
    write_probabilities(probabilities, probabilities_path)
    return str(path)


def predict_corpus(model, meta: dict, corpus, batch_size: int = 32):
    """The posts of ``corpus`` with ``model``'s labels (one model or an ensemble; ``meta`` from the loader)."""
    outputs = predict_outputs(model, meta, corpus, batch_size)
    return LEVELS[meta["level"]].records(corpus, corpus_indices(corpus), outputs, meta["labels"], meta["num_views"])


def predict_corpus_with_probabilities(model, meta: dict, corpus, batch_size: int = 32, uncalibrated: bool = False):
    """``(records, probabilities)`` of ``corpus`` from one prediction pass (``faina.serving.probabilities``): the
    probabilities the model reports (calibrated when it is), or with ``uncalibrated`` its raw ones."""
    outputs = predict_outputs(model, meta, corpus, batch_size)
    indices = corpus_indices(corpus)
    records = LEVELS[meta["level"]].records(corpus, indices, outputs, meta["labels"], meta["num_views"])
    probabilities = probabilities_from_outputs(
        corpus, indices, outputs, meta["labels"], meta["num_views"], raw=uncalibrated
    )
    return records, probabilities


def corpus_indices(corpus) -> range:
    """The indices of every post of ``corpus`` (a span corpus's posts, a post corpus's rows)."""
    return range(len(corpus.items))


class _PredictionPass(pl.LightningModule):
    """The model under a Lightning ``predict`` loop: each batch answered by its ``predict_outputs``."""

    def __init__(self, model, raw: bool):
        super().__init__()
        self.model, self.raw = model, raw

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        return self.model.predict_outputs(batch, raw=self.raw)


def predict_outputs(model, meta: dict, corpus, batch_size: int = 32, raw: bool = False) -> list[dict]:
    """The one prediction pass: per batch of ``corpus``, what ``model``'s ``predict_step`` returns.

    With ``raw``, each batch also holds the scores its decisions were taken on (span: ``emissions`` with and
    without the decision O bias, ``decision_emissions``, and the ``word_mask``) and, for a labelled corpus, the
    ``gold`` of every annotator view of it with its ``annotated`` mask: what ``model.fit_decision`` fits a rule on
    and ``model.apply_decision`` decides again (``models/outputs.py``). Raw tensors are made outside inference
    mode, so later computations may combine them with the model's parameters."""
    level = LEVELS[meta["level"]]
    tokenizer = load_tokenizer(meta["encoder"])
    # a raw pass keeps the gold targets of every view of the corpus; otherwise they are not needed to predict
    views = corpus.num_views if raw else meta["num_views"]
    features = level.encode(corpus, tokenizer, meta["labels"], views, meta.get("context", ()))
    if not raw:
        for feature in features:
            feature.pop("tags", None)
            feature.pop("labels", None)
    split = FoldSplit(0, (), (), tuple(range(len(features))))
    datamodule = FainaDataModule(features, split, tokenizer.pad_token_id, batch_size=batch_size)
    trainer = pl.Trainer(
        accelerator="auto",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=[TerminalProgressBar()],  # progress on stderr (stdout is for results), on a terminal only
        inference_mode=not raw,
    )
    return trainer.predict(_PredictionPass(model, raw), dataloaders=datamodule.test_dataloader(), weights_only=True)


def write_ensemble_submission(
    results_dir: Path, corpus, batch_size: int = 32, head: str | None = None, suffix: str = ""
) -> Path:
    """``cv.ensemble``: the ensemble of every model of ``results_dir`` (of a multi-task run: every fold's ``head``)
    labels ``corpus`` (the unlabelled test file), written as ``submission-ensemble<suffix>.<ext>`` beside the models'
    own submissions, its probabilities as ``probabilities-ensemble<suffix>.jsonl.gz`` (compressed as the folds'
    ``probabilities.jsonl.gz``)."""
    model, meta = load_predictor(results_dir, head=head)
    level = LEVELS[meta["level"]]
    predicted, probabilities = predict_corpus_with_probabilities(model, meta, corpus, batch_size)
    write_probabilities(probabilities, Path(results_dir) / f"probabilities-ensemble{suffix}.jsonl.gz")
    return level.write(predicted, Path(results_dir) / f"submission-ensemble{suffix}.{level.file_ext}")

"""How a fold ends for each task entry once its model has trained: the same for one entry and for several.

The entry's head (with the shared encoder: a complete single-task model) fits its decision rule and the calibration
of its probabilities on the entry's dev split, is exported as a model folder (``model.json`` +
``model.safetensors``), predicts the entry's test split (or, for ``cv=official``, its test file), and its
predictions are written in the official file layout with the model's probabilities beside them
(``probabilities.jsonl.gz``) and, where gold labels exist, scored with the official-parity evaluator of the entry's
task (and the probability scores, with the data of their reliability diagram: ``faina.training.reliability_outputs``).
A run of one entry does this in ``fold<k>/`` itself, a run of several in ``fold<k>/<entry>/`` (``entry_dir``).
"""

from __future__ import annotations

from pathlib import Path

import hydra
import lightning.pytorch as pl

from common.phase_timing import PhaseClock
from faina.data.datamodule import FainaDataModule
from faina.data.folds import FoldSplit
from faina.data.levels import LEVELS, subset
from faina.data.task_data import TaskData
from faina.data.task_entries import TaskEntry
from faina.formats.probability_file import FILE_NAME as PROBABILITY_FILE
from faina.formats.probability_file import write_probabilities
from faina.formats.records import SpanCorpus, labels_used
from faina.serving.fold_model import export_model
from faina.serving.probabilities import probabilities_from_outputs
from faina.training.decision_tuning import fit_on_dev
from faina.training.reliability_outputs import write_fold_reliability
from faina.training.run_settings import DeviceSettings, OutputSettings


def entry_dir(fold_dir: Path, entries: list[TaskEntry], entry: TaskEntry) -> Path:
    """Where an entry's fold ends: the fold folder itself for a run of one entry (the layout every reader of a fold
    folder knows), ``fold<k>/<entry>/`` for several."""
    return fold_dir if len(entries) == 1 else fold_dir / entry.name


def finish_entry(
    entry: TaskEntry,
    head,
    module: FainaDataModule,
    entry_dir: Path,
    fit: bool,
    device: DeviceSettings,
    named_model,
    encoder_block: dict,
    clock: PhaseClock,
    output_settings: OutputSettings,
    kept_dev_outputs: list[dict] | None = None,
) -> dict:
    """One entry's fold ending (module docstring) into ``entry_dir``: its rule and calibration fitted on its dev split
    (``fit``; a head shared with an earlier entry is fitted by that one; on ``kept_dev_outputs``, the chosen epoch's
    validation outputs of the entry, when the fold kept them), exported, predicted, written and scored. Each step's
    seconds go to the fold's ``clock`` (dev_pass, tuning, calibration, prediction, outputs); ``output_settings``
    says whether the fold draws its own reliability diagram. Returns the entry's metrics."""
    entry_dir.mkdir(parents=True, exist_ok=True)
    split = module.split
    result: dict = {"train_posts": len(split.train), "dev_posts": len(split.dev)}
    calibrated = head.applies_calibration  # a shared head: calibrated by the entry that fitted it
    data = entry.data
    if fit:
        prior = train_prior(data, split) if head.calibration.falls_back else None  # what a fallback mixes in
        fitted = fit_on_dev(device.accelerator, head, kept_dev_outputs, module.whole_dev_dataloader, clock, prior)
        calibrated = "calibrated_on_dev" in fitted
        result.update(fitted)
    labels_inventory = str(entry.data_block.get("labels"))
    with clock.phase("outputs"):
        export_model(
            head,
            entry.task["name"],
            data.level,
            data.grain,
            data.labels,
            data.model_views,
            labels_inventory,
            named_model,
            encoder_block,
            entry_dir,
            data.context,
        )
    predicting = module.predict_features is not None
    if predicting or split.test:
        with clock.phase("prediction"):
            outputs = predict_on_one_device(device, head, module)
        predicted_file = len(module.predict_features) if predicting else None
        with clock.phase("outputs"):
            eval_task = entry.task["eval_task"]
            draw = output_settings.fold_plot
            write_fold_outputs(eval_task, data, outputs, split, entry_dir, predicted_file, calibrated, result, draw)
    return result


def train_prior(data: TaskData, split: FoldSplit):
    """``[model views, C]``: each label's share in the fold's training part, the prior its probability scores
    report (``faina.scoring.soft_scores.model_prior``), which a calibration's prior fallback mixes in."""
    import torch

    from faina.scoring.soft_scores import model_prior

    return torch.as_tensor(model_prior(subset(data.gold_corpus, split.train), data.labels, data.model_views))


def write_fold_outputs(
    eval_task: str,
    data: TaskData,
    outputs: list[dict],
    split: FoldSplit,
    fold_dir: Path,
    predicted_file: int | None,
    calibrated: bool,
    result: dict,
    draw_reliability: bool = False,
) -> Path:
    """Write a fold's predictions (``predictions.<ext>`` of its test split, or ``submission.<ext>`` of the test file
    of ``predicted_file`` posts) and its probabilities, score them when gold labels exist (into ``result``, with
    ``reliability.json``, and ``reliability.png`` when ``draw_reliability``); the prediction file's path."""
    level = LEVELS[data.level]
    if predicted_file is None:  # a fold's test split, every annotator view whatever data.targets
        corpus, indices, gold, name = data.labelled, split.test, subset(data.gold_corpus, split.test), "predictions"
    else:  # cv=official: the test file, scored too when it carries labels
        corpus, indices, name = data.unlabelled, range(predicted_file), "submission"
        gold = data.unlabelled if scorable_test(data) else None
    predicted = level.records(corpus, indices, outputs, data.labels, data.model_views)
    pred_path = level.write(predicted, fold_dir / f"{name}.{level.file_ext}")
    probabilities = write_fold_probabilities(corpus, indices, outputs, data, fold_dir)
    if gold is not None:
        uncalibrated = None
        if calibrated:
            uncalibrated = probabilities_from_outputs(corpus, indices, outputs, data.labels, data.model_views, raw=True)
        prior_corpus = subset(data.gold_corpus, split.train)
        result.update(
            score_fold(eval_task, data, gold, predicted, pred_path, probabilities, uncalibrated, prior_corpus)
        )
        write_fold_reliability(data, gold, probabilities, uncalibrated, prior_corpus, fold_dir, draw_reliability)
    result["prediction_file"] = str(pred_path)
    result["probability_file"] = str(fold_dir / PROBABILITY_FILE)
    return pred_path


def scorable_test(data: TaskData) -> bool:
    """Whether ``cv=official``'s test file carries labels the run can score: every post labelled (span files) or
    some label in it (post files, whose empty cells also mean "no label"), with the training file's views."""
    test = data.unlabelled
    if test is None or test.num_views != data.gold_corpus.num_views:
        return False
    return test.labelled if isinstance(test, SpanCorpus) else bool(labels_used(test))


def score_fold(eval_task: str, data: TaskData, gold, predicted, pred_path: Path, probabilities, uncalibrated, prior):
    """The hard scores of ``pred_path`` against ``gold`` (written beside it as ``gold.<ext>``) and the scores of the
    probabilities (and of the uncalibrated ones), as a fold's ``metrics.json`` holds them."""
    from faina.scoring.official import evaluate_files, unannotated_counts
    from faina.scoring.soft_scores import keyed_blocks, soft_scores

    level = LEVELS[data.level]
    gold_path = level.write(gold, pred_path.parent / f"gold.{level.file_ext}")
    # an aggregated or soft model (data.targets) predicts one view, scored against every gold view (-O)
    scores = evaluate_files(
        eval_task,
        gold_path,
        pred_path,
        per_label=True,
        inventory=data.inventory,
        one_pred=data.model_views != gold.num_views,
        exact=data.level == "span",
    )
    result = {"per_label": scores.pop("per_label", {}), "test": scores}
    result.update(unannotated_counts(gold))  # (post, view) pairs and posts left out of the scores, if any
    result["test_posts"] = len(gold.items)
    # probabilities against every gold view's share; the prior is the fold's train part (docs/soft-labels.md)
    block = soft_scores(gold, probabilities, data.labels, predicted, prior)
    raw = None if uncalibrated is None else soft_scores(gold, uncalibrated, data.labels, None, prior)
    result.update(keyed_blocks(block, raw))
    return result


def write_fold_probabilities(corpus, indices, outputs: list[dict], data: TaskData, fold_dir: Path):
    """Every fold writes its model's probabilities beside its hard file (``probabilities.jsonl.gz``; calibrated
    when the model is): one forward-backward pass per batch and a few hundred kB, so no setting to forget before a
    long run (docs/soft-labels.md). The scores are computed from the returned values, not from the rounded file."""
    probabilities = probabilities_from_outputs(corpus, indices, outputs, data.labels, data.model_views)
    write_probabilities(probabilities, fold_dir / PROBABILITY_FILE)
    return probabilities


def predict_on_one_device(device: DeviceSettings, model, datamodule) -> list[dict]:
    """Predict with a plain one-device Trainer, so DDP's sharded sampler never splits the test posts."""
    bar = device.progress_bar  # the run's own bar (on stderr), or none
    trainer = pl.Trainer(
        accelerator=device.accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=bar is not None,
        callbacks=[hydra.utils.instantiate(bar)] if bar is not None else None,
        precision=device.precision,
    )
    return trainer.predict(model, datamodule=datamodule, weights_only=True)  # no checkpoint is read; says so


def flat_test_metrics(result: dict) -> dict[str, float]:
    """A fold's test scores as logger keys: ``test/<mode>/<view>/<measure>``."""
    return {
        f"test/{mode}/{view}/{measure}": value
        for mode, views in result.get("test", {}).items()
        for view, measures in views.items()
        for measure, value in measures.items()
    }

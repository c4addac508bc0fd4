"""Cross-validated training of MVML/MVMD on a Faina-format dataset: the runner behind ``train.py``.

For each fold: train on the fold's train part, select the weights with the best dev F1 (a soft-target run: its
lowest dev soft loss, ``checkpoint.monitor``), fit the decision rule and the calibration of its probabilities on
dev, predict the held-out posts, write them in the official file layout (and the model's probabilities beside them,
``probabilities.jsonl``), score them with the official-parity evaluator (and the probability scores, key
``probability_scores``, with ``reliability.png``), and write the fold's metrics atomically (a rerun skips folds whose metrics exist; an
interrupted fold resumes exactly from its last checkpoint, see ``common.checkpointing``). Then mean ± std over folds is
printed and saved (Markdown and JSON). One run at a time per experiment folder (``common.locking``).
With ``cv=official`` the single model predicts ``data.test_path`` as a submission file, and scores it like a fold's
test split when the file carries labels (``scorable_test``; a real corpus's test file often does);
``cv.ensemble=K`` trains K models on K train/dev splits and also writes their ensemble's submission.
A model with a tuned decision rule (``model.module.decision.tuned=true``) fits it on the fold's dev set
after the best checkpoint is loaded, before it predicts and is exported.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import hydra
import lightning.pytorch as pl
from omegaconf import DictConfig, OmegaConf

from common.early_stopping import early_stopping_callback
from common.errors import UserError
from common.experiments import exclusive_experiment, guard_same_experiment, run_folds
from common.fold_training import FoldTrainer
from common.io import atomic_write_json, atomic_write_text
from common.spread import mean_std
from common.wandb_runs import log_experiment_run
from common.weight_averaging import check_average_last
from faina.data.datamodule import FainaDataModule
from faina.data.features import with_gold_views
from faina.data.folds import FoldSplit, kfold_splits, label_matrix, official_split
from faina.data.levels import LEVELS, subset
from faina.data.post_context import check_context
from faina.data.task_data import TaskData, load_task_data
from faina.formats.probability_file import FILE_NAME as PROBABILITY_FILE
from faina.formats.probability_file import write_probabilities
from faina.formats.records import SpanCorpus, labels_used
from faina.serving.fold_model import build_model, check_model_config, export_model, load_tokenizer
from faina.serving.prediction import write_ensemble_submission
from faina.serving.probabilities import probabilities_from_outputs
from faina.training.decision_tuning import calibrate_on_dev, tune_on_dev
from faina.training.loss_weights import fold_loss_weights
from faina.training.results_table import (
    flat_metrics,
    markdown_table,
    probability_table,
    summarise,
    summarise_probabilities,
)
from models.encoder_settings import encoder_settings

log = logging.getLogger(__name__)


def experiment_dir(cfg: DictConfig) -> Path:
    return Path(cfg.paths.results_dir) / cfg.name


def make_splits(cfg: DictConfig, data: TaskData) -> list[FoldSplit]:
    # folds come from every annotator view, so all data.targets of one dataset share the same folds
    union = [sorted({label for view in post for label in view or ()}) for post in data.label_sets(data.gold_corpus)]
    matrix = label_matrix(union, data.labels)
    if cfg.cv.name == "official":
        if data.unlabelled is None:
            raise UserError("cv=official needs a file to predict", fix="set data.test_path=/path/to/test file")
        return official_split(matrix, cfg.cv.dev_fraction, cfg.seed, cfg.cv.num_folds)
    return kfold_splits(matrix, cfg.cv.num_folds, cfg.cv.dev_fraction, cfg.seed)


def run_fold(
    cfg: DictConfig,
    data: TaskData,
    features: list[dict],
    split: FoldSplit,
    fold_dir: Path,
    tokenizer,
    predict_features: list[dict] | None,
) -> dict:
    fold = FoldTrainer(
        cfg,
        split.fold,
        fold_dir,
        average_last=cfg.checkpoint.get("average_last", 0),
        early_stopping=early_stopping_callback(cfg),
    )
    fcfg = fold.cfg
    weights = fold_loss_weights(fcfg.model.module, data, split.train)
    if weights is not None:  # the numbers the fold trains with, so model.json saves them (not a scheme's name)
        fcfg.model.module.loss_weights = weights
    model = build_model(
        fcfg.model,
        fcfg.encoder,
        data.level,
        data.labels,
        data.model_views,
        data.inventory,
        gold_views=data.gold_corpus.num_views,
        soft_targets=data.targets == "soft",
    )
    datamodule = FainaDataModule(
        features,
        split,
        tokenizer.pad_token_id,
        batch_size=cfg.loader.batch_size,
        num_workers=cfg.loader.num_workers,
        predict_features=predict_features,
        seed=cfg.seed + split.fold,
        length_grouped=cfg.loader.get("length_grouped", True),
    )
    fold.fit(model, datamodule=datamodule)
    chosen = fold.load_chosen_weights(model)
    if fold.average is not None:
        log.info("fold %d predicts with %s", split.fold, chosen or "its final weights")
    if not fold.is_global_zero:
        return {"fold": split.fold}  # under DDP, rank 0 alone predicts, writes and scores
    tuned = tune_on_dev(cfg, model, datamodule.whole_dev_dataloader())
    calibrated = calibrate_on_dev(cfg, model, datamodule.whole_dev_dataloader())
    outputs = predict_on_one_device(cfg, model, datamodule)
    result: dict = {
        "fold": split.fold,
        "train_posts": len(split.train),
        "dev_posts": len(split.dev),
        "best_dev_f1": fold.best_dev_f1,
    }
    if fold.checkpoint.monitor != "val/f1" and fold.best_score is not None:  # what selected the epoch (soft runs)
        result["selected_on"] = {"monitor": fold.checkpoint.monitor, "mode": fold.checkpoint.mode}
        result["selected_on"].update(score=fold.best_score, epoch=fold.checkpoint.best_epoch)
    if fold.average is not None:  # best_dev_f1 stays the best epoch's score, not the mean's
        result["averaged_epochs"] = fold.average.count
    if fold.length():
        result["early_stopping"] = fold.length()
    if tuned:
        result["tuned_on_dev"] = tuned
    if calibrated:
        result["calibrated_on_dev"] = calibrated
    export_model(model, fcfg, data.level, data.grain, data.labels, data.model_views, fold_dir, data.context)
    predicted_file = None if predict_features is None else len(predict_features)
    pred_path = write_fold_outputs(cfg, data, outputs, split, fold_dir, predicted_file, bool(calibrated), result)
    fold.close(flat_test_metrics(result), pred_path)
    atomic_write_json(fold_dir / "metrics.json", result)
    return result


def write_fold_outputs(
    cfg: DictConfig,
    data: TaskData,
    outputs: list[dict],
    split: FoldSplit,
    fold_dir: Path,
    predicted_file: int | None,
    calibrated: bool,
    result: dict,
) -> Path:
    """Write a fold's predictions (``predictions.<ext>`` of its test split, or ``submission.<ext>`` of the test file
    of ``predicted_file`` posts) and its probabilities, score them when gold labels exist (into ``result``, with
    ``reliability.png``); the prediction file's path."""
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
        result.update(score_fold(cfg, data, gold, predicted, pred_path, probabilities, uncalibrated, prior_corpus))
        write_fold_reliability(data, gold, probabilities, uncalibrated, prior_corpus, fold_dir)
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


def score_fold(cfg: DictConfig, data: TaskData, gold, predicted, pred_path: Path, probabilities, uncalibrated, prior):
    """The hard scores of ``pred_path`` against ``gold`` (written beside it as ``gold.<ext>``) and the scores of the
    probabilities (and of the uncalibrated ones), as a fold's ``metrics.json`` holds them."""
    from faina.scoring.official import evaluate_files, unannotated_counts
    from faina.scoring.soft_scores import keyed_blocks, soft_scores

    level = LEVELS[data.level]
    gold_path = level.write(gold, pred_path.parent / f"gold.{level.file_ext}")
    # an aggregated or soft model (data.targets) predicts one view, scored against every gold view (-O)
    scores = evaluate_files(
        cfg.task.eval_task,
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


def write_fold_reliability(data: TaskData, gold, probabilities, uncalibrated, prior_corpus, fold_dir: Path) -> None:
    """``reliability.png``: the reliability diagram of each label (``faina.analysis.reliability``)."""
    from faina.analysis.reliability import FILE_NAME, write_reliability_plot
    from faina.scoring.soft_scores import annotated_items, votes
    from metrics.soft_labels import prior, soft_labels

    reference = prior(soft_labels(votes(prior_corpus, data.labels), annotated_items(prior_corpus)))
    write_reliability_plot(gold, probabilities, data.labels, fold_dir / FILE_NAME, uncalibrated, reference)


def write_fold_probabilities(corpus, indices, outputs: list[dict], data: TaskData, fold_dir: Path):
    """Every fold writes its model's probabilities beside its hard file (``probabilities.jsonl``; calibrated when
    the model is): one forward-backward pass per batch and a few MB, so no setting to forget before a long run
    (docs/soft-labels.md)."""
    probabilities = probabilities_from_outputs(corpus, indices, outputs, data.labels, data.model_views)
    write_probabilities(probabilities, fold_dir / PROBABILITY_FILE)
    return probabilities


def predict_on_one_device(cfg: DictConfig, model, datamodule) -> list[dict]:
    """Predict with a plain one-device Trainer, so DDP's sharded sampler never splits the test posts."""
    bar = (cfg.get("callbacks") or {}).get("rich_progress_bar")  # the run's own bar (on stderr), or none
    trainer = pl.Trainer(
        accelerator=cfg.trainer.get("accelerator", "auto"),
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=bar is not None,
        callbacks=[hydra.utils.instantiate(bar)] if bar is not None else None,
        precision=cfg.trainer.get("precision", "32-true"),
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


def check_training_length(cfg: DictConfig) -> None:
    """``checkpoint.average_last``, ``early_stopping`` and ``trainer.max_steps`` before anything is read: averaging
    needs the last epochs known in advance, which a fold that may stop early, or stops at a step budget, does not
    know."""
    average_last = check_average_last(cfg.checkpoint.get("average_last", 0))
    if early_stopping_callback(cfg) is not None and average_last:
        raise UserError(
            "checkpoint.average_last averages the last epochs of trainer.max_epochs, and early_stopping.patience may"
            " stop the fold before them",
            fix="choose one: early_stopping.patience=null, or checkpoint.average_last=0",
        )
    if (cfg.trainer.get("max_steps") or -1) > 0 and average_last:
        raise UserError(
            "checkpoint.average_last averages the last epochs of trainer.max_epochs, and trainer.max_steps may end"
            " the fold before them",
            fix="choose one: trainer.max_steps=-1, or checkpoint.average_last=0",
        )


def run(cfg: DictConfig) -> dict[str, float]:
    exp_dir = experiment_dir(cfg)
    official = cfg.cv.name == "official"
    check_model_config(cfg.model)  # before the data is read and the first fold trains
    encoder_settings(OmegaConf.to_container(cfg.encoder, resolve=True))
    check_training_length(cfg)
    with exclusive_experiment(exp_dir):
        if cfg.data.get("loader") is not None:  # data=hf: a datasets dataset instead of Faina files
            loader = OmegaConf.to_container(cfg.data.loader, resolve=True)  # called directly: UserErrors stay clear
            data = hydra.utils.get_method(loader.pop("_target_"))(
                **loader,
                level=cfg.task.level,
                grain=cfg.task.grain,
                test_split=cfg.data.get("test_split") if official else None,
            )
        else:
            data = load_task_data(
                cfg.data.train_path,
                cfg.data.test_path if official else None,
                cfg.task.level,
                cfg.task.grain,
                cfg.data.labels,
                cfg.data.repair,
                cfg.data.name,
                targets=cfg.data.get("targets", "views"),
            )
        data = replace(data, context=check_context(cfg.data.get("context")))
        tokenizer = load_tokenizer(OmegaConf.to_container(cfg.encoder, resolve=True))
        features = encode_features(cfg, data, data.labelled, tokenizer)
        if data.gold is not None:  # aggregated targets: dev is scored, and rules fitted, against every view
            gold_features = encode_features(cfg, data, data.gold, tokenizer, data.gold.num_views)
            features = with_gold_views(features, gold_features)
        predict_features = encode_features(cfg, data, data.unlabelled, tokenizer) if official else None
        splits = make_splits(cfg, data)
        guard_same_experiment(cfg, exp_dir)
        results = run_folds(
            cfg,
            exp_dir,
            splits,
            lambda split: split.fold,
            lambda split, fold_dir: run_fold(cfg, data, features, split, fold_dir, tokenizer, predict_features),
        )
        if results is None:
            return {}
        if official and cfg.cv.num_folds > 1 and len(results) == cfg.cv.num_folds:
            path = write_ensemble_submission(exp_dir, data.unlabelled, cfg.loader.batch_size)
            log.info("ensemble of %d models, submission written: %s", len(results), path)
        return report(cfg, exp_dir, results)


def encode_features(cfg: DictConfig, data: TaskData, corpus, tokenizer, num_views: int | None = None) -> list[dict]:
    """Model features of ``corpus`` (with ``num_views`` views, default the training corpus's), read back from
    ``paths.feature_cache`` when an earlier run made them."""
    from faina.data.feature_cache import encode_cached

    views = data.num_views if num_views is None else num_views
    features, note = encode_cached(
        corpus, data.level, tokenizer, data.labels, views, cfg.paths.get("feature_cache"), data.context
    )
    how = "read from the cache" if note["cached"] else "tokenised"
    log.info(
        "features of %d posts %s in %.2f s%s",
        len(features),
        how,
        note["seconds"],
        f" ({note['file']})" if note["file"] else "",
    )
    return features


def report(cfg: DictConfig, exp_dir: Path, results: list[dict]) -> dict[str, float]:
    """Print and save the table over folds; return (and log as the experiment's W&B run) the over-fold metrics."""
    dev = [r["best_dev_f1"] for r in results if r.get("best_dev_f1") is not None]
    metrics: dict[str, float] = {
        "val/f1_mean": float(sum(dev) / len(dev)) if dev else 0.0,
        "val/f1_std": mean_std(dev)["std"] if dev else 0.0,
    }
    scored = [r["test"] for r in results if "test" in r]
    if cfg.cv.name == "official":  # what the run did with the test file (data.test_path)
        print(
            "the test file carries labels: scored like a fold's test split"
            if scored
            else "the test file is unlabelled: predicted only (submission written)"
        )
    if scored:
        summary = summarise(scored)
        table = markdown_table(summary, f"{cfg.task.name} · {cfg.encoder.name} · {cfg.data.name}", len(scored))
        probabilities = summarise_probabilities(results)
        if probabilities is not None:
            table += "\n" + probability_table(probabilities)
        atomic_write_text(exp_dir / "results.md", table)
        saved = {"folds": results, "summary": summary}
        if probabilities is not None:
            saved["probability_summary"] = probabilities
        atomic_write_json(exp_dir / "results.json", saved)
        print(table)
        metrics.update(flat_metrics(summary))
    else:
        atomic_write_json(exp_dir / "results.json", {"folds": results})
        for r in results:
            log.info("submission written: %s", r.get("prediction_file"))
    log_experiment_run(cfg, exp_dir, metrics, len(results))
    return metrics

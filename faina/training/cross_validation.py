"""Cross-validated training of MVML/MVMD models on Faina-format data: the one runner behind ``train.py``.

A run is a list of task entries (``faina.training.run_entries``): a single-task run (``task=span-f``) is one entry,
``task=multi`` several over one shared encoder. For each fold: one model (the entry's head, or a ``MultiTaskModel``
with one head per head name) trains on batches of the entries (``task.sampling``; one entry per batch), the weights
of the epoch with the best dev measure (``checkpoint.monitor``: ``val/f1``, the target's dev F1 or the entries' mean,
``task.selection``; a soft-target run's dev soft loss) are kept (or the mean of the last epochs',
``checkpoint.average_last``; the fold may stop early, ``early_stopping``), and then each entry is finished the same
way (``faina.training.fold_ending``): decision rule and calibration fitted on its dev split, exported, its test split
(or test file) predicted, written and scored. One entry finishes in ``fold<k>/`` itself; several each in
``fold<k>/<entry>/``, listed in ``fold<k>/heads.json``. A fold's ``metrics.json`` is written atomically, last: a
rerun skips finished folds, an interrupted fold resumes exactly from its last checkpoint (``common.checkpointing``).
Under DDP every process trains; rank 0 alone finishes, writes and scores. One run at a time per experiment folder
(``common.locking``). With ``cv=official`` each model predicts the entries' test files, and ``cv.ensemble=K``
(``cv.num_folds``) also writes each head's ensemble submission. Then the table over folds is printed and saved
(``faina.training.run_report``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from omegaconf import DictConfig

from common.errors import UserError
from common.experiments import exclusive_experiment, guard_same_experiment, run_folds
from common.fold_training import FoldTrainer
from common.io import atomic_write_json
from common.job_overrides import experiment_file, job_overrides
from common.phase_timing import summary_line
from common.weight_averaging import check_average_last
from faina.data.datamodule import FainaDataModule
from faina.data.features import with_gold_views
from faina.data.multi_datamodule import MultiEntryDataModule
from faina.data.task_entries import TaskEntry, target_entry
from faina.serving.fold_model import load_tokenizer
from faina.serving.heads import HEADS_FILE
from faina.training.decision_tuning import fits_on_dev
from faina.training.fold_ending import entry_dir, finish_entry, flat_test_metrics
from faina.training.model_building import build_fold_model, check_model_config, plain
from faina.training.run_entries import check_entry_overrides, check_sampling, entry_splits, read_run_entries
from faina.training.run_report import report
from faina.training.run_settings import (
    OutputSettings,
    device_settings,
    early_stopping,
    fold_settings,
    keeps_checkpoints,
    output_settings,
    wanted_folds,
)
from models.encoder_settings import encoder_settings

log = logging.getLogger(__name__)


def experiment_dir(cfg: DictConfig) -> Path:
    return Path(cfg.paths.results_dir) / cfg.name


def check_training_length(cfg: DictConfig) -> None:
    """``checkpoint.average_last``, ``early_stopping`` and ``trainer.max_steps`` before anything is read: averaging
    needs the last epochs known in advance, which a fold that may stop early, or stops at a step budget, does not
    know."""
    average_last = check_average_last(cfg.checkpoint.get("average_last", 0))
    if early_stopping(cfg) is not None and average_last:
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
    check_entry_overrides(cfg, job_overrides(), experiment_file())
    sampling = check_sampling(cfg)
    encoder_settings(plain(cfg.encoder))
    check_training_length(cfg)
    outputs = output_settings(cfg)
    if cfg.task.get("entries") is None:  # a single-task run's model block, before its experiment folder exists
        check_model_config(cfg.model)
    started = time.perf_counter()
    with exclusive_experiment(exp_dir):  # a second run of the experiment stops here, before reading anything
        entries = read_run_entries(cfg, official)
        target = target_entry(entries)
        tokenizer = load_tokenizer(plain(cfg.encoder))
        features, predict_features = {}, {}
        for entry in entries:
            features[entry.name] = entry_features(cfg, entry, tokenizer)
            if official and entry.data.unlabelled is not None:
                predict_features[entry.name] = encode_features(cfg, entry.data, entry.data.unlabelled, tokenizer)
        data_seconds = time.perf_counter() - started
        folds = entry_splits(cfg, entries)
        guard_same_experiment(cfg, exp_dir)
        results = run_folds(
            exp_dir,
            folds,
            lambda splits: splits[target.name].fold,
            lambda splits, fold_dir: run_fold(
                cfg, entries, features, predict_features, splits, fold_dir, tokenizer.pad_token_id, sampling, outputs
            ),
            wanted=wanted_folds(cfg),
            keep_checkpoints=keeps_checkpoints(cfg),
        )
        if results is None:
            return {}
        if official and cfg.cv.num_folds > 1 and len(results) == cfg.cv.num_folds:
            write_ensemble_submissions(cfg, exp_dir, entries)
        return report(cfg, exp_dir, entries, results, data_seconds, outputs)


def entry_features(cfg: DictConfig, entry: TaskEntry, tokenizer) -> list[dict]:
    """The entry's training features; with aggregated targets, dev is scored (and rules fitted) against every view,
    so each post also carries its gold views."""
    features = encode_features(cfg, entry.data, entry.data.labelled, tokenizer)
    if entry.data.gold is not None:
        gold = encode_features(cfg, entry.data, entry.data.gold, tokenizer, entry.data.gold.num_views)
        features = with_gold_views(features, gold)
    return features


def run_fold(
    cfg: DictConfig,
    entries: list[TaskEntry],
    features: dict[str, list[dict]],
    predict_features: dict[str, list[dict]],
    splits: dict,
    fold_dir: Path,
    pad_token_id: int,
    sampling: dict | None,
    outputs: OutputSettings,
) -> dict:
    target = target_entry(entries)
    index = splits[target.name].fold
    fold = FoldTrainer(fold_settings(cfg, index, fold_dir), index, fold_dir)
    train_posts = {entry.name: splits[entry.name].train for entry in entries}
    with fold.clock.phase("model"):
        model = build_fold_model(entries, cfg.encoder, train_posts, cfg.task.get("selection", "target"))
    length_grouped = cfg.loader.get("length_grouped", True)
    modules = [
        FainaDataModule(
            features[entry.name],
            splits[entry.name],
            pad_token_id,
            batch_size=cfg.loader.batch_size,
            num_workers=cfg.loader.num_workers,
            predict_features=predict_features.get(entry.name),
            seed=cfg.seed + index,
            length_grouped=length_grouped,
        )
        for entry in entries
    ]
    datamodule, overrides = modules[0], {}
    if len(entries) > 1:
        datamodule = MultiEntryDataModule(
            modules, cfg.loader.batch_size, cfg.seed + index, target=entries.index(target),
            length_grouped=length_grouped, **(sampling or {}),
        )  # fmt: skip
        # its batches are sharded by the module itself under DDP (every process: the same entry at each step)
        overrides["use_distributed_sampler"] = False
        if datamodule.rebuilt_each_epoch:  # sequential: the number of batches changes between its phases
            overrides["reload_dataloaders_every_n_epochs"] = 1
    # the validation pass of the chosen epoch serves the heads' dev fits when anything is fitted there
    model.module.validation_outputs.record(any(fits_on_dev(head) for head in model.heads.values()))
    fold.fit(model.module, trainer_overrides=overrides, datamodule=datamodule)
    chosen = fold.load_chosen_weights(model.module)
    if fold.average is not None:
        log.info("fold %d predicts with %s", index, chosen or "its final weights")
    if not fold.is_global_zero:
        return {"fold": index}  # under DDP, rank 0 alone finishes, writes and scores
    result: dict = {"fold": index, "best_dev_f1": fold.best_dev_f1}
    if fold.checkpoint.monitor != "val/f1" and fold.best_score is not None:  # what selected the epoch (soft runs)
        result["selected_on"] = {"monitor": fold.checkpoint.monitor, "mode": fold.checkpoint.mode}
        result["selected_on"].update(score=fold.best_score, epoch=fold.checkpoint.best_epoch)
    if fold.average is not None:  # best_dev_f1 stays the best epoch's score, not the mean's
        result["averaged_epochs"] = fold.average.count
    if fold.length():
        result["early_stopping"] = fold.length()
    device, encoder_block = device_settings(cfg), plain(cfg.encoder)
    kept = fold.chosen_validation_outputs()  # by entry position: the chosen epoch's dev pass, when reusable
    finished: dict[str, dict] = {}
    for position, (entry, module) in enumerate(zip(entries, modules)):
        fit = all(other.head != entry.head for other in entries[: entries.index(entry)])  # a shared head: the first's
        with model.standalone(entry.head) as head:
            finished[entry.name] = finish_entry(
                entry,
                head,
                module,
                entry_dir(fold_dir, entries, entry),
                fit,
                device,
                check_model_config(model.blocks[entry.head]),
                encoder_block,
                fold.clock,
                outputs,
                kept.get(position),
            )
    if len(entries) == 1:
        result.update(finished[target.name])
        logged = flat_test_metrics(result)
    else:
        for entry in entries:
            finished[entry.name]["best_dev_f1"] = fold.checkpoint.best_metrics.get(f"val/{entry.name}/f1")
            atomic_write_json(entry_dir(fold_dir, entries, entry) / "metrics.json", finished[entry.name])
        heads = {"target": target.name, "heads": {e.name: {"folder": e.name, "head": e.head} for e in entries}}
        atomic_write_json(fold_dir / HEADS_FILE, heads)
        result.update(target=target.name, entries=finished)
        logged = logged_test_metrics(result, target.name)
    prediction_file = finished[target.name].get("prediction_file")
    result["phases"] = fold.clock.record()
    log.info("%s", summary_line(index, result["phases"]))
    logged.update({f"phases/{name}": value for name, value in result["phases"]["seconds"].items()})
    fold.close(logged, Path(prediction_file) if prediction_file else None)
    atomic_write_json(fold_dir / "metrics.json", result)
    return result


def logged_test_metrics(result: dict, target: str) -> dict[str, float]:
    """A fold's test scores as logger keys: every entry's as ``test/<entry>/<mode>/<view>/<measure>``, the target's
    also under the single-task names ``test/<mode>/<view>/<measure>``."""
    metrics = dict(flat_test_metrics(result["entries"][target]))
    for name, entry in result["entries"].items():
        metrics.update({f"test/{name}/{key[5:]}": value for key, value in flat_test_metrics(entry).items()})
    return metrics


def write_ensemble_submissions(cfg: DictConfig, exp_dir: Path, entries: list[TaskEntry]) -> None:
    """``cv.ensemble=K``: every entry with a test file gets its head's ensemble over the K models
    (``submission-ensemble.<ext>``; for a run of several entries ``submission-ensemble-<entry>.<ext>``)."""
    from faina.serving.prediction import write_ensemble_submission

    for entry in entries:
        if entry.data.unlabelled is None:
            continue
        suffix, head = ("", None) if len(entries) == 1 else (f"-{entry.name}", entry.name)
        path = write_ensemble_submission(exp_dir, entry.data.unlabelled, cfg.loader.batch_size, head, suffix)
        log.info("ensemble of %d models, submission written: %s", cfg.cv.num_folds, path)


def encode_features(cfg: DictConfig, data, corpus, tokenizer, num_views: int | None = None) -> list[dict]:
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

"""Cross-validated training of several task entries over one shared encoder: the runner of ``task=multi``.

The entries (``faina.data.task_entries``) are read and checked before anything trains. The target entry is split as
a single-task run splits its data (``cv=kfold`` folds, or ``cv=official``'s train/dev split and its test file); every
other entry follows the target post by post (``faina.data.entry_folds``). Per fold: one ``MultiTaskModel`` (one
encoder, one head per head name) trains on batches drawn from the entries (``task.sampling``), the weights of the
epoch with the best ``val/f1`` (the target's dev F1, or the weighted mean: ``task.selection``) are kept, and then each
entry is finished exactly as a single-task fold is, in its own folder ``fold<k>/<entry>/``: its head's decision rule
and calibration fitted on the entry's dev split, its test split (or test file) predicted, written, scored with the
entry's own scorer, and its head exported with the encoder as a model folder (``model.json`` + ``model.safetensors``)
that ``faina.predict`` / ``faina.tag`` / ``faina.export`` read as they read any fold. ``fold<k>/heads.json`` lists the
entries' folders (what ``--head NAME`` chooses among). The run prints one table per scored entry and writes
``results.md`` / ``results.json`` with a block per entry.
"""

from __future__ import annotations

import logging
from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict

from common.early_stopping import early_stopping_callback
from common.entry_sampling import STRATEGIES
from common.errors import UserError
from common.experiments import exclusive_experiment, guard_same_experiment, run_folds
from common.fold_training import FoldTrainer
from common.io import atomic_write_json, atomic_write_text
from common.spread import mean_std
from common.wandb_runs import log_experiment_run
from faina.data.datamodule import FainaDataModule
from faina.data.entry_folds import follow_split, post_ids
from faina.data.features import with_gold_views
from faina.data.levels import LEVELS
from faina.data.multi_datamodule import MultiEntryDataModule
from faina.data.task_entries import TaskEntry, read_entries, target_entry
from faina.serving.fold_model import build_model, check_model_config, export_model, load_tokenizer
from faina.serving.heads import HEADS_FILE
from faina.training.cross_validation import (
    check_training_length,
    encode_features,
    experiment_dir,
    flat_test_metrics,
    make_splits,
    predict_on_one_device,
    write_fold_outputs,
)
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
from models.multitask import SELECTIONS, EntryHead, MultiTaskModel

log = logging.getLogger(__name__)


def check_sampling(cfg: DictConfig) -> dict:
    """``task.sampling`` and ``task.selection`` checked, one message per wrong value."""
    sampling = OmegaConf.to_container(cfg.task.sampling, resolve=True)
    strategy = sampling.get("strategy")
    if strategy not in STRATEGIES:
        raise UserError(
            f"task.sampling.strategy={strategy!r} is not a sampling strategy",
            fix=f"use one of {', '.join(STRATEGIES)}",
        )
    alpha = sampling.get("alpha", 1.0)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
        raise UserError(f"task.sampling.alpha={alpha!r} must lie in [0, 1]", fix="e.g. task.sampling.alpha=0.5")
    epochs = sampling.get("auxiliary_epochs", 1)
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 0:
        raise UserError(
            f"task.sampling.auxiliary_epochs={epochs!r} must be a whole number >= 0",
            fix="e.g. task.sampling.auxiliary_epochs=2",
        )
    max_epochs = cfg.trainer.get("max_epochs")
    if strategy == "sequential" and isinstance(max_epochs, int) and max_epochs >= 0 and epochs >= max_epochs:
        raise UserError(
            f"task.sampling.auxiliary_epochs={epochs} leaves the target no epoch of its own: sequential sampling "
            f"trains the auxiliary entries first, and trainer.max_epochs={max_epochs}",
            fix=f"lower task.sampling.auxiliary_epochs below {max_epochs} or raise trainer.max_epochs",
        )
    if cfg.task.get("selection", "target") not in SELECTIONS:
        raise UserError(
            f"task.selection={cfg.task.get('selection')!r} is not a selection",
            fix=f"use one of {', '.join(SELECTIONS)}",
        )
    return {"strategy": strategy, "alpha": float(alpha), "auxiliary_epochs": epochs}


def entry_config(cfg: DictConfig, entry: TaskEntry) -> DictConfig:
    """The run's config as a single-task run of ``entry`` would have it (its ``task``, ``data`` and ``model``
    blocks), what the single-task scorers, writers and exporters read."""
    resolved = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
    with open_dict(resolved):
        resolved.task = dict(entry.task)
        resolved.data = dict(entry.data_block)
        resolved.model = dict(entry.model_block)
    return resolved


def run(cfg: DictConfig) -> dict[str, float]:
    exp_dir = experiment_dir(cfg)
    official = cfg.cv.name == "official"
    sampling = check_sampling(cfg)
    encoder_settings(OmegaConf.to_container(cfg.encoder, resolve=True))
    check_training_length(cfg)
    entries = read_entries(OmegaConf.to_container(cfg.task.entries, resolve=True))
    for entry in entries:  # each head's model block, before the first fold trains
        check_model_config(entry_config(cfg, entry).model)
    target = target_entry(entries)
    if official and target.data.unlabelled is None:
        raise UserError(
            "cv=official needs a file to predict for the target entry",
            fix=f"set {target.option}.data.test_path=/path/to/test file",
        )
    with exclusive_experiment(exp_dir):
        tokenizer = load_tokenizer(OmegaConf.to_container(cfg.encoder, resolve=True))
        features, predict_features = {}, {}
        for entry in entries:
            features[entry.name] = encode_features(cfg, entry.data, entry.data.labelled, tokenizer)
            if entry.data.gold is not None:  # aggregated targets: dev scored against every view
                gold = encode_features(cfg, entry.data, entry.data.gold, tokenizer, entry.data.gold.num_views)
                features[entry.name] = with_gold_views(features[entry.name], gold)
            if official and entry.data.unlabelled is not None:
                predict_features[entry.name] = encode_features(cfg, entry.data, entry.data.unlabelled, tokenizer)
        folds = entry_splits(cfg, entries, target)
        guard_same_experiment(cfg, exp_dir)
        results = run_folds(
            cfg,
            exp_dir,
            folds,
            lambda splits: splits[target.name].fold,
            lambda splits, fold_dir: run_fold(
                cfg, entries, features, predict_features, splits, fold_dir, tokenizer, sampling
            ),
        )
        if results is None:
            return {}
        return report(cfg, exp_dir, entries, results)


def entry_splits(cfg: DictConfig, entries: list[TaskEntry], target: TaskEntry) -> list[dict]:
    """Per fold, every entry's split: the target's as a single-task run's, the others following it by post id."""
    target_ids = post_ids(target.data.gold_corpus)
    folds = []
    for split in make_splits(cfg, target.data):
        splits = {}
        for entry in entries:
            if entry is target:
                splits[entry.name] = split
                continue
            corpus = entry.data.gold_corpus
            shared = target_ids if entry.corpus == target.corpus else []  # another corpus: no post in common
            union = [sorted({label for view in post for label in view or ()}) for post in entry.data.label_sets(corpus)]
            splits[entry.name] = follow_split(
                split, shared, post_ids(corpus), union, entry.data.labels, cfg.cv.dev_fraction, cfg.seed + split.fold
            )
        folds.append(splits)
    return folds


def run_fold(
    cfg: DictConfig,
    entries: list[TaskEntry],
    features: dict,
    predict_features: dict,
    splits: dict,
    fold_dir: Path,
    tokenizer,
    sampling: dict,
) -> dict:
    from models.encoder import ChunkedEncoder

    target = target_entry(entries)
    index = splits[target.name].fold
    fold = FoldTrainer(
        cfg,
        index,
        fold_dir,
        average_last=cfg.checkpoint.get("average_last", 0),
        early_stopping=early_stopping_callback(cfg),
    )
    configs = {entry.name: entry_config(fold.cfg, entry) for entry in entries}
    settings = encoder_settings(OmegaConf.to_container(fold.cfg.encoder, resolve=True))
    encoder = ChunkedEncoder(**settings.model_dump(), dropout=target.model_block.get("dropout", 0.2))
    heads = {}
    for entry in entries:
        ecfg = configs[entry.name]
        weights = fold_loss_weights(ecfg.model.module, entry.data, splits[entry.name].train)
        if weights is not None:
            ecfg.model.module.loss_weights = weights
        if entry.head not in heads:  # entries sharing a head: the first one's model block builds it
            heads[entry.head] = build_model(
                ecfg.model,
                ecfg.encoder,
                entry.level,
                entry.data.labels,
                entry.data.model_views,
                entry.data.inventory,
                gold_views=entry.data.gold_corpus.num_views,
                soft_targets=entry.data.targets == "soft",
                encoder=encoder,
            )
    metrics = {e.name: LEVELS[e.level].metric(e.data.inventory, e.data.gold_corpus.num_views) for e in entries}
    model = MultiTaskModel(
        heads,
        [EntryHead(e.name, e.head, e.weight) for e in entries],
        target.name,
        metrics,
        cfg.task.get("selection", "target"),
    )
    modules = [
        FainaDataModule(
            features[e.name],
            splits[e.name],
            tokenizer.pad_token_id,
            batch_size=cfg.loader.batch_size,
            num_workers=cfg.loader.num_workers,
            predict_features=predict_features.get(e.name),
            seed=cfg.seed + index,
            length_grouped=cfg.loader.get("length_grouped", True),
        )
        for e in entries
    ]
    datamodule = MultiEntryDataModule(
        modules,
        cfg.loader.batch_size,
        cfg.seed + index,
        target=entries.index(target),
        length_grouped=cfg.loader.get("length_grouped", True),
        **sampling,
    )
    rebuild = {"reload_dataloaders_every_n_epochs": 1} if sampling["strategy"] == "sequential" else None
    fold.fit(model, trainer_overrides=rebuild, datamodule=datamodule)
    fold.load_chosen_weights(model)
    if not fold.is_global_zero:
        return {"fold": index}
    result: dict = {"fold": index, "best_dev_f1": fold.best_dev_f1, "target": target.name, "entries": {}}
    if fold.checkpoint.monitor != "val/f1" and fold.best_score is not None:
        result["selected_on"] = {"monitor": fold.checkpoint.monitor, "mode": fold.checkpoint.mode}
        result["selected_on"].update(score=fold.best_score, epoch=fold.checkpoint.best_epoch)
    if fold.length():
        result["early_stopping"] = fold.length()
    fitted: set[str] = set()  # heads whose rule and calibration an earlier entry fitted (a shared head: the first's)
    for entry, module in zip(entries, modules):
        with model.standalone(entry.head) as head:
            result["entries"][entry.name] = finish_entry(
                configs[entry.name], entry, head, module, fold_dir / entry.name, fit=entry.head not in fitted
            )
        fitted.add(entry.head)
        result["entries"][entry.name]["best_dev_f1"] = fold.checkpoint.best_metrics.get(f"val/{entry.name}/f1")
    heads_index = {"target": target.name, "heads": {e.name: {"folder": e.name, "head": e.head} for e in entries}}
    atomic_write_json(fold_dir / HEADS_FILE, heads_index)
    target_result = result["entries"][target.name]
    fold.close(logged_test_metrics(result, target.name), Path(target_result["prediction_file"]))
    atomic_write_json(fold_dir / "metrics.json", result)
    return result


def logged_test_metrics(result: dict, target: str) -> dict[str, float]:
    """A fold's test scores as logger keys: every entry's as ``test/<entry>/<mode>/<view>/<measure>``, the target's
    also under the single-task names ``test/<mode>/<view>/<measure>``."""
    metrics = dict(flat_test_metrics(result["entries"][target]))
    for name, entry in result["entries"].items():
        metrics.update({f"test/{name}/{key[5:]}": value for key, value in flat_test_metrics(entry).items()})
    return metrics


def finish_entry(ecfg: DictConfig, entry: TaskEntry, head, module: FainaDataModule, entry_dir: Path, fit: bool):
    """A single-task fold's ending for one entry: fit its head's rule and calibration on the entry's dev split
    (``fit``), export the head with the encoder, predict, write and score; the entry's metrics (also written to
    ``<entry_dir>/metrics.json``)."""
    entry_dir.mkdir(parents=True, exist_ok=True)
    split = module.split
    result: dict = {"train_posts": len(split.train), "dev_posts": len(split.dev)}
    calibrated = head.applies_calibration  # a shared head: calibrated by the entry that fitted it
    if fit:
        tuned = tune_on_dev(ecfg, head, module.whole_dev_dataloader())
        fitted = calibrate_on_dev(ecfg, head, module.whole_dev_dataloader())
        calibrated = bool(fitted)
        if tuned:
            result["tuned_on_dev"] = tuned
        if fitted:
            result["calibrated_on_dev"] = fitted
    data = entry.data
    export_model(head, ecfg, data.level, data.grain, data.labels, data.model_views, entry_dir, data.context)
    predicting = module.predict_features is not None
    if predicting or split.test:
        outputs = predict_on_one_device(ecfg, head, module)
        predicted_file = len(module.predict_features) if predicting else None
        write_fold_outputs(ecfg, data, outputs, split, entry_dir, predicted_file, calibrated, result)
    atomic_write_json(entry_dir / "metrics.json", result)
    return result


def report(cfg: DictConfig, exp_dir: Path, entries: list[TaskEntry], results: list[dict]) -> dict[str, float]:
    """One table per scored entry (printed, ``results.md``), ``results.json`` with a block per entry; the metrics
    returned (and logged) are the target's under the single-task names and every entry's as
    ``<entry>/<metric>``."""
    target = target_entry(entries)
    dev = [r["best_dev_f1"] for r in results if r.get("best_dev_f1") is not None]
    metrics: dict[str, float] = {
        "val/f1_mean": float(sum(dev) / len(dev)) if dev else 0.0,
        "val/f1_std": mean_std(dev)["std"] if dev else 0.0,
    }
    tables, saved = [], {"folds": results, "target": target.name, "entries": {}}
    for entry in entries:
        scored = [r["entries"][entry.name]["test"] for r in results if "test" in r["entries"].get(entry.name, {})]
        if not scored:
            continue
        summary = summarise(scored)
        saved["entries"][entry.name] = {"summary": summary}
        role = "target" if entry is target else "auxiliary"
        title = f"{entry.name} ({entry.task['name']}, {role}) · {cfg.encoder.name} · {cfg.data.name}"
        tables.append(markdown_table(summary, title, len(scored)))
        probabilities = summarise_probabilities([r["entries"][entry.name] for r in results])
        if probabilities is not None:
            saved["entries"][entry.name]["probability_summary"] = probabilities
            tables.append(probability_table(probabilities))
        flat = flat_metrics(summary)
        metrics.update({f"{entry.name}/{key}": value for key, value in flat.items()})
        if entry is target:
            metrics.update(flat)
    atomic_write_json(exp_dir / "results.json", saved)
    if tables:
        text = "\n".join(tables)
        atomic_write_text(exp_dir / "results.md", text)
        print(text)
    else:
        print("no entry has labelled test posts: predicted only (submission files written)")
    log_experiment_run(cfg, exp_dir, metrics, len(results))
    return metrics

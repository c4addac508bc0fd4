"""What a run trains on: its task entries, read and checked before anything trains, and every entry's fold splits.

A run is a list of task entries (``faina.data.task_entries``). A single-task run (``task=span-f``) is the one entry
its ``task``, ``data`` and ``model`` blocks make; ``task=multi`` (and any task config with ``entries``) lists them
under ``task.entries``. The target entry is split as the run's ``cv`` says (``cv=kfold`` folds of its posts, or
``cv=official``'s train/dev split and its test file); every other entry follows the target post by post
(``faina.data.entry_folds``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from common.entry_sampling import STRATEGIES
from common.errors import UserError
from common.job_overrides import override_key
from faina.data.entry_folds import follow_split, post_ids
from faina.data.folds import FoldSplit, kfold_splits, label_matrix, official_split
from faina.data.task_data import TaskData
from faina.data.task_entries import TaskEntry, read_entries, single_entry, target_entry
from faina.training.model_building import check_model_config, plain
from models.multitask import SELECTIONS


def read_run_entries(cfg: DictConfig, official: bool) -> list[TaskEntry]:
    """The run's entries with their data read (``cv=official``: with the files to predict), every entry's model
    block checked (a single-task run's ``model`` block is checked by the runner before its experiment folder
    exists)."""
    listed = cfg.task.get("entries")
    if listed is None:
        return [single_entry(plain(cfg.task), plain(cfg.data), plain(cfg.model), official)]
    entries = read_entries(plain(listed), official)
    for entry in entries:  # each head's model block, before the first fold trains
        check_model_config(entry.model_block)
    target = target_entry(entries)
    if official and target.data.unlabelled is None:
        raise UserError(
            "cv=official needs a file to predict for the target entry",
            fix=f"set {target.option}.data.test_path=/path/to/test file",
        )
    return entries


ENTRY_BLOCKS = ("model", "data")  # a run of several entries reads these from each entry, never from the top level
READ_AT_TOP_LEVEL = {"data.name"}  # still names the run's experiment folder


def check_entry_overrides(cfg: DictConfig, overrides: Sequence[str], experiment: Path | None = None) -> None:
    """Refuse a setting of the top-level ``model`` or ``data`` block in a run of several entries: each entry reads
    its own blocks (``task.entries.<entry>.model``, ``.data``), so the setting would change nothing, silently (a
    sweep over ``model.module.optimizer.lr`` would train the same model every trial). ``overrides``: the command
    line's; ``experiment``: the job's experiment file (``common.job_overrides.experiment_file``), whose top-level
    keys and group choices are refused the same way, said of the file. The message names the keys to write
    instead. A single-task run reads the top-level blocks: nothing is refused there."""
    listed = cfg.task.get("entries")
    if listed is None:
        return
    names = [name for name, spec in listed.items() if spec is not None]
    for override in overrides:
        refuse_top_level_block(override, names)
    if experiment is not None:
        for setting in experiment_block_settings(experiment):
            refuse_top_level_block(setting, names, f"{experiment} sets ")


def refuse_top_level_block(override: str, names: Sequence[str], source: str = "") -> None:
    """One message for a setting of the top-level ``model`` / ``data`` block (``source``: where it was written, as
    the message's first words); nothing for any other key, nor for ``data.name``."""
    key = override_key(override)
    block, _, rest = key.partition(".")
    if block not in ENTRY_BLOCKS or key in READ_AT_TOP_LEVEL:
        return
    if rest:  # the same override, once per entry: +model.x=1 -> +task.entries.<entry>.model.x=1
        body = override.lstrip("+~")
        sign = override[: len(override) - len(body)]
        fix = " ".join(f"{sign}task.entries.{name}.{body}" for name in names)
        fix = f"set it on the entries it is meant for: {fix} (docs/multitask.md)"
    else:  # a group choice (model=mvml, data=hf): its keys go into each entry's block
        fix = f"set the keys of {override} in each entry's own block, task.entries.<entry>.{block}.<key>=... "
        fix += "(docs/multitask.md)"
    said = f"{source}{override}, which changes" if source else f"{override} changes"
    raise UserError(
        f"{said} nothing in a run of several task entries (task.entries: {', '.join(names)}): each entry reads its"
        f" own {block} block, not the top-level one",
        fix=fix,
    )


def experiment_block_settings(path: Path) -> list[str]:
    """What an experiment file sets in the top-level ``model`` and ``data`` blocks, written as overrides: each leaf
    (``model.module.head_lr=0.5``) and each defaults entry choosing their group (``override /model: mvml`` ->
    ``model=mvml``). Only a ``# @package _global_`` file writes to the top level. Read as YAML data."""
    text = path.read_text()
    header = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            break
        header.append(line)
    if not any("@package _global_" in line for line in header):
        return []
    content = OmegaConf.to_container(OmegaConf.create(text), resolve=False) or {}
    settings = []
    for entry in content.get("defaults") or []:
        for group, choice in entry.items() if isinstance(entry, dict) else ():
            name = group.removeprefix("override").strip().lstrip("/")
            if name in ENTRY_BLOCKS:  # not /model@task.entries.<entry>.model, which fills an entry's own block
                settings.append(f"{name}={choice}")
    for block in ENTRY_BLOCKS:
        if isinstance(content.get(block), dict):
            settings += [f"{key}={value}" for key, value in dotted_leaves(content[block], block)]
    return settings


def dotted_leaves(tree: dict, prefix: str) -> list[tuple[str, object]]:
    """``(dotted key, value)`` of every leaf of a nested mapping (an empty mapping is a leaf)."""
    leaves = []
    for key, value in tree.items():
        name = f"{prefix}.{key}"
        leaves += dotted_leaves(value, name) if isinstance(value, dict) and value else [(name, value)]
    return leaves


def check_sampling(cfg: DictConfig) -> dict | None:
    """``task.sampling`` and ``task.selection`` of a run of several entries checked, one message per wrong value
    (``None``: the task samples nothing, a single-task run)."""
    if cfg.task.get("sampling") is None:
        return None
    sampling = plain(cfg.task.sampling)
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


def make_splits(cfg: DictConfig, data: TaskData) -> list[FoldSplit]:
    """The folds of ``data`` as ``cv`` asks (``cv=official``: one train/dev split per model, the test file)."""
    # folds come from every annotator view, so all data.targets of one dataset share the same folds
    union = [sorted({label for view in post for label in view or ()}) for post in data.label_sets(data.gold_corpus)]
    matrix = label_matrix(union, data.labels)
    if cfg.cv.name == "official":
        if data.unlabelled is None:
            raise UserError("cv=official needs a file to predict", fix="set data.test_path=/path/to/test file")
        return official_split(matrix, cfg.cv.dev_fraction, cfg.seed, cfg.cv.num_folds)
    return kfold_splits(matrix, cfg.cv.num_folds, cfg.cv.dev_fraction, cfg.seed)


def entry_splits(cfg: DictConfig, entries: list[TaskEntry]) -> list[dict[str, FoldSplit]]:
    """Per fold, every entry's split: the target's as ``make_splits`` gives it, the others following it by post id."""
    target = target_entry(entries)
    target_ids = post_ids(target.data.gold_corpus) if len(entries) > 1 else []
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

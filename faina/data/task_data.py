"""The labelled (and optionally unlabelled) posts of one Faina task, at the task's label grain.

This is the single place that turns a data block (the keys of ``conf/data``: a single-task run's ``data``, a task
entry's ``task.entries.<name>.data``) into what a task trains on (``read_task_data``): it reads the level's file (any
format of the level registered in ``faina.formats.any_file``: CoNLL for span tasks, TSV for post tasks; a CoNLL file
for a post task gives the post labels of its spans) or a ``datasets`` dataset (``data=hf``: the block's ``loader``),
derives coarse labels through the taxonomy when a coarse task is given a fine-labelled file, aggregates the
annotator views when ``data.targets`` asks for it (``faina.data.targets``), and lists the label inventory of the
grain in decoder order. A file named by several entries of one run is read once (``cache``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from common.errors import UserError
from faina.data.coarse import coarse_of
from faina.data.post_context import check_context
from faina.data.targets import aggregate_corpus, model_views, trains_on_shares
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.records import PostCorpus, SpanCorpus, labels_used

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskData:
    level: str  # "span" or "post"
    grain: str  # "fine" or "coarse"
    labels: tuple[str, ...]  # label strings of the grain, sorted (decoder / head order)
    inventory: LabelInventory
    labelled: SpanCorpus | PostCorpus  # what the model trains on (one view when targets aggregate)
    unlabelled: SpanCorpus | PostCorpus | None
    gold: SpanCorpus | PostCorpus | None = None  # every annotator view, for scoring (None: ``labelled``)
    targets: str = "views"
    context: tuple[str, ...] = ()  # the header fields put before each post's text (data.context, post_context.py)

    @property
    def num_views(self) -> int:
        """The views of the training corpus (every annotator's for ``views`` and ``soft``, 1 when aggregated)."""
        return self.labelled.num_views

    @property
    def model_views(self) -> int:
        """The views of heads/decoders the model has: one for ``soft`` (one head trained on every view)."""
        return model_views(self.targets, self.num_views)

    @property
    def soft_targets(self) -> bool:
        """Whether the model learns the annotators' label shares (``data.targets=soft``)."""
        return trains_on_shares(self.targets)

    @property
    def gold_corpus(self) -> SpanCorpus | PostCorpus:
        """The posts with all their annotator views: fold splits and scores use it whatever the targets."""
        return self.gold if self.gold is not None else self.labelled

    def label_sets(self, corpus: SpanCorpus | PostCorpus | None = None) -> list[list[tuple[str, ...]]]:
        """Per post, per view, the post-level labels (used for stratification and MVML targets); ``None`` for a view
        that did not annotate the post."""
        corpus = corpus or self.labelled
        if isinstance(corpus, SpanCorpus):
            return [[post.labels(v) for v in range(corpus.num_views)] for post in corpus.posts]
        return [
            [None if row.labels[v] is None else tuple(sorted(row.label_set(v))) for v in range(corpus.num_views)]
            for row in corpus.rows
        ]


def read_level(path: str | Path, level: str, grain: str, inventory: LabelInventory, repair: bool = False):
    """Read one file of the task's level (``faina.formats.any_file``) and bring it to the task's grain."""
    corpus = read_any(path, inventory, level=level, repair=repair)
    for message in corpus.repairs:
        log.warning("repaired: %s", message)
    return coarse_of(corpus, inventory) if grain == "coarse" else _only_fine(corpus, inventory)


def _only_fine(corpus, inventory: LabelInventory):
    coarse = labels_used(corpus) & set(inventory.coarse)
    if coarse:
        raise UserError(
            f"the file holds coarse categories ({', '.join(sorted(coarse))}) but the task is fine-grained",
            path=corpus.path,
            fix="use the fine-labelled file, or a coarse task (task=span-c / post-c)",
        )
    return corpus


def read_task_data(
    block: Mapping[str, Any],
    level: str,
    grain: str,
    official: bool,
    where: str = "data",
    cache: dict | None = None,
) -> TaskData:
    """The data of one data ``block`` (plain values) at ``level`` and ``grain``: its training posts and, for
    ``cv=official`` (``official``), the posts to predict; ``where``: the option holding the block (what messages
    name: ``data``, ``task.entries.post_f.data``)."""
    if block.get("loader") is not None:  # data=hf: a datasets dataset instead of Faina files
        import hydra

        loader = dict(block["loader"])
        data = hydra.utils.get_method(loader.pop("_target_"))(  # called directly: its UserErrors stay clear
            **loader, level=level, grain=grain, test_split=block.get("test_split") if official else None
        )
    else:
        data = load_task_data(
            block.get("train_path"),
            block.get("test_path") if official else None,
            level,
            grain,
            block.get("labels", "faina"),
            bool(block.get("repair", False)),
            block.get("name", "data"),
            targets=block.get("targets", "views"),
            labels_option=f"{where}.labels",
            where=where,
            cache=cache,
        )
    return replace(data, context=check_context(block.get("context"), f"{where}.context"))


def load_task_data(
    train_path: str | None,
    test_path: str | None,
    level: str,
    grain: str,
    labels: str = "faina",
    repair: bool = False,
    data_name: str = "data",
    targets: str = "views",
    labels_option: str = "data.labels",
    where: str = "data",
    cache: dict | None = None,
) -> TaskData:
    """The task's data from its files; ``labels_option``: the option that chose ``labels`` (what a message about a
    label outside the inventory names: ``train.py``'s ``data.labels``, a benchmark's ``--corpus``)."""
    if not train_path or train_path == "???":
        raise UserError(f"{where}.train_path names no training file", fix=f"set {where}.train_path=/path/to/file")
    inventory = LabelInventory.load(labels).chosen_with(labels_option)
    labelled = read_cached(train_path, level, grain, inventory, repair, data_name, where, cache)
    if len(labelled) == 0:
        raise UserError("the file holds no posts", path=train_path, fix=f"point {where}.train_path to data")
    if isinstance(labelled, SpanCorpus) and not labelled.labelled:
        raise UserError(
            "the training file is unlabelled (empty label cells)",
            path=train_path,
            fix=f"set {where}.train_path to a labelled file; unlabelled files go to {where}.test_path",
        )
    unlabelled = None
    if test_path:  # a TSV test file may carry any number of (empty) label columns
        unlabelled = read_cached(test_path, level, grain, inventory, repair, data_name, where, cache)
    return task_data_with_targets(level, grain, inventory, labelled, unlabelled, targets)


def read_cached(path, level: str, grain: str, inventory, repair: bool, data_name: str, where: str, cache: dict | None):
    """The file at ``path`` at ``level`` and ``grain``; a CoNLL file for a post task gives its spans' post labels.
    Each (file, inventory, repair) is read once per ``cache`` (a run), whatever the entries that name it."""
    from faina.formats.tsv import post_corpus_from_spans

    if not Path(path).is_file():
        raise _missing_data(path, data_name, where)
    spans_of_posts = level == "post" and Path(path).suffix.lower() == ".conll"
    read_as = "span" if spans_of_posts else level
    key = (str(Path(path).resolve()), read_as, grain, inventory.fine, inventory.coarse, repair)
    cache = {} if cache is None else cache
    if key not in cache:
        cache[key] = read_level(path, read_as, grain, inventory, repair)
    return post_corpus_from_spans(cache[key]) if spans_of_posts else cache[key]


def task_data_with_targets(
    level: str,
    grain: str,
    inventory: LabelInventory,
    labelled: SpanCorpus | PostCorpus,
    unlabelled: SpanCorpus | PostCorpus | None,
    targets: str,
) -> TaskData:
    """``TaskData`` training on ``targets`` of ``labelled`` (aggregated or not), every view kept for scoring: the
    one place that turns a read corpus into training data, whatever it was read from (Faina files, ``data=hf``)."""
    training = aggregate_corpus(labelled, targets)
    return TaskData(
        level,
        grain,
        inventory.labels_of(grain),
        inventory,
        training,
        unlabelled,
        gold=labelled if training is not labelled else None,
        targets=targets,
    )


def _missing_data(path: str, data_name: str, where: str = "data") -> UserError:
    if data_name == "faina":
        return UserError(
            "Faina is not there",
            path=path,
            fix="Faina is distributed on request only: e-mail the first author (see "
            "https://github.com/dhfbk/faina), then put train-dev.conll, test.conll (and the FadeIT "
            "train-dev.tsv, test.tsv) in data/faina/ or pass data.dir=/path/to/faina; "
            "without it, data=sample trains on the synthetic sample",
        )
    return UserError("data file not found", path=path, fix=f"check {where}.train_path / {where}.test_path")

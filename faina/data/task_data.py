"""The labelled (and optionally unlabelled) posts of one Faina task, at the task's label grain.

This is the single place that turns files into what a task trains on: it reads the level's file (any format of
the level registered in ``faina.formats.any_file``: CoNLL for span tasks, TSV for post tasks), derives coarse
labels through the taxonomy when a coarse task is given a fine-labelled file, aggregates the annotator views
when ``data.targets`` asks for it (``faina.data.targets``), and lists the label inventory of the grain in decoder
order.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from faina.data.coarse import coarse_of
from faina.data.targets import aggregate_corpus, model_views
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


def load_task_data(
    train_path: str,
    test_path: str | None,
    level: str,
    grain: str,
    labels: str = "faina",
    repair: bool = False,
    data_name: str = "data",
    targets: str = "views",
    labels_option: str = "data.labels",
) -> TaskData:
    """The task's data from its files; ``labels_option``: the option that chose ``labels`` (what a message about a
    label outside the inventory names: ``train.py``'s ``data.labels``, a benchmark's ``--corpus``)."""
    inventory = LabelInventory.load(labels).chosen_with(labels_option)
    if not Path(train_path).is_file():
        raise _missing_data(train_path, data_name)
    labelled = read_level(train_path, level, grain, inventory, repair)
    if isinstance(labelled, SpanCorpus) and not labelled.labelled:
        raise UserError(
            "the training file is unlabelled (empty label cells)",
            path=train_path,
            fix="set data.train_path to a labelled file; unlabelled files go to data.test_path",
        )
    unlabelled = None
    if test_path:
        if not Path(test_path).is_file():
            raise _missing_data(test_path, data_name)
        unlabelled = read_level(test_path, level, grain, inventory, repair)
        if unlabelled.num_views != labelled.num_views and isinstance(unlabelled, PostCorpus):
            pass  # a TSV test file may carry any number of (empty) label columns
    return task_data_with_targets(level, grain, inventory, labelled, unlabelled, targets)


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


def _missing_data(path: str, data_name: str) -> UserError:
    if data_name == "faina":
        return UserError(
            "Faina is not there",
            path=path,
            fix="Faina is distributed on request only: e-mail the first author (see "
            "https://github.com/dhfbk/faina), then put train-dev.conll, test.conll (and the FadeIT "
            "train-dev.tsv, test.tsv) in data/faina/ or pass data.dir=/path/to/faina; "
            "without it, data=sample trains on the synthetic sample",
        )
    return UserError("data file not found", path=path, fix="check data.train_path / data.test_path")

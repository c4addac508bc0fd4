"""Building a fold's model from the run's blocks: one encoder, one head per head name, composed into what trains.

A head is an MVML or MVMD module (``conf/model``, instantiated by Hydra) over the shared ``ChunkedEncoder``. A run of
one entry trains that head itself (the single-task model, saved and resumed as always); a run of several trains a
``MultiTaskModel`` over every head. The encoder is built before the heads in both cases, so a fold's random draws are
the same whatever the number of entries. Reading a saved model back never comes here (``faina.serving``).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from common.errors import UserError
from faina.data.levels import LEVELS
from faina.data.task_entries import TaskEntry
from faina.formats.labels import LabelInventory
from faina.training.loss_weights import check_scheme, fold_loss_weights
from models.encoder_settings import encoder_settings

MODEL_CONFIG = "the model config (conf/model)"


def plain(block: Mapping | DictConfig | None) -> dict:
    """A config block as plain, resolved values."""
    if isinstance(block, DictConfig):
        return OmegaConf.to_container(block, resolve=True)
    return copy.deepcopy(dict(block or {}))


def check_model_config(model_block: Mapping | DictConfig):
    """The run's model block checked field by field before anything is read or trained: a wrong value
    (``model.module.decision.scope=bogus``) ends in one message naming the key, not in a traceback from the model's
    constructor or in a refusal at export after every fold has trained. Returns the block as names (what
    ``model.json`` saves)."""
    from models.saved_model import check_model_block

    block = plain(model_block)
    where = f"conf/model/{block.get('name')}.yaml"
    module = block.get("module") or {}
    if isinstance(module.get("loss_weights"), str):  # a scheme: each fold computes the numbers (loss_weights.py)
        check_scheme(module["loss_weights"], where)
        module["loss_weights"] = None
    return check_model_block(
        block,
        MODEL_CONFIG,
        fix=f"correct it on the command line (model.module.KEY=VALUE) or in {where}",
        translate=False,
    )


def build_encoder(encoder_block: Mapping | DictConfig, dropout: float = 0.2):
    from models.encoder import ChunkedEncoder

    settings = encoder_settings(plain(encoder_block))
    return ChunkedEncoder(**settings.model_dump(), dropout=dropout)


def build_model(
    model_block: Mapping | DictConfig,
    encoder_block: Mapping | DictConfig,
    level: str,
    labels,
    num_views: int,
    inventory: LabelInventory,
    gold_views: int | None = None,
    soft_targets: bool = False,
    encoder=None,
):
    """Instantiate the LightningModule of ``model_block`` over a fresh encoder (or ``encoder``, one that other heads
    share), with the level's dev metric.

    ``num_views``: the model's views of heads/decoders; ``gold_views``: the dev data's annotator views (default
    the same; more for ``data.targets=soft``, whose one view is scored against each); ``soft_targets``: train the
    one view on the soft labels of every view (``data.targets=soft``)."""
    block = plain(model_block)
    gold_views = gold_views or num_views
    weights = block["module"].get("view_weights")
    if weights is not None and (not soft_targets or len(weights) != gold_views):
        raise UserError(
            f"model.module.view_weights has {len(weights)} weight(s); it weighs the views of data.targets=soft "
            f"(this run: data.targets={'soft' if soft_targets else 'not soft'}, {gold_views} view(s))",
            fix="give one weight per annotator view with data.targets=soft, or model.module.view_weights=null",
        )
    if encoder is None:
        encoder = build_encoder(encoder_block, block.get("dropout", 0.2))
    metric = LEVELS[level].metric(inventory, gold_views)
    extra = {"soft_targets": True} if soft_targets else {}
    model = hydra.utils.instantiate(
        block["module"], encoder=encoder, num_views=num_views, labels=list(labels), val_metric=metric, **extra
    )
    # from_pretrained leaves the encoder in eval mode; Lightning keeps modules' modes, so dropout would be off
    return model.train()


@dataclass
class FoldModel:
    """A fold's model: ``module`` is what trains (the one head, or the multi-task model over every head); ``heads``
    maps head names to their modules; ``blocks`` holds each head's model block as the fold trained it (the loss
    weights as numbers, what ``model.json`` saves)."""

    module: Any
    heads: dict[str, Any]
    blocks: dict[str, dict]

    @contextlib.contextmanager
    def standalone(self, head: str) -> Iterator[Any]:
        """Head ``head`` as a complete single-task model (encoder included) for as long as the block runs."""
        if self.module is self.heads[head]:
            yield self.module
            return
        with self.module.standalone(head) as model:
            yield model


def build_fold_model(
    entries: Sequence[TaskEntry],
    encoder_block: Mapping | DictConfig,
    train_posts: Mapping[str, Sequence[int]],
    selection: str = "target",
) -> FoldModel:
    """The fold's model over the entries: one encoder (the target's dropout), then each head from the first entry
    that names it (its model block, its loss weights from the entry's training posts ``train_posts[entry]``)."""
    target = next(entry for entry in entries if entry.target)
    encoder = build_encoder(encoder_block, target.model_block.get("dropout", 0.2))
    heads, blocks = {}, {}
    for entry in entries:
        if entry.head in heads:  # entries sharing a head: the first one's model block builds it
            continue
        block = plain(entry.model_block)
        weights = fold_loss_weights(block["module"], entry.data, train_posts[entry.name])
        if weights is not None:  # the numbers the fold trains with, so model.json saves them (not a scheme's name)
            block["module"]["loss_weights"] = weights
        data = entry.data
        heads[entry.head] = build_model(
            block,
            encoder_block,
            entry.level,
            data.labels,
            data.model_views,
            data.inventory,
            gold_views=data.gold_corpus.num_views,
            soft_targets=data.soft_targets,
            encoder=encoder,
        )
        blocks[entry.head] = block
    if len(entries) == 1:
        return FoldModel(heads[target.head], heads, blocks)
    from models.multitask import EntryHead, MultiTaskModel

    metrics = {e.name: LEVELS[e.level].metric(e.data.inventory, e.data.gold_corpus.num_views) for e in entries}
    module = MultiTaskModel(
        heads, [EntryHead(e.name, e.head, e.weight) for e in entries], target.name, metrics, selection
    )
    return FoldModel(module, heads, blocks)

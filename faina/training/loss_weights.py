"""Per-decoder loss weights (MVMD's λ) computed from a fold's training spans: ``model.module.loss_weights=inverse_sqrt``.

A span model sums one CRF loss per decoder (view × label). On a real corpus the labels are far from balanced
(toxic-spans: each view's ``Insult`` decoder sees about ten times the spans of its ``Threat`` decoder; Faina's
20 fallacies range wider), so the frequent decoders dominate the shared encoder's gradient. ``inverse_sqrt``
weighs decoder ``d`` by ``1 / √n_d``, ``n_d`` its spans in the fold's *training* part (never dev or test),
rescaled to mean 1 so the overall loss scale — and with it the tuned learning rates — stays that of the
unweighted sum. The square root is the usual compromise between no reweighting and full inverse frequency,
which would let a decoder with a handful of spans outweigh the rest. A decoder with no training span counts as
one span (its loss is all-O anyway). Measured on the real toxic-spans corpus in docs/benchmark-quality.md.

The weights are computed per fold and written into the fold's config before the model is built, so the exported
``model.json`` holds the numbers actually used (a saved model never holds a scheme's name).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

from omegaconf import DictConfig

from common.errors import UserError
from faina.data.task_data import TaskData
from faina.formats.records import SpanCorpus

log = logging.getLogger(__name__)

SCHEMES = ("inverse_sqrt",)
KEY = "model.module.loss_weights"


def check_scheme(value, where: str) -> None:
    """A string ``loss_weights`` must name a scheme; called when the run starts, before any data is read."""
    if isinstance(value, str) and value not in SCHEMES:
        raise UserError(
            f"{KEY}={value!r} is not a weighting scheme (known: {', '.join(SCHEMES)})",
            fix=f"use {KEY}=inverse_sqrt, one number per decoder (views x labels), or null for all 1 ({where})",
        )


def decoder_span_counts(corpus: SpanCorpus, posts: Sequence[int], labels: Sequence[str], model_views: int) -> list[int]:
    """Spans per decoder (view-major over ``labels``, MVMD's order) in the posts ``posts`` of ``corpus``.

    A model with fewer views than the corpus (``data.targets=soft``: one decoder set trained on every view) pools
    every view's spans per label. Views that did not annotate a post count nothing."""
    index = {label: i for i, label in enumerate(labels)}
    pooled = model_views != corpus.num_views
    counts = [0] * (model_views * len(labels))
    for p in posts:
        for view, spans in enumerate(corpus.posts[p].spans or ()):
            for span in spans or ():
                if span.label in index:
                    counts[(0 if pooled else view) * len(labels) + index[span.label]] += 1
    return counts


def inverse_sqrt(counts: Sequence[int]) -> list[float]:
    """``1 / √max(n, 1)`` per decoder, rescaled to mean 1, rounded to 6 digits (they are written to model.json)."""
    raw = [1.0 / math.sqrt(max(n, 1)) for n in counts]
    mean = sum(raw) / len(raw)
    return [round(w / mean, 6) for w in raw]


def fold_loss_weights(module_cfg: DictConfig, data: TaskData, train_posts: Sequence[int]) -> list[float] | None:
    """The λ list a fold trains with: computed for a scheme, checked for an explicit list, ``None`` for all 1.

    Only span models (MVMD) have per-decoder weights; a post model's config has no such key."""
    value = module_cfg.get("loss_weights")
    if value is None:
        return None
    decoders = data.model_views * len(data.labels)
    if isinstance(value, str):
        check_scheme(value, "conf/model/mvmd.yaml")
        counts = decoder_span_counts(data.labelled, train_posts, data.labels, data.model_views)
        weights = inverse_sqrt(counts)
        log.info("loss weights (%s) from %d training posts: %s", value, len(train_posts), weights)
        return weights
    weights = [float(w) for w in value]  # a list: check_model_config refused anything else when the run started
    if len(weights) != decoders:
        raise UserError(
            f"{KEY} has {len(weights)} weight(s) for {decoders} decoders "
            f"({data.model_views} view(s) x {len(data.labels)} labels)",
            fix=f"give one weight per decoder (view-major over the sorted labels), {KEY}=inverse_sqrt, or null",
        )
    return weights

"""The prior fallback of a calibration: probabilities that cannot lose to the label prior on dev.

A label the model cannot learn (few positives, annotators who rarely agree) leaves its head or decoder with scores
that carry noise, not signal. Temperature scaling can only flatten such scores towards 0.5 and Platt's intercept
towards the dev share, so the calibrated probabilities of such a label can still score worse than predicting the
label's training share for every item (the *prior* of the probability scores, ``faina.scoring.soft_scores``).
The fallback mixes each head's (per view and label) or decoder's calibrated probability ``q`` with that prior
``π``:

    p = w · q + (1 − w) · π,    w ∈ [0, 1] per head / decoder,

``π`` the label's share in the fold's training part (per view for a model with a head / decoder set per view; the
share of the annotated views for a one-view model: the very value the scorer reports as the prior), and ``w``
fitted on dev by **cross-fitting**: dev is cut into ``fallback_folds`` parts (items in turn: posts at post level,
whole posts at span level), the calibration (``models/calibration.py``, with the run's own settings) is fitted on
all parts but one and gives the probabilities of the one left out (at span level Newton's method starts from the
scale fitted on the whole of dev, near each part's own), and ``w`` minimises the log-loss of the mixture
over all those held-out probabilities (a convex problem in one variable: bisection on its slope). ``w = 0`` (the
prior itself) is always a candidate, so the fallback's cross-fitted dev log-loss is never above the prior's; ``w =
1`` keeps the calibration as it was. The calibration reported is then the one fitted on the whole of dev, mixed by
``w``. A head or decoder without dev items keeps ``w = 1``.

``fallback_margin`` ``k`` asks for evidence before anything moves: the heads or decoders of a label keep their
calibration (``w = 1``) unless the mixtures' cross-fitted dev log-loss, summed over the label's views, is below the
calibrations' by more than ``k`` standard errors of their per-post difference (``evidence``: whole posts are the
independent units, a post's tokens summed first at span level). On a small dev split a weakly learnt label and an
unlearnable one both leave the calibration a little behind the prior; the margin moves only the labels whose loss
is clear of the noise. The price: a label kept below the margin may stay behind the prior on dev (by less than ``k``
standard errors), so the bound by the prior holds for the labels the margin moves only. ``k = 0`` (the default)
moves every head whose mixture is better at all: the fitted ``w`` as it is, never above the prior on dev.

At span level ``q`` is the tempered CRF's marginal ``P(inside)`` of each token, so the fallback acts on the
reported token probabilities only; a mixture is not a CRF, and the Viterbi path and every threshold or O bias are
untouched (hard decisions never move). The models keep ``w`` and ``π`` in the buffers ``calibration_weight`` and
``calibration_prior`` (``models/mvml.py``, ``models/mvmd.py``; folders saved before the fallback existed load with
``w = 1``: unchanged). An ensemble mixes consistently with its members (``models/ensemble.py``): each member's
mixture of what the ensemble reports, averaged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from common.paired_difference import paired_difference
from models.calibration import (
    CalibrationSettings,
    apply_post_calibration,
    fit_post_calibration,
    fit_span_scale,
    frozen_copy,
    span_dev,
    span_marginals,
    span_scale_from,
    view_targets,
)
from models.crf import BatchedBIOCRF

EPSILON = 1e-12  # probabilities are clipped as the soft-label scorer clips them (metrics/soft_labels.py)
EVIDENCE_CAP = 1000.0  # a reported evidence this high: the mixture gained on every dev post alike (no spread)
BISECTION_STEPS = 60  # halvings of [0, 1]: w to 1e-18, far below anything the log-loss can tell apart


def mixed(probabilities: torch.Tensor, weight: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """``w · p + (1 − w) · π``, ``weight`` and ``prior`` broadcast against ``probabilities``."""
    weight, prior = weight.to(probabilities), prior.to(probabilities)
    return weight * probabilities + (1 - weight) * prior


def item_log_loss(probabilities: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each item's binary log-loss against soft ``targets``, the probabilities clipped as the scorer clips them."""
    p = probabilities.clamp(EPSILON, 1 - EPSILON)
    return -(targets * p.log() + (1 - targets) * (1 - p).log())


def mixture_log_loss(calibrated, targets, weight, prior, mix) -> torch.Tensor:
    """Per column ``[K]``: the mean ``weight``-ed binary log-loss of ``mixed(calibrated, mix, prior)`` over the rows
    of ``[N, K]`` tensors against soft ``targets``."""
    terms = item_log_loss(mixed(calibrated, mix, prior), targets) * weight
    return terms.sum(0) / weight.sum(0).clamp(min=1e-12)


def mixture_weight(calibrated, targets, weight, prior) -> torch.Tensor:
    """``[K]``: per column of ``[N, K]`` tensors, the ``w`` in [0, 1] minimising ``mixture_log_loss`` (``prior``
    ``[K]``). The loss is convex in ``w`` (the log of an affine function), so its slope grows with ``w``: ``w = 1``
    where the slope at 1 is not positive (this includes columns without items, whose slope is 0), ``w = 0`` where the
    slope at 0 is not negative, else the slope's zero by bisection."""
    q, t, m = calibrated.double(), targets.double(), weight.double()
    pi = prior.double().expand(q.shape[1:])

    def slope(w: torch.Tensor) -> torch.Tensor:
        p = (pi + w * (q - pi)).clamp(EPSILON, 1 - EPSILON)
        return (-(q - pi) * (t / p - (1 - t) / (1 - p)) * m).sum(0)

    low, high = torch.zeros_like(pi), torch.ones_like(pi)
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        rising = slope(middle) > 0
        high, low = torch.where(rising, middle, high), torch.where(rising, low, middle)
    inner = (low + high) / 2
    return torch.where(slope(torch.ones_like(pi)) <= 0, 1.0, torch.where(slope(torch.zeros_like(pi)) >= 0, 0.0, inner))


def evidence(calibrated, targets, weight, prior, mix, posts: torch.Tensor, labels: int) -> torch.Tensor:
    """``[K]``: for each column of ``[N, K]`` tensors (``K = views · labels``, view-major), the evidence of its
    label: the calibration's log-loss minus the mixture's (``mix`` ``[K]``), summed over the label's views item by
    item, its mean over items in standard errors, the items of one post (``posts`` ``[N]``) counted as one
    observation (``common.paired_difference``; items of weight 0 left out). A label is judged over its views because
    its views are scored pooled, and one view's head alone sees a third of the evidence. No difference at all (``w =
    1``), or too few posts to tell, is 0; a difference without spread, infinite."""
    q, t, pi = calibrated.double(), targets.double(), prior.double().expand(calibrated.shape[1:])
    present = weight.double() > 0
    items, views = q.shape[0], q.shape[1] // labels
    gain = torch.where(present, item_log_loss(q, t) - item_log_loss(mixed(q, mix.double(), pi), t), 0.0)
    pooled = gain.reshape(items, views, labels).sum(1)
    seen = present.reshape(items, views, labels).any(1)
    pooled = torch.where(seen, pooled, torch.nan).numpy()
    mean, error = paired_difference(pooled, np.zeros_like(pooled), posts.numpy())
    told = ~np.isnan(error)  # at least two posts with items
    spread, steady = told & (error > 0), told & (error == 0) & (mean > 0)
    z = np.zeros_like(mean)
    z[spread] = mean[spread] / error[spread]
    z[steady] = np.inf
    return torch.from_numpy(z).repeat(views)


def with_margin(
    mix, calibrated, targets, weight, prior, posts, labels: int, margin: float
) -> tuple[torch.Tensor, dict]:
    """``(weight, info)``: ``mix`` where its label's dev ``evidence`` exceeds ``margin`` standard errors, ``w = 1``
    elsewhere (module docstring), with what the margin saw: each label's evidence (capped at ``EVIDENCE_CAP``: a
    gain without spread) and how many heads / decoders it kept at their calibration that would have moved. ``mix``
    itself and no info without a margin."""
    if margin <= 0:
        return mix, {}
    z = evidence(calibrated, targets, weight, prior, mix, posts, labels)
    clear = z > margin
    kept = torch.where(clear, mix, torch.ones_like(mix))
    info = {
        "fallback_evidence": [round(float(value), 2) for value in z[:labels].clamp(max=EVIDENCE_CAP)],
        "kept_by_margin": int(((mix < 1) & ~clear).sum()),
    }
    return kept, info


def cross_fit_parts(items: int, folds: int) -> torch.Tensor:
    """``[items]``: the part of each item, ``i mod folds`` (deterministic; dev is in a fixed order)."""
    return torch.arange(items) % max(min(folds, items), 1)


def fallback_info(calibrated, targets, weight, prior, mix) -> dict:
    """What the fallback found on dev: the cross-fitted log-loss of the calibration alone, the prior alone and the
    mixture (means over the heads / decoders with dev items), and how many heads / decoders lean to the prior
    (``w < 0.5``)."""
    present = weight.sum(0) > 0
    losses = {
        name: mixture_log_loss(calibrated, targets, weight, prior, torch.full_like(mix, value))
        for name, value in (("calibrated", 1.0), ("prior", 0.0))
    }
    losses["mixed"] = mixture_log_loss(calibrated, targets, weight, prior, mix)
    table = {
        name: round(float(loss[present].mean()), 6) if bool(present.any()) else None for name, loss in losses.items()
    }
    return {"cross_fitted_log_loss": table, "towards_prior": int((mix < 0.5).sum())}


def no_fallback(shape) -> tuple[torch.Tensor, torch.Tensor]:
    """``(weight, prior)`` of a model without a fallback: ``w = 1``, so the prior never counts."""
    return torch.ones(shape), torch.zeros(shape)


def fallback_prior(prior: torch.Tensor | None, shape) -> torch.Tensor:
    """The training part's prior ``[V, C]`` as a float tensor of ``shape``; one clear error without it."""
    if prior is None:
        raise ValueError(
            "calibration.fallback=prior needs each label's share in the training part (the prior): pass it to "
            "fit_calibration (the fold runner does)"
        )
    return torch.as_tensor(prior, dtype=torch.float64).reshape(shape)


def fit_post_fallback(
    logits: torch.Tensor,
    gold: torch.Tensor,
    annotated: torch.Tensor | None,
    settings: CalibrationSettings,
    prior: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """``(weight [V, C], prior [V, C], info)`` of the post heads: each head's ``w`` cross-fitted on dev ``logits``
    ``[N, V, C]`` against the gold of every annotator view (module docstring); ``w = 1`` without a fallback."""
    views, labels = logits.shape[1], logits.shape[2]
    if not settings.falls_back:
        return *no_fallback((views, labels)), {}
    pi = fallback_prior(prior, (views, labels))
    items = logits.shape[0]
    if items < 2:
        return torch.ones(views, labels), pi.float(), {}
    logits = logits.detach().double().cpu()
    parts = cross_fit_parts(items, settings.fallback_folds)
    held = torch.empty_like(logits)
    for part in parts.unique():
        out = parts == part
        scale, shift, _ = fit_post_calibration(
            logits[~out], gold[~out], None if annotated is None else annotated[~out], settings
        )
        held[out] = apply_post_calibration(logits[out], scale.double(), shift.double())
    targets, weight = view_targets(gold, annotated, views)
    columns = [tensor.reshape(items, -1) for tensor in (held, targets, weight)]
    mix = mixture_weight(*columns, pi.reshape(-1))
    mix, margin = with_margin(mix, *columns, pi.reshape(-1), torch.arange(items), labels, settings.fallback_margin)
    info = {**fallback_info(*columns, pi.reshape(-1), mix), **margin}
    return mix.reshape(views, labels).float(), pi.float(), info


def fit_span_fallback(
    crf: BatchedBIOCRF,
    outputs: Sequence[Mapping[str, torch.Tensor]],
    model_views: int,
    labels: int,
    settings: CalibrationSettings,
    prior: torch.Tensor | None,
    scale: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """``(weight [D], prior [D], info)`` of the span decoders (``D = views · labels``, view-major): each decoder's
    ``w`` cross-fitted on the token marginals of dev's posts, whole posts held out (module docstring). ``scale``
    ``[D]``: the calibration fitted on the whole of dev (fitted here without it), where each held-out part's own
    fit starts."""
    decoders = model_views * labels
    if not settings.falls_back:
        return *no_fallback(decoders), {}
    pi = fallback_prior(prior, (decoders,))
    if len(outputs) == 0:
        return torch.ones(decoders), pi.float(), {}
    emissions, mask, targets, weight = span_dev(outputs, model_views, labels)
    posts = emissions.shape[0]
    if posts < 2:
        return torch.ones(decoders), pi.float(), {}
    frozen = frozen_copy(crf)
    start = fit_span_scale(frozen, emissions, mask, targets, weight, settings)[0] if scale is None else scale
    parts = cross_fit_parts(posts, settings.fallback_folds)
    held = torch.zeros(targets.shape, dtype=torch.float64)
    for part in parts.unique():
        out = parts == part  # the posts stay sorted by length within each part, as the chunks need
        fitted = span_scale_from(frozen, emissions[~out], mask[~out], targets[~out], weight[~out], settings, start)
        held[out] = span_marginals(frozen, emissions[out], mask[out], fitted)
    columns = [tensor.transpose(1, 2).reshape(-1, decoders) for tensor in (held, targets, weight)]  # [tokens, D]
    mix = mixture_weight(*columns, pi)
    post_of_token = torch.arange(posts).repeat_interleave(targets.shape[2])
    mix, margin = with_margin(mix, *columns, pi, post_of_token, labels, settings.fallback_margin)
    return mix.float(), pi.float(), {**fallback_info(*columns, pi, mix), **margin}

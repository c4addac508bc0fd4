"""Post-hoc calibration of a trained model's probabilities, fitted on the fold's dev split after training.

A model selected for F1 (or trained a few epochs too long) is often over- or under-confident: its probabilities
rank the posts well but are not the shares of annotators they claim to be. Temperature scaling (Guo et al. 2017,
"On Calibration of Modern Neural Networks") divides the scores by one number ``T`` per label fitted on held-out
data; Platt scaling (Platt 1999) fits a slope and an intercept instead. Both are fitted here by minimising the dev
negative log-likelihood (post heads with ``torch.optim.LBFGS``, span decoders by Newton's method, below):

- **post heads** (MVML): per (view, label) ``p = sigmoid(a · z + b)`` over the head's logit ``z``: ``temperature``
  fits ``a = 1 / T`` (``b = 0``), ``platt`` fits both. A monotone map per label: it moves no hard decision;
- **span decoders** (MVMD): one ``a = 1 / T`` per decoder multiplies *every* score of its CRF (emissions,
  transitions, start, end), i.e. the tempered sequence distribution ``p(y)^a / Z``. Its marginals are the
  calibrated token probabilities, and its most probable path is the same as the untempered CRF's (``a > 0``), so
  Viterbi decodes exactly what it did. The dev objective is the token-level binary log-loss of those marginals
  (what the soft-label cross-entropy scores). Each decoder's loss depends on its own scale only, so every
  decoder's temperature and the shared one are fitted together by Newton's method with central finite
  differences: each step is one forward-backward pass of the CRF over dev with every open (decoder, scale) pair
  side by side and no autograd (``_newton_minimise``; what it costs: docs/speed-and-scale.md).

The targets: a model with a head / decoder set per annotator view is fitted view by view against that annotator;
a one-view model (``data.targets`` soft, majority, union, intersection), scored against every annotator, against
the share of the annotated views (the same optimum as each (item, view) pair as one observation). ``scope``:
``own`` (each label / decoder its own values; one with fewer than ``min_evidence`` positive dev items, counted per
view, takes the shared values) or ``shared`` (one set for all). ``method: none`` fits nothing (scale 1, shift 0).
``fallback: prior`` then mixes each head's or decoder's calibrated probability with its label's training share, by
a weight cross-fitted on dev, so that a label the model cannot learn reports its prior (``models/prior_fallback.py``,
which calls the fits here on parts of dev).

``CalibrationSettings`` is saved in ``model.json`` (``models/saved_model.py``) and the fitted values in the
model's buffers (``calibration_scale``, ``calibration_shift``, and the fallback's ``calibration_weight``,
``calibration_prior``; older folders load without them, uncalibrated or unmixed). The
functions here take tensors; the models collect their dev outputs and keep the result (``models/mvml.py``,
``models/mvmd.py``). What was measured: docs/soft-labels.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

import torch
from pydantic import Field
from torch.nn import functional as F

from common.untrusted import Strict
from models.crf import BatchedBIOCRF

# a = 1 / T is kept within this range: T from 0.05 (sharper) to 20 (flatter); outside it a fit is degenerate
SCALE_RANGE = (0.05, 20.0)
Count = Annotated[int, Field(ge=0, le=10**9)]


class CalibrationSettings(Strict):
    """How a model's probabilities are calibrated after training: ``method`` (``none`` | ``temperature`` |
    ``platt``, the last for post heads only), ``scope`` (``own`` | ``shared``) and ``min_evidence`` (module
    docstring); ``fallback`` (``none`` | ``prior``) with ``fallback_folds``: whether each head / decoder then mixes
    its calibrated probability with its label's share in the training part, by a weight cross-fitted on dev over
    ``fallback_folds`` parts, and ``fallback_margin``: how many standard errors of cross-fitted dev evidence a label
    needs before its mixtures replace its calibration (0: any; ``models/prior_fallback.py``). Frozen plain values:
    saved in ``model.json`` as they are. The class default is ``none`` (a model built in code, or a folder saved
    before calibration existed); ``conf/model/`` chooses what a run fits."""

    method: Literal["none", "temperature", "platt"] = "none"
    scope: Literal["own", "shared"] = "own"
    min_evidence: Count = 5
    fallback: Literal["none", "prior"] = "none"
    fallback_folds: Annotated[int, Field(ge=2, le=100)] = 5
    fallback_margin: Annotated[float, Field(ge=0, le=100)] = 0.0

    @classmethod
    def of(cls, given: CalibrationSettings | Mapping[str, Any] | None) -> CalibrationSettings:
        if isinstance(given, cls):
            return given
        if isinstance(given, CalibrationSettings):
            return cls(**given.model_dump())
        return cls(**dict(given or {}))

    @property
    def fits(self) -> bool:
        """Whether anything is fitted on dev: a rescaling of the scores, a prior fallback or both."""
        return self.rescales or self.falls_back

    @property
    def rescales(self) -> bool:
        return self.method != "none"

    @property
    def falls_back(self) -> bool:
        return self.fallback != "none"


class PostCalibrationSettings(CalibrationSettings):
    """MVML's: temperature or Platt scaling of each head's logits."""


class SpanCalibrationSettings(CalibrationSettings):
    """MVMD's: temperature of each decoder's CRF (Platt's intercept has no meaning for a sequence distribution)."""

    method: Literal["none", "temperature"] = "none"


# --- targets ----------------------------------------------------------------------------------------------------
def view_targets(
    gold: torch.Tensor, annotated: torch.Tensor | None, model_views: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(targets, weight)`` ``[N, model_views, C, ...]`` from 0/1 gold ``[N, V, C, ...]`` of every annotator view.

    A model with a head per view (``model_views == V``) meets each view's own gold, weighted by whether that view
    annotated the item; a one-view model meets the share of the annotated views, weighted by whether any did."""
    gold = gold.double()
    extra = gold.dim() - 2
    mask = torch.ones(gold.shape[:2], dtype=torch.bool) if annotated is None else annotated.cpu().bool()
    weight = mask.double().reshape(*mask.shape, *([1] * extra))
    if model_views == gold.shape[1]:
        return gold * weight, weight.expand_as(gold).clone()
    count = weight.sum(1, keepdim=True)
    share = (gold * weight).sum(1, keepdim=True) / count.clamp(min=1.0)
    return share, (count > 0).double().expand_as(share).clone()


# --- the optimiser ------------------------------------------------------------------------------------------------
def _minimise(parameters: Sequence[torch.Tensor], objective: Callable[[], torch.Tensor]) -> None:
    """LBFGS with a strong-Wolfe line search on ``objective`` (which may call ``backward`` itself per chunk and
    returns the detached total), in place on ``parameters``."""
    optimiser = torch.optim.LBFGS(parameters, lr=1.0, max_iter=100, tolerance_grad=1e-9, line_search_fn="strong_wolfe")

    def closure():
        optimiser.zero_grad()
        return objective()

    optimiser.step(closure)


FD_STEP = 1e-3  # in log-scale: the finite differences' half-width (float64 losses: errors far below the tolerance)
MAX_STEP = 1.0  # at most a factor e per step
MAX_NEWTON_STEPS = 30
GRADIENT_TOLERANCE = 1e-7  # of a mean log-loss per log-scale: settled
STEP_TOLERANCE = 1e-3  # in log-scale: after a Newton step this small, the next would move about its square (1e-6)


def _newton_minimise(
    losses: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    fit_own: torch.Tensor,
    start: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``(own [D], shared [1], losses at scale 1 [D])``: the log-scales minimising each decoder's dev loss (for the
    decoders ``fit_own`` marks; 0 for the others) and the sum over all decoders (``shared``; searched only when a
    decoder is not fitted on its own, which is the only one that takes it; else 0), by Newton's method with central
    finite differences, both at once, within ``SCALE_RANGE``.

    ``losses(decoders [M], scales [M]) -> [M]`` evaluates any list of (decoder, scale) pairs in one batched
    forward-backward pass of the CRF over dev (no autograd). A decoder's loss depends on its own scale only, so
    one pass at ``x - h, x, x + h`` for every open decoder's own ``x`` and for the shared one gives every first
    and second derivative a Newton step needs; a decoder (or the shared value) that moved less than
    ``STEP_TOLERANCE`` is settled and evaluated no more: a small step, or a bound of ``SCALE_RANGE`` that the step
    pushes against (the next step, from the same place, would be the same). Steps are capped at ``MAX_STEP`` in
    log-scale; where the curvature is not positive the step follows the gradient's sign.

    ``start`` ``[D]`` (log-scales): where each decoder's own search starts, and the shared one at their mean over
    the decoders not fitted on their own (over all, if every one is); the losses at scale 1 are then not seen, and
    ``None`` is returned for them. Without it every search starts at 0 (scale 1)."""
    decoders = fit_own.shape[0]
    every = torch.arange(decoders)
    low, high = (torch.tensor(bound, dtype=torch.float64).log() for bound in SCALE_RANGE)
    if start is None:
        x_own = torch.zeros(decoders, dtype=torch.float64)
        x_shared = torch.zeros((), dtype=torch.float64)
    else:
        x_own = start.double().clamp(low, high).clone()
        x_shared = x_own[~fit_own].mean() if bool((~fit_own).any()) else x_own.mean()
    offsets = torch.tensor([-FD_STEP, 0.0, FD_STEP], dtype=torch.float64)[:, None]
    shared_open, own_open = not bool(fit_own.all()), fit_own.clone()  # a shared scale no decoder takes: not fitted
    at_one = None
    for _ in range(MAX_NEWTON_STEPS):
        own = own_open.nonzero().flatten()
        rows = [(every, x_shared.expand(decoders))] if shared_open else []
        rows.append((own, x_own[own]))
        points = [(index.expand(3, -1), centre[None, :] + offsets) for index, centre in rows]
        values = losses(
            torch.cat([i.reshape(-1) for i, _ in points]), torch.cat([x.reshape(-1) for _, x in points]).exp()
        )
        if shared_open:
            shared_values, values = values[: 3 * decoders].reshape(3, decoders), values[3 * decoders :]
            if at_one is None and start is None:
                at_one = shared_values[1].clone()  # every value starts at log-scale 0: scale 1
            moved = (x_shared + _newton_step(shared_values.sum(1))).clamp(low, high)
            shared_open = bool((moved - x_shared).abs() >= STEP_TOLERANCE)
            x_shared = moved
        if at_one is None and start is None:  # every decoder fits its own: its first row is at scale 1
            at_one = values.reshape(3, -1)[1].clone()
        moved = (x_own[own] + _newton_step(values.reshape(3, -1))).clamp(low, high)
        own_open[own] = (moved - x_own[own]).abs() >= STEP_TOLERANCE
        x_own[own] = moved
        if not shared_open and not bool(own_open.any()):
            break
    return x_own, x_shared.reshape(1), at_one


def _newton_step(values: torch.Tensor) -> torch.Tensor:
    """Each column's Newton step from its losses at ``x - h, x, x + h`` (rows), capped at ``MAX_STEP``; 0 where
    the slope is below ``GRADIENT_TOLERANCE`` (settled, or a decoder without dev items)."""
    slope = (values[2] - values[0]) / (2 * FD_STEP)
    curvature = (values[2] - 2 * values[1] + values[0]) / FD_STEP**2
    step = torch.where(curvature > 0, -slope / curvature.clamp(min=1e-12), -MAX_STEP * slope.sign())
    step = step.clamp(-MAX_STEP, MAX_STEP)
    return torch.where(slope.abs() < GRADIENT_TOLERANCE, torch.zeros_like(step), step)


def _clamped_scale(log_scale: torch.Tensor) -> torch.Tensor:
    return log_scale.detach().exp().clamp(*SCALE_RANGE)


# --- post heads --------------------------------------------------------------------------------------------------
def post_nll(logits, targets, weight, scale, shift) -> torch.Tensor:
    """Per (view, label) ``[V, C]``: mean weighted binary log-loss of ``sigmoid(scale · logits + shift)``."""
    terms = F.binary_cross_entropy_with_logits(logits * scale + shift, targets, reduction="none")
    return (terms * weight).sum(0) / weight.sum(0).clamp(min=1.0)


def fit_post_calibration(
    logits: torch.Tensor, gold: torch.Tensor, annotated: torch.Tensor | None, settings: CalibrationSettings
) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """``(scale [V, C], shift [V, C], info)`` of ``settings`` fitted on dev ``logits`` ``[N, V, C]`` against the gold
    of every annotator view ``[N, V', C]`` (and its ``annotated`` mask)."""
    views, labels = logits.shape[1], logits.shape[2]
    identity = torch.ones(views, labels), torch.zeros(views, labels)
    if not settings.rescales or logits.shape[0] == 0:
        return *identity, {}
    logits = logits.detach().double().cpu()
    targets, weight = view_targets(gold, annotated, views)
    targets, weight = targets.reshape(logits.shape), weight.reshape(logits.shape)
    platt = settings.method == "platt"

    def fitted(shape) -> tuple[torch.Tensor, torch.Tensor]:
        log_scale = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
        shift = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
        parameters = [log_scale, shift] if platt else [log_scale]

        def objective():
            loss = post_nll(logits, targets, weight, log_scale.exp(), shift).sum()
            loss.backward()
            return loss.detach()

        with torch.enable_grad():
            _minimise(parameters, objective)
        return _clamped_scale(log_scale).expand(views, labels), shift.detach().expand(views, labels)

    shared_scale, shared_shift = fitted((1, 1))
    if settings.scope == "own":
        scale, shift = fitted((views, labels))
        weak = (targets * weight).sum(0) < settings.min_evidence  # [V, C]
        scale = torch.where(weak, shared_scale, scale)
        shift = torch.where(weak, shared_shift, shift)
    else:
        scale, shift = shared_scale, shared_shift
    before = post_nll(logits, targets, weight, torch.ones(()), torch.zeros(()))
    after = post_nll(logits, targets, weight, scale, shift)
    info = _info(settings, before, after, weight.sum(0) > 0)
    if settings.scope == "own":
        info["shared_for"] = int(weak.sum())
    return scale.float().clone(), shift.float().clone(), info


def apply_post_calibration(logits: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Calibrated probabilities ``[B, V, C]`` of logits ``[B, V, C]``."""
    return torch.sigmoid(logits * scale.to(logits) + shift.to(logits))


# --- span decoders ------------------------------------------------------------------------------------------------
def _padded(tensors: Sequence[torch.Tensor], width: int, value=0) -> torch.Tensor:
    """Dev batches of different word counts ``[B, D, W, ...]`` / ``[B, W]`` padded to ``width`` words and joined."""
    out = []
    for tensor in tensors:
        axis = 2 if tensor.dim() >= 3 else 1
        missing = width - tensor.shape[axis]
        if missing:
            shape = list(tensor.shape)
            shape[axis] = missing
            tensor = torch.cat([tensor, tensor.new_full(shape, value)], dim=axis)
        out.append(tensor)
    return torch.cat(out)


def span_dev(outputs: Sequence[Mapping[str, torch.Tensor]], model_views: int, labels: int):
    """``(emissions [N, D, W, 3], mask [N, W], targets [N, D, W], weight [N, D, W])`` of dev outputs (``emissions``,
    ``word_mask``, ``gold`` tags of every view ``[B, V·C, W]``, ``annotated``), the posts sorted by length."""
    width = max(int(batch["word_mask"].shape[1]) for batch in outputs)
    emissions = _padded([batch["emissions"].detach().double().cpu() for batch in outputs], width)
    mask = _padded([batch["word_mask"].bool().cpu() for batch in outputs], width, False)
    gold = _padded([batch["gold"].cpu() for batch in outputs], width)
    annotated = [batch.get("annotated") for batch in outputs]
    gold_views = gold.shape[1] // labels
    annotated = (
        None
        if all(a is None for a in annotated)
        else torch.cat(
            [
                torch.ones(b["gold"].shape[0], gold_views, dtype=torch.bool) if a is None else a.cpu().bool()
                for a, b in zip(annotated, outputs)
            ]
        )
    )
    inside = (gold > 0).reshape(gold.shape[0], gold_views, labels, width)  # B or I
    targets, weight = view_targets(inside, annotated, model_views)
    targets = targets.reshape(gold.shape[0], model_views * labels, width)
    weight = weight.reshape(targets.shape) * mask[:, None, :].double()
    order = torch.argsort(mask.sum(-1))
    return emissions[order], mask[order], targets[order], weight[order]


def _chunks(mask: torch.Tensor, budget: int = 1 << 15):
    """Slices of posts (sorted by length) whose padded words stay within ``budget``, each trimmed to its widest."""
    lengths = mask.sum(-1).tolist()
    start = 0
    while start < len(lengths):
        end = start + 1
        while end < len(lengths) and (end + 1 - start) * max(lengths[end], 1) <= budget:
            end += 1
        yield slice(start, end), max(int(max(lengths[start:end])), 1)
        start = end


def span_nll(
    crf: BatchedBIOCRF, emissions, mask, targets, weight, scale, budget: int | None = None, decoders=None
) -> torch.Tensor:
    """Per decoder ``[D]``: the mean weighted token log-loss of the CRF's marginals ``P(inside)`` tempered by
    ``scale`` ``[D]``, in chunks of at most ``budget`` padded words (default ``CHUNK_WORDS``); with ``decoders``
    ``[M]``, the emissions, targets and weights are those of the CRF's decoders ``decoders[m]``
    (``BatchedBIOCRF.marginals``)."""
    total = torch.zeros(emissions.shape[1], dtype=torch.float64)
    denominator = weight.sum((0, 2)).clamp(min=1.0)
    for rows, width in _chunks(mask, budget or CHUNK_WORDS):
        inside = crf.inside_probabilities(emissions[rows, :, :width], mask[rows, :width], scale, decoders)
        inside = inside.clamp(1e-12, 1 - 1e-12)
        t, w = targets[rows, :, :width], weight[rows, :, :width]
        terms = -(t * inside.log() + (1 - t) * (1 - inside).log()) * w
        total = total + terms.sum((0, 2)) / denominator
    return total


CHUNK_WORDS = 1 << 12  # padded words of a chunk at one copy of the decoders (fewer when several are evaluated): small
# chunks of posts of similar length pad less and stay in cache (demo fold 0: 0.99 s at 1 << 15, 0.56 s at 1 << 12)


def span_losses_at(
    crf: BatchedBIOCRF, emissions, mask, targets, weight
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """``losses(decoders [M], scales [M]) -> [M]``: the ``span_nll`` of decoder ``decoders[m]`` at ``scales[m]``
    for every m from one pass, the chosen decoders side by side (any repeated)."""

    def losses(decoders: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return span_nll(
                crf,
                emissions[:, decoders],
                mask,
                targets[:, decoders],
                weight[:, decoders],
                scales,
                budget=max(CHUNK_WORDS * emissions.shape[1] // max(len(decoders), 1), 1),
                decoders=decoders,
            )

    return losses


def fit_span_calibration(
    crf: BatchedBIOCRF,
    outputs: Sequence[Mapping[str, torch.Tensor]],
    model_views: int,
    labels: int,
    settings: CalibrationSettings,
) -> tuple[torch.Tensor, dict]:
    """``(scale [D], info)``: each decoder's (or one shared) ``1 / T`` fitted on dev outputs (``span_dev``)."""
    if not settings.rescales or not outputs:
        return torch.ones(model_views * labels), {}
    return fit_span_scale(frozen_copy(crf), *span_dev(outputs, model_views, labels), settings)


def fit_span_scale(frozen: BatchedBIOCRF, emissions, mask, targets, weight, settings: CalibrationSettings):
    """``fit_span_calibration`` on dev tensors (``span_dev``'s, posts sorted by length, or any length-sorted subset
    of them) with the CRF already a ``frozen_copy``; scale 1 without a rescaling ``method``."""
    decoders = emissions.shape[1]
    if not settings.rescales or emissions.shape[0] == 0:
        return torch.ones(decoders), {}
    losses = span_losses_at(frozen, emissions, mask, targets, weight)
    scale, before, strong = _span_scale(losses, targets, weight, settings, None)
    after = losses(torch.arange(decoders), scale.double())
    info = _info(settings, before, after, weight.sum((0, 2)) > 0)
    if settings.scope == "own":
        info["shared_for"] = int((~strong).sum())
    return scale, info


def span_scale_from(frozen: BatchedBIOCRF, emissions, mask, targets, weight, settings: CalibrationSettings, start):
    """The scale ``fit_span_scale`` fits (to Newton's tolerance), without its report, Newton's method started at
    ``start`` ``[D]`` instead of 1: the prior fallback's cross-fitted parts of dev start from the scale fitted on the
    whole of dev, which is near each part's own, and settle in fewer steps (what it saves: docs/soft-labels.md)."""
    if not settings.rescales or emissions.shape[0] == 0:
        return torch.ones(emissions.shape[1])
    losses = span_losses_at(frozen, emissions, mask, targets, weight)
    return _span_scale(losses, targets, weight, settings, start)[0]


def _span_scale(losses, targets, weight, settings: CalibrationSettings, start):
    """``(scale [D], losses at scale 1 [D] or None, decoders fitted on their own [D])`` of ``settings``."""
    strong = _decoder_evidence(targets, weight) >= settings.min_evidence
    own = settings.scope == "own"
    fit_own = strong if own else torch.zeros_like(strong)
    start = None if start is None else start.double().log()
    own_scale, shared, before = _newton_minimise(losses, fit_own, start)
    scale = _clamped_scale(shared).expand(strong.shape[0])
    if own:
        scale = torch.where(strong, _clamped_scale(own_scale), scale)
    return scale.float().clone(), before, strong


def span_marginals(frozen: BatchedBIOCRF, emissions, mask, scale: torch.Tensor) -> torch.Tensor:
    """``[N, D, W]`` float64: the marginals ``P(inside)`` of the CRF tempered by ``scale`` ``[D]`` over dev tensors
    (``span_dev``'s), in chunks of ``CHUNK_WORDS`` padded words; 0 at padding."""
    inside = torch.zeros(emissions.shape[:3], dtype=torch.float64)
    with torch.no_grad():
        for rows, width in _chunks(mask, CHUNK_WORDS):
            part = frozen.inside_probabilities(emissions[rows, :, :width], mask[rows, :width], scale.double())
            inside[rows, :, :width] = part.double()
    return inside


def _decoder_evidence(targets: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Each decoder's dev spans, counted per view: the begins of runs of inside tokens, weighted (shares sum)."""
    previous = torch.cat([torch.zeros_like(targets[..., :1]), targets[..., :-1]], dim=-1)
    return ((targets - previous).clamp(min=0) * weight).sum((0, 2))


def frozen_copy(crf: BatchedBIOCRF) -> BatchedBIOCRF:
    """The CRF on the CPU in float64 without gradients (the fit moves only the temperature)."""
    copy = BatchedBIOCRF(crf.num_decoders).double()
    copy.load_state_dict({k: v.detach().cpu().double() for k, v in crf.state_dict().items()})
    return copy.requires_grad_(False)


def _info(settings: CalibrationSettings, before: torch.Tensor, after: torch.Tensor, present: torch.Tensor) -> dict:
    """What was fitted: the settings and the dev log-loss before and after (mean over the labels / decoders that
    ``present`` marks, those with dev items)."""
    loss = {"before": None, "after": None}
    if bool(present.any()):
        loss = {"before": round(float(before[present].mean()), 6), "after": round(float(after[present].mean()), 6)}
    return {**settings.model_dump(), "dev_log_loss": loss}

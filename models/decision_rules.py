"""Decision rules tuned on dev: a threshold per (view, label) for MVML, an O bias per decoder for MVMD.

A fixed rule (τ = 0.7 for every label; no O bias) suits labels of average frequency; a rare label whose
probabilities never reach 0.7, or a decoder that floods the posts with short spans, loses F1 that one
number per label (or decoder) picked on the fold's dev set wins back. Each number maximises *that* label's
(decoder's) own dev F1 over a small grid; a label with fewer than ``min_positives`` gold positives on dev
keeps the fixed rule, because a threshold fitted to one or two posts is noise. Ties go to the value
closest to the fixed rule, so tuning never moves a decision it has no evidence for.

Measured on a real corpus (the toxic-spans development corpus, docs/benchmark-quality.md), the
per-decoder O bias overfits: 15-40 decoders each fitted to a few dozen dev spans trade precision for recall and
lose strict F1 on test. Hence the *scopes* of a tuned rule (``scope``):

- ``"own"`` (the original rule): each decoder / (view, label) maximises its own dev F1;
- ``"shared"``: one value for every decoder (label), the one that maximises the metric the task reports — the
  official span F1 averaged over views (strict), or the post micro F1 with its "no label" pseudo-label;
- ``"shrunk"``: the shared value plus each decoder's own deviation shrunk towards it by
  ``n / (n + shrinkage)``, ``n`` its dev spans (positives), so a decoder moves away from the shared value only as
  far as its evidence allows;

and ``confirm``: the rule is fitted on each half of dev (even / odd posts) and scored on the other half with the
task metric; the tuned values (fitted on all of dev) are kept only when that cross-fitted gain over the fixed
rule is positive, else the fixed rule stays. ``floor``: no tuned value below it.

``DecisionSettings`` holds every setting of a rule once: the fixed rule's value, whether it is tuned, and how
(scope, shrinkage, confirm, evidence, floor). MVMD and MVML take it (``model.module.decision`` in
``conf/model/``), the saved-model schema checks it (``models/saved_model.py``), and ``FallacyModule.tune_decisions``
fits it. The fitting functions here take tensors only; the models collect their dev outputs
(``dev_outputs``), fit (``fit_decision``, which the quality benchmark calls too) and store the result in a buffer
that is saved with the weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import torch
from pydantic import Field

from common.untrusted import Strict
from models.crf import B, BatchedBIOCRF, O

THRESHOLD_GRID = tuple(round(0.05 * step, 2) for step in range(1, 20))  # 0.05 … 0.95
O_BIAS_GRID = tuple(0.5 * step for step in range(-8, 9))  # −4 … 4
SCOPES = ("own", "shared", "shrunk")
Count = Annotated[int, Field(ge=0, le=10**9)]
Bias = Annotated[float, Field(ge=-1000, le=1000)]
Fraction = Annotated[float, Field(gt=0, lt=1)]
FloorFraction = Annotated[float, Field(ge=0, lt=1)]


class DecisionSettings(Strict):
    """A model's decision rule: the fixed rule, or one fitted on dev after training (``tuned``), and how it is fitted.

    - ``fixed``: the fixed rule's value: the threshold τ of every label (MVML), the O bias added to every decoder's
      O score when decoding (MVMD; 0: the CRF's own path). A tuned rule keeps it for the labels / decoders with too
      little dev evidence, when ``confirm`` rejects the fit, and it breaks ties;
    - ``tuned``: fit one value per label of each view (MVML) / per decoder (MVMD) on the fold's dev split;
    - ``scope`` (``own`` | ``shared`` | ``shrunk``), ``shrinkage`` and ``confirm``: how (module docstring);
    - ``min_evidence``: the dev spans of a decoder (MVMD) / positive dev posts of a label (MVML), counted per view,
      below which the value is not tuned;
    - ``floor``: no tuned value below it (``None``: no floor).

    Frozen, plain values only: it is saved in ``model.json`` as it is, and a model read back gets the same object.
    ``SpanDecisionSettings`` / ``PostDecisionSettings`` carry each level's defaults and ranges.
    """

    tuned: bool = False
    fixed: Bias = 0.0
    scope: Literal[SCOPES] = "own"  # the one list of scopes (a tuple subscript is the same Literal)
    shrinkage: Annotated[float, Field(ge=0, le=10**6)] = 20.0
    confirm: bool = False
    min_evidence: Count = 3
    floor: Bias | None = None

    @classmethod
    def of(cls, given: DecisionSettings | Mapping[str, Any] | None) -> DecisionSettings:
        """The settings from themselves, from a mapping (a Hydra ``decision`` block: the level's defaults for the
        keys it leaves out) or ``None`` (the defaults); a wrong value is a ``ValueError`` naming the field."""
        if isinstance(given, cls):
            return given
        if isinstance(given, DecisionSettings):
            given = given.model_dump()
        from pydantic import ValidationError

        try:
            return cls.model_validate(dict(given or {}))
        except ValidationError as err:
            problem = err.errors()[0]
            where = ".".join(str(part) for part in problem.get("loc", ()))
            raise ValueError(f"decision.{where}: {problem.get('msg')} (got {problem.get('input')!r})") from None


class SpanDecisionSettings(DecisionSettings):
    """MVMD's O-bias rule: by default no bias, tuned only for decoders with 30 dev spans (docs/benchmark-quality.md)."""

    min_evidence: Count = 30


class PostDecisionSettings(DecisionSettings):
    """MVML's threshold rule: τ = 0.7 (the paper's), tuned thresholds never below 0.3 (docs/benchmark-quality.md)."""

    fixed: Fraction = 0.7
    floor: FloorFraction | None = 0.3


def floored_grid(grid, floor: float | None, fixed: float) -> tuple[float, ...]:
    """The candidate values of a rule with a ``floor``: those at or above it (the floor itself, or ``fixed`` when
    that is higher, when none is)."""
    if floor is None:
        return tuple(grid)
    return tuple(value for value in grid if value >= floor) or (max(floor, fixed),)


def _f1(true_positive: torch.Tensor, predicted: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    precision = torch.where(predicted > 0, true_positive / predicted.clamp(min=1e-12), torch.zeros_like(predicted))
    recall = torch.where(gold > 0, true_positive / gold.clamp(min=1e-12), torch.zeros_like(gold))
    total = precision + recall
    return torch.where(total > 0, 2 * precision * recall / total.clamp(min=1e-12), torch.zeros_like(total))


def _pick(scores: torch.Tensor, grid: torch.Tensor, fixed: float) -> torch.Tensor:
    """Per column of ``scores [G, ...]`` the grid value of the best score; ties → the value nearest ``fixed``."""
    distance = (grid - fixed).abs()
    # best score first, then smallest distance to the fixed rule: lexicographic through a tiny penalty
    penalty = distance / (distance.max() + 1.0) * 1e-6
    shape = (-1,) + (1,) * (scores.dim() - 1)
    return grid[(scores.double() - penalty.view(shape)).argmax(0)]


def tune_thresholds(
    probabilities: torch.Tensor, targets: torch.Tensor, fallback: float, min_positives: int, grid=THRESHOLD_GRID
) -> torch.Tensor:
    """Thresholds ``[V, C]`` from dev probabilities and 0/1 targets ``[N, V, C]``.

    Each (view, label) gets the grid threshold that maximises its F1 on dev; with fewer than
    ``min_positives`` gold positives it keeps ``fallback`` (the global τ).
    """
    values = torch.tensor(grid, dtype=probabilities.dtype)
    gold = targets > 0.5
    chosen = probabilities.unsqueeze(0) >= values.view(-1, 1, 1, 1)  # [G, N, V, C]
    true_positive = (chosen & gold).sum(1).double()
    f1 = _f1(true_positive, chosen.sum(1).double(), gold.sum(0).double().expand_as(true_positive))
    thresholds = _pick(f1, values, fallback).to(probabilities.dtype)
    enough = gold.sum(0) >= min_positives
    return torch.where(enough, thresholds, torch.full_like(thresholds, fallback))


def _span_overlap_sums(predicted: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """``Σ_s |s ∩ gold words| / |s|`` per post and decoder for BIO tags ``[N, D, W]`` (padding is O).

    Within one decoder the spans of a post do not overlap, so summing the Faina pair credit
    ``|s ∩ t| / |s|`` over every gold span ``t`` counts the words of ``s`` that lie in some gold span.
    """
    inside = predicted != O
    span_id = torch.cumsum(predicted == B, dim=-1) * inside  # 1, 2, … inside spans, 0 outside
    lengths = torch.zeros(*predicted.shape[:-1], predicted.shape[-1] + 1, dtype=torch.float64)
    lengths.scatter_add_(-1, span_id, inside.double())
    word_length = lengths.gather(-1, span_id).clamp(min=1.0)
    return ((inside & (gold != O)).double() / word_length).sum(-1)


def decoder_span_f1(predicted: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Strict Faina span F1 of each decoder ``[D]`` over posts, from tags ``[N, D, W]`` (valid BIO)."""
    return _decoder_f1(_span_sums(predicted, gold))


def with_o_bias(emissions: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Emissions ``[B, D, W, 3]`` with ``bias [D]`` added to each decoder's O score."""
    shift = torch.zeros(bias.shape[0], emissions.shape[-1], dtype=emissions.dtype, device=emissions.device)
    shift[:, O] = bias.to(emissions.dtype)
    return emissions + shift.view(1, -1, 1, emissions.shape[-1])


@torch.no_grad()
def tune_o_bias(
    crf: BatchedBIOCRF, batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]], min_spans: int, grid=O_BIAS_GRID
) -> torch.Tensor:
    """O biases ``[D]`` from dev ``(emissions [B, D, W, 3], gold tags [B, D, W], word mask [B, W])`` batches.

    For each grid value every decoder decodes dev with that bias on its O score; each decoder keeps the
    value of its best strict span F1. A decoder with fewer than ``min_spans`` gold spans on dev keeps 0.
    """
    num_decoders = crf.num_decoders
    values = torch.tensor(grid, dtype=torch.float64)
    scores = torch.zeros(len(grid), num_decoders, dtype=torch.float64)
    gold_spans = torch.zeros(num_decoders, dtype=torch.float64)
    width = max(emissions.shape[2] for emissions, _, _ in batches) if batches else 0
    golds = torch.cat([_pad(tags, width) for _, tags, _ in batches]) if batches else None
    if golds is None:
        return torch.zeros(num_decoders)
    gold_spans += (golds == B).sum((0, 2)).double()
    for g, value in enumerate(grid):
        bias = torch.full((num_decoders,), float(value))
        decoded = [_pad(crf.viterbi(with_o_bias(emissions, bias), mask), width) for emissions, _, mask in batches]
        scores[g] = decoder_span_f1(torch.cat(decoded), golds)
    biases = _pick(scores, values, 0.0).float()
    return torch.where(gold_spans >= min_spans, biases, torch.zeros_like(biases))


def _pad(tags: torch.Tensor, width: int) -> torch.Tensor:
    return torch.nn.functional.pad(tags.long().cpu(), (0, width - tags.shape[-1]))


# --- one model's outputs against every annotator view ---------------------------------------------------
def span_observations(
    emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, annotated: torch.Tensor | None, model_views: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Dev ``(emissions, gold tags, mask)`` that a decision rule of a ``model_views``-view model is fitted on.

    ``tags [N, V·C, W]`` hold every gold view the split is scored against. A model with a decoder set per view
    (``model_views == V``) is fitted view by view. A model with one decoder set (``data.targets`` soft, union,
    majority, intersection) predicts one answer that the evaluator scores against every view (its ``-O`` rule), so
    each (post, view) pair is one observation: the posts are repeated per view, and the rule maximises the span F1
    pooled over those pairs (the view average of the report, up to pooling). A pair whose view did not annotate the
    post (``annotated [N, V]`` False) gets gold O and an overwhelming O emission: it adds no span to any F1."""
    labels = emissions.shape[1] // model_views
    views = tags.shape[1] // labels
    annotated = torch.ones(tags.shape[0], views, dtype=torch.bool) if annotated is None else annotated.cpu()
    tags = tags.clone()
    if model_views != views:
        emissions = emissions.repeat_interleave(views, 0)
        tags = tags.reshape(tags.shape[0] * views, labels, -1)
        mask = mask.repeat_interleave(views, 0)
        annotated = annotated.reshape(-1, 1)
    missing = ~annotated.repeat_interleave(tags.shape[1] // annotated.shape[1], dim=1)  # [N, D]
    if bool(missing.any()):
        tags[missing] = 0
        emissions = emissions.clone()
        emissions[..., O] = torch.where(missing[:, :, None], torch.full_like(emissions[..., O], 1e4), emissions[..., O])
    return emissions, tags, mask


def views_per_model_view(gold_views: int, model_views: int) -> int:
    """How often each dev item is met in the pooled observations: 1 for a model with a head/decoder set per view,
    ``V`` for a one-view model scored against ``V`` views.

    The evidence settings of a rule (``min_spans`` / ``min_positives``, ``shrinkage``) are counted *per view*, so
    ``fit_o_bias`` / ``fit_thresholds`` multiply them by this (their ``views_per_item``): pooled over three views,
    one rater's 10 dev spans of a label count 30, and a per-decoder bias fitted on them overfits as one fitted on
    10 would (what pooled and per-view counting gave on a real corpus: docs/benchmark-quality.md)."""
    return max(1, gold_views // model_views)


def post_observations(
    probabilities: torch.Tensor, targets: torch.Tensor, annotated: torch.Tensor | None, model_views: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dev ``(probabilities, targets)`` ``[N, V, C]`` that thresholds of a ``model_views``-view model are fitted on:
    as ``span_observations``, a one-head model's answer is one observation per (post, view) pair of every gold view
    in ``targets``; a pair whose view did not annotate the post gets probability and target 0 (no F1 counts it)."""
    annotated = torch.ones(targets.shape[:2], dtype=torch.bool) if annotated is None else annotated.cpu()
    if model_views != targets.shape[1]:
        probabilities = probabilities.expand(-1, targets.shape[1], -1).reshape(-1, 1, targets.shape[2])
        targets = targets.reshape(-1, 1, targets.shape[2])
        annotated = annotated.reshape(-1, 1)
    keep = annotated.unsqueeze(-1).to(probabilities.dtype)
    return probabilities * keep, targets * keep


# --- scopes, shrinkage and held-out confirmation ------------------------------------------------------


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise ValueError(f"decision-rule scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


def _halves(size: int, per_post: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Even and odd dev posts: the two halves of dev that ``confirm`` fits and scores crosswise. ``per_post``: the
    consecutive observations of one post (a one-view model meets each post once per view), kept in one half, so
    no post is fitted on and scored on at once."""
    index = torch.arange(size)
    post = index // per_post
    return index[post % 2 == 0], index[post % 2 == 1]


# spans ------------------------------------------------------------------------------------------------
def _span_sums(predicted: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """``[4, D]``: precision credit, recall credit, predicted and gold spans of each decoder (tags ``[N, D, W]``)."""
    return torch.stack(
        [
            _span_overlap_sums(predicted, gold).sum(0),
            _span_overlap_sums(gold, predicted).sum(0),
            (predicted == B).sum((0, 2)).double(),
            (gold == B).sum((0, 2)).double(),
        ]
    )


def view_average_span_f1(sums: torch.Tensor, num_views: int) -> torch.Tensor:
    """The official strict span F1 averaged over views from per-decoder sums ``[..., 4, D]`` (decoder
    ``d = view * C + c``): each view pools its labels' credits and counts, as the scorer does."""
    per_view = sums.reshape(*sums.shape[:-1], num_views, -1).sum(-1)  # [..., 4, V]
    return _decoder_f1(per_view).mean(-1)


class SpanDev:
    """Dev emissions, gold tags and masks of an MVMD model, padded to one width, decodable under any O bias."""

    def __init__(self, crf: BatchedBIOCRF, batches: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]):
        self.crf = crf
        width = max(emissions.shape[2] for emissions, _, _ in batches)
        self.emissions = torch.cat(
            [torch.nn.functional.pad(e.float().cpu(), (0, 0, 0, width - e.shape[2])) for e, _, _ in batches]
        )
        self.gold = torch.cat([_pad(tags, width) for _, tags, _ in batches])
        self.mask = torch.cat(
            [torch.nn.functional.pad(m.bool().cpu(), (0, width - m.shape[-1])) for _, _, m in batches]
        )

    def subset(self, index: torch.Tensor) -> SpanDev:
        part = object.__new__(SpanDev)
        part.crf, part.emissions, part.gold, part.mask = (
            self.crf,
            self.emissions[index],
            self.gold[index],
            self.mask[index],
        )
        return part

    def sums(self, bias: torch.Tensor) -> torch.Tensor:
        """``[4, D]`` span sums of dev decoded with O bias ``bias [D]``."""
        return self.sums_many(bias.unsqueeze(0))[0]

    def sums_many(self, biases: torch.Tensor, budget: int = 1 << 20) -> torch.Tensor:
        """``[G, 4, D]``: the sums under each of ``biases [G, D]``, the candidates decoded as one batch (chunks of at
        most ``budget`` emission scores, so memory stays bounded): one Viterbi pass over the words instead of one
        per candidate, the same maximisations element by element, so the same paths."""
        posts = self.emissions.shape[0]
        per_candidate = max(1, self.emissions.numel())
        chunk = max(1, budget // per_candidate)
        out = []
        for start in range(0, biases.shape[0], chunk):
            part = biases[start : start + chunk]
            shift = torch.zeros(*part.shape, self.emissions.shape[-1], dtype=self.emissions.dtype)
            shift[..., O] = part.to(self.emissions.dtype)
            emissions = (self.emissions.unsqueeze(0) + shift[:, None, :, None, :]).flatten(0, 1)  # [g·N, D, W, 3]
            mask = self.mask.repeat(part.shape[0], 1)
            decoded = self.crf.viterbi(emissions, mask).long().view(part.shape[0], posts, *self.gold.shape[1:])
            out.extend(_span_sums(tags, self.gold) for tags in decoded)
        return torch.stack(out)


@torch.no_grad()
def fit_o_bias(
    dev: SpanDev,
    num_views: int,
    min_spans: int,
    scope: str = "own",
    shrinkage: float = 20.0,
    confirm: bool = False,
    grid=O_BIAS_GRID,
    views_per_item: int = 1,
    fixed: float = 0.0,
    floor: float | None = None,
) -> tuple[torch.Tensor, dict]:
    """Decision O biases ``[D]`` for ``dev`` under ``scope`` (module docstring), and what was decided.

    ``min_spans`` and ``shrinkage`` are evidence *per view*; ``views_per_item`` (``views_per_model_view``: how often
    the pooled observations meet each dev post, consecutively) scales them and keeps a post's observations in one
    half of ``confirm``. ``fixed``: the bias of the fixed rule (0: none), which decoders without evidence keep;
    ``floor``: no tuned bias below it."""
    check_scope(scope)
    min_spans, shrinkage = min_spans * views_per_item, shrinkage * views_per_item
    grid = floored_grid(grid, floor, fixed)
    bias = _fit_o_bias_once(dev, num_views, min_spans, scope, shrinkage, grid, fixed)
    info = {"scope": scope}
    if confirm:
        gains = []
        halves = _halves(len(dev.gold), views_per_item)
        for fit_on, score_on in (halves, tuple(reversed(halves))):
            half_bias = _fit_o_bias_once(dev.subset(fit_on), num_views, min_spans, scope, shrinkage, grid, fixed)
            held_out = dev.subset(score_on)
            tuned = view_average_span_f1(held_out.sums(half_bias), num_views)
            untuned = view_average_span_f1(held_out.sums(torch.full_like(half_bias, fixed)), num_views)
            gains.append(float(tuned - untuned))
        info["held_out_gain"] = round(sum(gains) / len(gains), 6)
        info["confirmed"] = info["held_out_gain"] > 0
        if not info["confirmed"]:
            bias = torch.full_like(bias, fixed)
    return bias, info


def _fit_o_bias_once(
    dev: SpanDev, num_views: int, min_spans: int, scope: str, shrinkage: float, grid, fixed: float = 0.0
) -> torch.Tensor:
    values = torch.tensor(grid, dtype=torch.float64)
    num_decoders = dev.gold.shape[1]
    sums = dev.sums_many(values.float().unsqueeze(1).expand(-1, num_decoders))  # [G, 4, D]
    gold_spans = sums[0, 3]
    own = _pick(_decoder_f1(sums), values, fixed)
    if scope == "own":
        return torch.where(gold_spans >= min_spans, own, torch.full_like(own, fixed)).float()
    shared = _pick(view_average_span_f1(sums, num_views), values, fixed)
    if scope == "shared":
        return torch.full((num_decoders,), float(shared))
    weight = gold_spans / (gold_spans + shrinkage) if shrinkage > 0 else torch.ones_like(gold_spans)
    weight = torch.where(gold_spans >= min_spans, weight, torch.zeros_like(weight))
    return (shared + weight * (own - shared)).float()


def _decoder_f1(sums: torch.Tensor) -> torch.Tensor:
    """Strict span F1 of each decoder from sums ``[..., 4, D]``."""
    precision_sum, recall_sum, num_predicted, num_gold = sums.unbind(-2)
    precision = torch.where(num_predicted > 0, precision_sum / num_predicted.clamp(min=1), torch.zeros_like(num_gold))
    recall = torch.where(num_gold > 0, recall_sum / num_gold.clamp(min=1), torch.zeros_like(num_gold))
    total = precision + recall
    return torch.where(total > 0, 2 * precision * recall / total.clamp(min=1e-12), torch.zeros_like(total))


# post labels ------------------------------------------------------------------------------------------
def post_micro_f1(chosen: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """The official post-level micro F1 averaged over views, from booleans ``[..., N, V, C]``: per view TP/FP/FN
    over (post, label) pairs plus the "no label" pseudo-label of an empty set (``metrics/faina_post_counts.py``)."""
    predicted_empty, gold_empty = ~chosen.any(-1), ~gold.any(-1)  # [..., N, V]
    tp = (chosen & gold).sum((-3, -1)).double() + (predicted_empty & gold_empty).sum(-2).double()
    fp = (chosen & ~gold).sum((-3, -1)).double() + (predicted_empty & ~gold_empty).sum(-2).double()
    fn = (~chosen & gold).sum((-3, -1)).double() + (gold_empty & ~predicted_empty).sum(-2).double()
    return _f1(tp, tp + fp, tp + fn).mean(-1)


@torch.no_grad()
def fit_thresholds(
    probabilities: torch.Tensor,
    targets: torch.Tensor,
    fixed: float,
    min_positives: int,
    scope: str = "own",
    shrinkage: float = 20.0,
    confirm: bool = False,
    floor: float | None = None,
    grid=THRESHOLD_GRID,
    views_per_item: int = 1,
) -> tuple[torch.Tensor, dict]:
    """Thresholds ``[V, C]`` from dev ``probabilities`` and 0/1 ``targets`` ``[N, V, C]`` under ``scope``, never
    below ``floor``; with ``confirm``, the fixed ``τ`` unless the cross-fitted held-out gain is positive.
    ``min_positives`` and ``shrinkage`` are per view, scaled by ``views_per_item`` as in ``fit_o_bias``."""
    check_scope(scope)
    min_positives, shrinkage = min_positives * views_per_item, shrinkage * views_per_item
    grid = floored_grid(grid, floor, fixed)
    thresholds = _fit_thresholds_once(probabilities, targets, fixed, min_positives, scope, shrinkage, grid)
    info = {"scope": scope}
    if confirm:
        gold = targets > 0.5
        gains = []
        halves = _halves(len(targets), views_per_item)
        for fit_on, score_on in (halves, tuple(reversed(halves))):
            half = _fit_thresholds_once(
                probabilities[fit_on], targets[fit_on], fixed, min_positives, scope, shrinkage, grid
            )
            tuned = post_micro_f1(probabilities[score_on] >= half, gold[score_on])
            untuned = post_micro_f1(probabilities[score_on] >= fixed, gold[score_on])
            gains.append(float(tuned - untuned))
        info["held_out_gain"] = round(sum(gains) / len(gains), 6)
        info["confirmed"] = info["held_out_gain"] > 0
        if not info["confirmed"]:
            thresholds = torch.full_like(thresholds, fixed)
    return thresholds, info


def _fit_thresholds_once(probabilities, targets, fixed, min_positives, scope, shrinkage, grid) -> torch.Tensor:
    own = tune_thresholds(probabilities, targets, fixed, min_positives, grid)
    if scope == "own":
        return own
    values = torch.tensor(grid, dtype=probabilities.dtype)
    gold = targets > 0.5
    chosen = probabilities.unsqueeze(0) >= values.view(-1, 1, 1, 1)  # [G, N, V, C]
    shared = _pick(post_micro_f1(chosen, gold.unsqueeze(0).expand_as(chosen)), values, fixed)
    if scope == "shared":
        return torch.full_like(own, float(shared))
    positives = gold.sum(0).double()
    weight = positives / (positives + shrinkage) if shrinkage > 0 else torch.ones_like(positives)
    weight = torch.where(positives >= min_positives, weight, torch.zeros_like(weight)).to(own.dtype)
    return shared + weight * (own - shared)

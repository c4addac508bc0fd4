"""Decision rules tuned on dev: a threshold per (view, label) for MVML, an O bias per decoder for MVMD.

A fixed rule (τ = 0.7 for every label; no O bias) suits labels of average frequency; a rare label whose
probabilities never reach 0.7, or a decoder that floods the posts with short spans, loses F1 that one
number per label (or decoder) picked on the fold's dev set wins back. Each number maximises *that* label's
(decoder's) own dev F1 over a small grid; a label with fewer than ``min_positives`` gold positives on dev
keeps the fixed rule, because a threshold fitted to one or two posts is noise. Ties go to the value
closest to the fixed rule, so tuning never moves a decision it has no evidence for.

Functions here take tensors only; the models (``models/mvml.py``, ``models/mvmd.py``) collect the dev
outputs and store the result in a buffer that is saved with the weights.
"""

from __future__ import annotations

import torch

from models.crf import B, BatchedBIOCRF, O

THRESHOLD_GRID = tuple(round(0.05 * step, 2) for step in range(1, 20))  # 0.05 … 0.95
O_BIAS_GRID = tuple(0.5 * step for step in range(-8, 9))  # −4 … 4


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
    precision_sum = _span_overlap_sums(predicted, gold).sum(0)
    recall_sum = _span_overlap_sums(gold, predicted).sum(0)
    num_predicted = (predicted == B).sum((0, 2)).double()
    num_gold = (gold == B).sum((0, 2)).double()
    precision = torch.where(
        num_predicted > 0, precision_sum / num_predicted.clamp(min=1), torch.zeros_like(num_predicted)
    )
    recall = torch.where(num_gold > 0, recall_sum / num_gold.clamp(min=1), torch.zeros_like(num_gold))
    total = precision + recall
    return torch.where(total > 0, 2 * precision * recall / total.clamp(min=1e-12), torch.zeros_like(total))


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

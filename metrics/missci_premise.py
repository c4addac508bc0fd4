"""Premise metrics of Missci: pick the gold premise each prediction is judged against, then score the pairs.

Matching (official rule): walk the ranked predictions; the first whose class is among the R_i's gold classes
is paired with that class's gold premise. Without such a prediction, the (gold, predicted) pair with the
highest SBERT cosine similarity is used (first index on ties, gold-major order).
Scoring: METEOR, BERTScore F1, NLI-A, NLI-S, each the mean over R_i. A metric whose model cannot be loaded
is reported in ``unavailable`` with the reason, never as a number; ``models`` says what produced each score.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from common.errors import UserError

PAPER_MODELS = {
    "sbert_model": "sentence-transformers/all-mpnet-base-v2",
    "bertscore_model": "microsoft/deberta-xlarge-mnli",
    "nli_model": "google/t5_xxl_true_nli_mixture",
}

Pair = tuple[str, str]  # (class, premise)
Embedder = Callable[[Sequence[str]], "object"]


@dataclass(frozen=True)
class MatchedPair:
    gold_class: str
    gold_premise: str
    predicted_class: str
    predicted_premise: str
    matched_by_class: bool


@dataclass(frozen=True)
class PremiseMetricConfig:
    """Which premise metrics to compute and with which models (packaged, offline defaults)."""

    meteor: bool = True
    bertscore_model: str | None = "minilm"
    bertscore_layers: int | None = None
    nli_model: str | None = PAPER_MODELS["nli_model"]
    sbert_model: str = "minilm"

    @classmethod
    def paper(cls) -> PremiseMetricConfig:
        return cls(**PAPER_MODELS)


def match_by_class(gold: Sequence[Pair], predicted: Sequence[Pair]) -> MatchedPair | None:
    gold_by_class: dict[str, str] = {}
    for cls, premise in gold:
        gold_by_class.setdefault(cls, premise)
    for cls, premise in predicted:
        if cls in gold_by_class:
            return MatchedPair(cls, gold_by_class[cls], cls, premise, True)
    return None


def match_by_similarity(gold: Sequence[Pair], predicted: Sequence[Pair], vectors: dict[str, object]) -> MatchedPair:
    """Pair with the highest cosine similarity; ``vectors`` maps every premise text to its unit vector."""
    import torch

    predicted = list(predicted) or [("Other", "")]
    gold_vectors = torch.stack([vectors[p] for _, p in gold])
    pred_vectors = torch.stack([vectors[p] for _, p in predicted])
    similarity = gold_vectors @ pred_vectors.T
    g, p = torch.nonzero(similarity == similarity.max())[0].tolist()  # row-major: first gold, then prediction
    return MatchedPair(gold[g][0], gold[g][1], predicted[p][0], predicted[p][1], False)


def unit_vectors(texts: Sequence[str], embed: Embedder) -> dict[str, object]:
    """Embed each distinct text once (one batched call) and L2-normalise."""
    import torch

    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return {}
    matrix = torch.nn.functional.normalize(torch.as_tensor(embed(distinct)).float().cpu(), dim=-1)
    return dict(zip(distinct, matrix))


def match_premises(items: Sequence[tuple[Sequence[Pair], Sequence[Pair]]], embed: Embedder | None) -> list[MatchedPair]:
    """One ``MatchedPair`` per (gold pairs, ranked predicted pairs); ``embed`` is needed only for fallbacks."""
    matches = [match_by_class(gold, predicted) for gold, predicted in items]
    pending = [i for i, m in enumerate(matches) if m is None]
    if pending:
        if embed is None:
            raise UserError(
                "premise matching needs an SBERT model, which is unavailable.",
                fix="pass a loadable --sbert-model (e.g. 'minilm').",
            )
        texts = [p for i in pending for _, p in list(items[i][0]) + (list(items[i][1]) or [("Other", "")])]
        vectors = unit_vectors(texts, embed)
        for i in pending:
            matches[i] = match_by_similarity(items[i][0], items[i][1], vectors)
    return matches


@functools.lru_cache(maxsize=4)
def sbert_embedder(model: str) -> Embedder:
    from sentence_transformers import SentenceTransformer

    from common.model_availability import ensure_model_available

    encoder = SentenceTransformer(ensure_model_available(model, "SBERT model"), device="cpu")
    return lambda texts: encoder.encode(list(texts), convert_to_tensor=True, show_progress_bar=False, batch_size=64)


@functools.lru_cache(maxsize=4)
def _meteor():
    from metrics.premise_meteor import MeteorScorer

    return MeteorScorer()


@functools.lru_cache(maxsize=4)
def _bertscore(model: str, layers: int | None):
    from metrics.premise_bertscore import BertScoreScorer

    return BertScoreScorer(model, layers)


@functools.lru_cache(maxsize=2)
def _nli(model: str):
    from metrics.premise_nli import T5EntailmentScorer

    return T5EntailmentScorer(model)


def _load(builder, *args):
    """(scorer, None) or (None, reason) — a model that cannot be loaded makes its metric unavailable."""
    try:
        return builder(*args), None
    except UserError as err:
        return None, str(err)
    except (OSError, ValueError, ImportError, RuntimeError) as err:
        return None, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def premise_metrics(
    items: Sequence[tuple[Sequence[Pair], Sequence[Pair]]], config: PremiseMetricConfig
) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """Return ``(metrics, models, unavailable)`` for the given (gold, predicted) pair lists."""
    models: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    wanted = (
        (["meteor"] if config.meteor else [])
        + (["bertscore"] if config.bertscore_model else [])
        + (["nli_a", "nli_s"] if config.nli_model else [])
    )
    if not wanted:
        return {}, models, unavailable
    embed, reason = _load(sbert_embedder, config.sbert_model)
    try:
        matches = match_premises(items, embed)
    except UserError as err:
        return {}, models, {name: f"{err} ({reason})" for name in wanted}
    if embed is not None and not all(m.matched_by_class for m in matches):
        models["sbert_matching"] = config.sbert_model
    generated = [m.predicted_premise for m in matches]
    references = [m.gold_premise for m in matches]
    metrics: dict[str, float] = {"premise_class_matched": _mean([float(m.matched_by_class) for m in matches])}
    if config.meteor:
        scorer, reason = _load(_meteor)
        if scorer:
            metrics["meteor"], models["meteor"] = _mean(scorer.score(generated, references)), scorer.model_name
        else:
            unavailable["meteor"] = reason
    if config.bertscore_model:
        scorer, reason = _load(_bertscore, config.bertscore_model, config.bertscore_layers)
        if scorer:
            metrics["bertscore"] = _mean(scorer.score(generated, references))
            models["bertscore"] = config.bertscore_model
        else:
            unavailable["bertscore"] = reason
    if config.nli_model:
        scorer, reason = _load(_nli, config.nli_model)
        if scorer:
            nli_a, nli_s = scorer.score_pairs(generated, references)
            metrics["nli_a"], metrics["nli_s"] = _mean(nli_a), _mean(nli_s)
            models["nli_a"] = models["nli_s"] = config.nli_model
        else:
            unavailable["nli_a"] = unavailable["nli_s"] = reason
    return metrics, models, unavailable

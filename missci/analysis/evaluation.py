"""Scores of a Missci prediction file against gold: P@k, Arg@k, micro-F1, per-class F1, premise metrics, consistency."""

from __future__ import annotations

from metrics.missci_premise import PremiseMetricConfig, premise_metrics
from metrics.missci_ranking import ranking_metrics
from missci.dataset.prediction_file import FallacyPrediction, align_with_gold, ranked_rows
from missci.dataset.reader import Argument


def consistency(pairs) -> float | None:
    """Share of R_i whose re-classified own premise keeps the model's top-1 class (None if not recorded)."""
    recorded = [
        (pred.predictions[0].fallacy_class, pred.reclassified[0])
        for _, _, pred in pairs
        if pred.reclassified and pred.predictions
    ]
    return sum(a == b for a, b in recorded) / len(recorded) if recorded else None


def evaluate(
    arguments: list[Argument],
    predictions: list[FallacyPrediction],
    max_k: int = 6,
    premises: PremiseMetricConfig | None = PremiseMetricConfig(),
    source: str = "<predictions>",
    only_predicted: bool = False,
) -> dict:
    """``{"metrics": flat floats, "models": {...}, "unavailable": {...}, "counts": {...}}``."""
    pairs = align_with_gold(arguments, predictions, source, only_predicted)
    metrics = ranking_metrics(ranked_rows(pairs), max_k)
    models: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    if premises is not None:
        items = [
            (
                [(g.fallacy_class, g.premise) for g in fallacy.interchangeable],
                [(p.fallacy_class, p.premise) for p in pred.predictions],
            )
            for _, fallacy, pred in pairs
        ]
        premise_scores, models, unavailable = premise_metrics(items, premises)
        metrics.update(premise_scores)
    value = consistency(pairs)
    if value is not None:
        metrics["consistency"] = value
    counts = {
        "arguments": len({a.id for a, _, _ in pairs}),
        "fallacies": len(pairs),
        "unparsed_lines": sum(p.unparsed_lines for _, _, p in pairs),
    }
    return {"metrics": metrics, "models": models, "unavailable": unavailable, "counts": counts}

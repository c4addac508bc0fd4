"""Where a Missci reconstruction run goes wrong: class confusions, per-class F1, and how close the matched
premises come to gold. ``notebooks/missci_errors.ipynb`` draws these tables; they live here so that they are
tested code, not notebook cells.

Works on any results folder with predictions: a zero-shot run (``predictions-<split>.jsonl``) or a LoRA run
(``fold<k>/predictions.jsonl``, every held-out argument once).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.errors import UserError
from metrics.missci_classification import confusion, per_class_scores
from metrics.missci_premise import MatchedPair, match_premises, sbert_embedder
from metrics.missci_ranking import RankedRow, per_class_f1
from missci.dataset.classes import CLASS_NAMES, OTHER
from missci.dataset.prediction_file import FallacyPrediction, read_predictions
from missci.dataset.reader import Argument, Fallacy

NO_ANSWER = "(no answer)"
LABELS: tuple[str, ...] = CLASS_NAMES + (OTHER, NO_ANSWER)
Scored = tuple[Argument, Fallacy, FallacyPrediction]


def prediction_files(results_dir: str | Path) -> list[Path]:
    results_dir = Path(results_dir)
    files = sorted(results_dir.glob("predictions-*.jsonl")) + sorted(results_dir.glob("fold*/predictions.jsonl"))
    if not files:
        raise UserError(
            "holds no Missci predictions (predictions-<split>.jsonl or fold<k>/predictions.jsonl).",
            path=results_dir,
            fix="point MISSCI_RUN at a results/<name> folder of a missci-gen run.",
        )
    return files


def scored_fallacies(arguments: Sequence[Argument], results_dir: str | Path) -> list[Scored]:
    """(argument, R_i, prediction) for every R_i the run predicted, in data order."""
    by_id = {p.fallacy_id: p for path in prediction_files(results_dir) for p in read_predictions(path)}
    scored = [(a, f, by_id[f.id]) for a in arguments for f in a.fallacies if f.id in by_id]
    unknown = set(by_id) - {f.id for _, f, _ in scored}
    if unknown:
        raise UserError(
            f"{len(unknown)} predicted R_i are not in the data (e.g. {sorted(unknown)[0]}).",
            path=Path(results_dir),
            fix="load the split(s) the run predicted (dev and test for k-fold CV).",
        )
    return scored


def class_pairs(scored: Sequence[Scored], k: int = 1) -> tuple[list[str], list[str]]:
    """(gold, predicted) class per R_i. Top-k: the first of the top ``k`` predicted classes that is a gold class
    counts as a hit (gold = predicted = that class); otherwise gold is the R_i's first gold class and predicted
    the top-1 class (or "(no answer)"). ``k=1`` is the top-1 confusion, ``k>1`` best-of-k."""
    gold, predicted = [], []
    for _, fallacy, prediction in scored:
        ranked = [p.fallacy_class for p in prediction.predictions]
        hit = next((c for c in ranked[:k] if c in fallacy.gold_classes), None)
        gold.append(hit or fallacy.gold_classes[0])
        predicted.append(hit or (ranked[0] if ranked else NO_ANSWER))
    return gold, predicted


def confusion_table(scored: Sequence[Scored], k: int = 1):
    """pandas DataFrame: rows gold class, columns predicted class (the 9 classes, Other, no answer)."""
    import pandas as pd

    gold, predicted = class_pairs(scored, k)
    result = confusion(gold, predicted, LABELS)
    return pd.DataFrame(
        result["matrix"],
        index=pd.Index(result["labels"], name="gold"),
        columns=pd.Index(result["labels"], name="predicted"),
    )


def per_class_table(scored: Sequence[Scored]):
    """pandas DataFrame per gold class: the evaluation's top-1 F1 (multi-label, any interchangeable class is
    gold) next to single-label precision/recall/F1 of the top-1 confusion and the gold support."""
    import pandas as pd

    rows = [RankedRow(a.id, f.gold_classes, tuple(p.fallacy_class for p in pred.predictions)) for a, f, pred in scored]
    ranking_f1 = per_class_f1(rows, 1)
    gold, predicted = class_pairs(scored, 1)
    single = per_class_scores(gold, predicted, CLASS_NAMES)
    frame = pd.DataFrame(
        {
            "f1 (evaluation)": [ranking_f1.get(c, 0.0) for c in CLASS_NAMES],
            "precision": [single[c]["precision"] for c in CLASS_NAMES],
            "recall": [single[c]["recall"] for c in CLASS_NAMES],
            "f1": [single[c]["f1"] for c in CLASS_NAMES],
            "support": [single[c]["support"] for c in CLASS_NAMES],
        },
        index=list(CLASS_NAMES),
    )
    frame.index.name = "class"
    return frame


def premise_table(scored: Sequence[Scored], sbert_model: str = "minilm", bertscore_model: str | None = "minilm"):
    """pandas DataFrame, one row per R_i: the premise matched as the evaluation matches it (first predicted
    class that is gold, else the most similar pair by SBERT) with its METEOR and BERTScore against gold."""
    import pandas as pd

    from metrics.premise_bertscore import BertScoreScorer
    from metrics.premise_meteor import MeteorScorer

    items = [
        (
            [(g.fallacy_class, g.premise) for g in f.interchangeable],
            [(p.fallacy_class, p.premise) for p in pred.predictions],
        )
        for _, f, pred in scored
    ]
    matches: list[MatchedPair] = match_premises(items, sbert_embedder(sbert_model))
    generated = [m.predicted_premise for m in matches]
    references = [m.gold_premise for m in matches]
    frame = pd.DataFrame(
        {
            "argument": [a.id for a, _, _ in scored],
            "fallacy": [f.id for _, f, _ in scored],
            "gold_class": [m.gold_class for m in matches],
            "predicted_class": [m.predicted_class for m in matches],
            "matched_by_class": [m.matched_by_class for m in matches],
            "gold_premise": references,
            "predicted_premise": generated,
            "meteor": MeteorScorer().score(generated, references),
        }
    )
    if bertscore_model:
        frame["bertscore"] = BertScoreScorer(bertscore_model).score(generated, references)
    return frame


def worst_matches(premises, n: int = 10, by: str = "meteor"):
    """The ``n`` R_i whose matched premise is furthest from gold (lowest ``by``), gold next to prediction."""
    columns = ["argument", "fallacy", "gold_class", "predicted_class", by, "gold_premise", "predicted_premise"]
    return premises.sort_values([by, "fallacy"], kind="stable").head(n)[columns].reset_index(drop=True)

import pytest
import torch

from metrics.missci_ranking import (
    RankedRow,
    argument_at_k,
    micro_f1,
    per_class_f1,
    precision_at_k,
    ranking_metrics,
)
from metrics.missci_ranking_metric import MissciRankingMetric

HG, FE, FX, CO = "Hasty Generalization", "False Equivalence", "Fallacy of Exclusion", "Causal Oversimplification"

# Three arguments, five R_i (hand-computed below).
ROWS = [
    RankedRow("a", (HG,), (HG, FE)),  # hit@1
    RankedRow("a", (FE, FX), (CO, FX)),  # hit@2
    RankedRow("b", (FX,), ("Other", CO)),  # miss
    RankedRow("b", (CO,), (FE, "Other", CO)),  # hit@3
    RankedRow("c", (FE,), (HG,)),  # miss
]


def test_precision_and_argument_at_k():
    assert precision_at_k(ROWS, 1) == pytest.approx(1 / 5)
    assert precision_at_k(ROWS, 2) == pytest.approx(2 / 5)
    assert precision_at_k(ROWS, 3) == pytest.approx(3 / 5)
    assert argument_at_k(ROWS, 1) == pytest.approx(1 / 3)
    assert argument_at_k(ROWS, 2) == pytest.approx(1 / 3)
    assert argument_at_k(ROWS, 3) == pytest.approx(2 / 3)


def test_micro_f1_ignores_classes_outside_gold():
    # labels seen in gold: HG, FE, FX, CO. Top-1: HG (tp HG), CO (fp CO; fn FE, FX), Other (ignored; fn FX),
    # FE (fp FE; fn CO), HG (fp HG; fn FE)  -> tp 1, fp 3, fn 5 -> F1 = 2/(2+3+5) = 0.2
    assert micro_f1(ROWS, 1) == pytest.approx(0.2)
    per_class = per_class_f1(ROWS, 1)
    assert per_class[HG] == pytest.approx(2 / (2 + 1 + 0))  # tp1 fp1 fn0
    assert per_class[FX] == 0.0 and set(per_class) == {HG, FE, FX, CO}
    # a predicted class never seen in gold does not count as a false positive
    assert micro_f1([RankedRow("a", (HG,), ("Ambiguity",)), RankedRow("b", (HG,), (HG,))]) == pytest.approx(2 / 3)


def test_ranking_metrics_keys_and_torchmetrics_wrapper_agree():
    result = ranking_metrics(ROWS, max_k=6)
    assert {f"p@{k}" for k in range(1, 7)} | {f"arg@{k}" for k in range(1, 7)} <= set(result)
    assert result["p@6"] == pytest.approx(3 / 5) and result["f1_micro"] == pytest.approx(0.2)
    names = [HG, FE, FX, CO]
    metric = MissciRankingMetric(names)
    arg_index = {"a": 0, "b": 1, "c": 2}
    for row in ROWS:
        ranks = [names.index(c) if c in names else -1 for c in row.predicted] + [-1] * (3 - len(row.predicted))
        metric.update(
            torch.tensor([arg_index[row.argument_id]]),
            torch.tensor([[c in row.gold for c in names]]),
            torch.tensor([ranks]),
        )
    assert metric.compute() == pytest.approx(result)

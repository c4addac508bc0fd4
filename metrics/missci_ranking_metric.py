"""The torchmetrics face of the Missci ranking metrics (``metrics.missci_ranking``), for validation loops.

A module of its own so that ``python -m missci.evaluate`` (which needs only the plain functions) never imports
torch; the figures come from the same ``ranking_metrics``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics import Metric

from metrics.missci_ranking import RankedRow, ranking_metrics


class MissciRankingMetric(Metric):
    """Accumulates ranked class predictions as tensors and computes ``ranking_metrics`` on them.

    ``update(argument_index, gold_multi_hot, predicted_ranks)``: argument indices (N,), gold classes as a
    multi-hot (N, C) tensor over ``class_names``, predicted class indices (N, K) in rank order (-1 = Other).
    """

    full_state_update = False

    def __init__(self, class_names: Sequence[str], max_k: int = 6, **kwargs):
        super().__init__(**kwargs)
        self.class_names, self.max_k = list(class_names), max_k
        self.add_state("argument_index", default=[], dist_reduce_fx="cat")
        self.add_state("gold", default=[], dist_reduce_fx="cat")
        self.add_state("predicted", default=[], dist_reduce_fx="cat")

    def update(self, argument_index: torch.Tensor, gold_multi_hot: torch.Tensor, predicted_ranks: torch.Tensor):
        self.argument_index.append(argument_index.long())
        self.gold.append(gold_multi_hot.bool())
        self.predicted.append(predicted_ranks.long())

    def compute(self) -> dict[str, float]:
        def cat(state):
            return torch.cat(state) if isinstance(state, list) else state

        rows = []
        for arg, gold, ranks in zip(
            cat(self.argument_index).tolist(), cat(self.gold).tolist(), cat(self.predicted).tolist()
        ):
            rows.append(
                RankedRow(
                    argument_id=str(arg),
                    gold=tuple(n for n, g in zip(self.class_names, gold) if g),
                    predicted=tuple(self.class_names[r] if r >= 0 else "Other" for r in ranks),
                )
            )
        return ranking_metrics(rows, self.max_k)

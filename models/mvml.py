"""MVML: multi-view, multi-label post classification (post-c, post-f).

One multi-label head per annotator view on the post's sentence vector (``models/heads.py``): sigmoid
scores, binary cross-entropy, and a label is predicted when its probability reaches ``threshold``
(τ = 0.7 in the paper).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

import torch

from models.base import FallacyModule
from models.encoder import ChunkedEncoder
from models.heads import MultiLabelHead


class MVML(FallacyModule):
    """Post model. ``labels``: the grain's label strings (sorted); ``num_views``: annotators."""

    unit_name = "labels"

    def __init__(self, encoder: ChunkedEncoder | Mapping | None = None, num_views: int = 2,
                 labels: Sequence[str] = (), optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 scheduler: Callable[..., Any] | None = None, threshold: float = 0.7,
                 discriminative_decay: float | None = None, gradual_unfreezing: bool = False,
                 head_lr: float | None = None, val_metric=None):
        super().__init__(encoder, optimizer, scheduler, discriminative_decay, gradual_unfreezing, head_lr, val_metric)
        labels = [str(label) for label in labels]
        if not labels:
            raise ValueError("MVML needs the task's labels")
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold}")
        self.save_hyperparameters(ignore=["encoder", "optimizer", "scheduler", "val_metric"])
        self.record_encoder_hparams()
        self.labels = labels
        self.num_views = num_views
        self.threshold = threshold
        self.head = MultiLabelHead(self.encoder.hidden_size, num_views, len(labels))

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Logits ``[B, V, C]``."""
        _, sentence = self.encoder(batch["input_ids"], batch["attention_mask"])
        return self.head(sentence)

    def training_step(self, batch, batch_idx):
        loss = self.head.loss(self(batch), batch["labels"])
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["input_ids"].shape[0])
        return loss

    def _evaluate(self, batch, split: str) -> None:
        if "labels" not in batch:  # unlabelled data: nothing to score
            return
        logits = self(batch)
        size = batch["input_ids"].shape[0]
        self.log(f"{split}/loss", self.head.loss(logits, batch["labels"]), batch_size=size, sync_dist=True)
        predicted = self.label_sets(torch.sigmoid(logits) >= self.threshold)
        gold = self.label_sets(batch["labels"] > 0.5)
        self.count_predictions(split, sum(len(v) for post in predicted for v in post),
                               sum(len(v) for post in gold for v in post))
        metric = self.metric_for(split)
        if metric is not None:
            metric.update(predicted, gold)

    def label_sets(self, chosen: torch.Tensor) -> list[list[tuple[str, ...]]]:
        """Label strings per post per view (sorted, as the files list them) from booleans ``[B, V, C]``."""
        rows = chosen.cpu().tolist()
        return [[tuple(label for label, on in zip(self.labels, view) if on) for view in post] for post in rows]

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        probabilities = torch.sigmoid(self(batch))
        return {"post_index": batch["post_index"].cpu(), "probabilities": probabilities.cpu(),
                "predicted": (probabilities >= self.threshold).cpu()}

"""MVMD: multi-view, multi-decoder span detection (span-c, span-f).

One BIO decoder per (annotator view, label): decoder ``d = view * C + c``. Each word is represented
by its first subword's vector; a linear layer gives every decoder its O/B/I scores and a CRF
restricted to valid BIO transitions decodes them (``models/heads.py``, ``models/crf.py``).

Why the defaults differ from a plain "1e-4 for everything" (faina-metrics.md: with small encoders the
40-decoder recipe collapses to all-O): see ``head_lr`` and ``o_bias`` below and ``docs`` in the report.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

import torch

from models.base import FallacyModule
from models.bio import tags_to_spans
from models.encoder import ChunkedEncoder
from models.heads import BIODecoders


def gather_words(subwords: torch.Tensor, word_starts: torch.Tensor) -> torch.Tensor:
    """Each word's vector is its first subword's: ``[B, T, H]`` × ``[B, W]`` → ``[B, W, H]``."""
    index = word_starts.clamp(min=0, max=max(subwords.shape[1] - 1, 0))
    return subwords.gather(1, index.unsqueeze(-1).expand(-1, -1, subwords.shape[-1]))


class MVMD(FallacyModule):
    """Span model. ``labels``: the grain's label strings (sorted); ``num_views``: annotators.

    ``loss_weights``: one λ per decoder (default all 1). ``head_lr``: learning rate of the decoders
    (``None``: the optimiser's). ``o_bias``: initial emission bias of ``O`` over ``B``/``I``.
    """

    unit_name = "spans"

    def __init__(self, encoder: ChunkedEncoder | Mapping | None = None, num_views: int = 2,
                 labels: Sequence[str] = (), optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 scheduler: Callable[..., Any] | None = None, loss_weights: Sequence[float] | None = None,
                 discriminative_decay: float | None = None, gradual_unfreezing: bool = False,
                 head_lr: float | None = 1e-3, o_bias: float = 0.0, val_metric=None):
        super().__init__(encoder, optimizer, scheduler, discriminative_decay, gradual_unfreezing, head_lr, val_metric)
        labels = [str(label) for label in labels]
        if not labels:
            raise ValueError("MVMD needs the task's labels")
        self.save_hyperparameters(ignore=["encoder", "optimizer", "scheduler", "val_metric"])
        self.record_encoder_hparams()
        self.labels = labels
        self.num_views = num_views
        self.decoders = BIODecoders(self.encoder.hidden_size, num_views * len(labels), loss_weights, o_bias)

    def emissions(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        subwords, _ = self.encoder(batch["input_ids"], batch["attention_mask"])
        return self.decoders.emissions(gather_words(subwords, batch["word_starts"]))

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Decoded tags ``[B, D, W]``."""
        return self.decoders.decode(self.emissions(batch), batch["word_mask"])

    def training_step(self, batch, batch_idx):
        loss = self.decoders.loss(self.emissions(batch), batch["tags"], batch["word_mask"])
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["input_ids"].shape[0])
        return loss

    def validation_step(self, batch, batch_idx):
        self._evaluate(batch, "val")

    def test_step(self, batch, batch_idx):
        self._evaluate(batch, "test")

    def _evaluate(self, batch, split: str) -> None:
        if "tags" not in batch:  # unlabelled data: nothing to score
            return
        emissions = self.emissions(batch)
        mask = batch["word_mask"]
        size = batch["input_ids"].shape[0]
        loss = self.decoders.loss(emissions, batch["tags"], mask)
        self.log(f"{split}/loss", loss, batch_size=size, sync_dist=True)
        predicted = self.batch_spans(self.decoders.decode(emissions, mask), mask)
        gold = self.batch_spans(batch["tags"], mask)
        self.count_predictions(split, sum(len(v) for post in predicted for v in post),
                               sum(len(v) for post in gold for v in post))
        metric = self.metric_for(split)
        if metric is not None:
            metric.update(predicted, gold)

    def batch_spans(self, tags: torch.Tensor, mask: torch.Tensor):
        """Spans per post per view (``faina.records.Span``, 1-based tokens) from tags ``[B, D, W]``."""
        tags, lengths = tags.cpu(), mask.sum(-1).tolist()
        return [tags_to_spans(tags[i], lengths[i], self.num_views, self.labels) for i in range(len(lengths))]

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        tags = self(batch)
        return {"post_index": batch["post_index"].cpu(), "tags": tags.cpu(),
                "num_words": batch["word_mask"].sum(-1).cpu()}

"""A Lightning module small enough for callback tests (importable as ``helpers.tiny_regression``): one linear layer
fitted by SGD to ``(x, y)`` batches, and an integer buffer counting its training steps (a state that is not a
weight, which callbacks must carry without averaging it)."""

from __future__ import annotations

import lightning.pytorch as pl
import torch


class TinyRegression(pl.LightningModule):
    def __init__(self, features: int = 3):
        super().__init__()
        self.layer = torch.nn.Linear(features, 1)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def training_step(self, batch, batch_idx):
        self.steps += 1
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class ScoredRegression(TinyRegression):
    """Logs a dev score per epoch from a fixed list (``val/f1``), so the best epoch is known in advance, and keeps a
    copy of its weights at the end of each epoch."""

    def __init__(self, scores):
        super().__init__(features=2)
        self.scores = list(scores)
        self.weights_at_epoch: dict[int, dict[str, torch.Tensor]] = {}

    def on_train_epoch_end(self):
        self.log("val/f1", float(self.scores[self.current_epoch]))
        self.weights_at_epoch[self.current_epoch] = {k: v.clone() for k, v in self.state_dict().items()}

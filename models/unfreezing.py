"""Gradual unfreezing (ULMFiT, a MaChAmp option) as a Lightning callback.

Epoch 0 trains only the task heads; each further epoch makes one more encoder layer group trainable,
from the top layer down to the embeddings. Training the fresh heads first keeps their large early
gradients from disturbing the pretrained lower layers. The state depends only on the epoch number,
so a resumed run freezes exactly as the uninterrupted one would.
"""

from __future__ import annotations

import lightning as L


class GradualUnfreezing(L.Callback):
    """Needs a module with ``encoder_layer_groups()`` (bottom to top lists of parameters)."""

    def __init__(self, groups_per_epoch: int = 1):
        self.groups_per_epoch = groups_per_epoch

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        groups = pl_module.encoder_layer_groups()
        trainable = min(len(groups), trainer.current_epoch * self.groups_per_epoch)
        first_trainable = len(groups) - trainable
        for index, parameters in enumerate(groups):
            for parameter in parameters:
                parameter.requires_grad_(index >= first_trainable)

"""Task heads on top of the shared encoder: post labels (MVML) and BIO span decoders (MVMD).

Both heads realise "one small decoder per annotator view (and label)" as a single wide linear layer,
so adding views or labels changes a shape, not the number of modules or kernel launches.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from models.crf import NUM_TAGS, BatchedBIOCRF


class MultiLabelHead(nn.Module):
    """One multi-label classifier per view over the sentence vector: logits ``[B, V, C]``."""

    def __init__(self, hidden_size: int, num_views: int, num_labels: int):
        super().__init__()
        self.num_views = num_views
        self.num_labels = num_labels
        self.projection = nn.Linear(hidden_size, num_views * num_labels)

    def forward(self, sentence: torch.Tensor) -> torch.Tensor:
        return self.projection(sentence).view(-1, self.num_views, self.num_labels)

    @staticmethod
    def loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Binary cross-entropy averaged over posts, views and labels."""
        return F.binary_cross_entropy_with_logits(logits, targets.to(logits.dtype))


class BIODecoders(nn.Module):
    """``D`` BIO decoders (one per view and label): one projection to ``D × 3`` and a batched CRF.

    ``loss = Σ_d λ_d · mean over posts of NLL_d`` (MaChAmp: every task loss weight 1).
    ``o_bias`` initialises each decoder's emission score of ``O`` above ``B``/``I``; 0 keeps PyTorch's
    default initialisation (see ``models/mvmd.py`` for why the default differs).
    """

    def __init__(
        self, hidden_size: int, num_decoders: int, loss_weights: Sequence[float] | None = None, o_bias: float = 0.0
    ):
        super().__init__()
        self.num_decoders = num_decoders
        self.projection = nn.Linear(hidden_size, num_decoders * NUM_TAGS)
        self.crf = BatchedBIOCRF(num_decoders)
        weights = (
            torch.ones(num_decoders) if loss_weights is None else torch.tensor(list(loss_weights), dtype=torch.float)
        )
        if weights.shape != (num_decoders,):
            raise ValueError(f"loss_weights needs {num_decoders} values (one per decoder), got {weights.numel()}")
        self.register_buffer("loss_weights", weights)
        if o_bias:
            with torch.no_grad():
                self.projection.bias.view(num_decoders, NUM_TAGS)[:, 0] += o_bias

    def emissions(self, words: torch.Tensor) -> torch.Tensor:
        """Word vectors ``[B, W, H]`` → emission scores ``[B, D, W, 3]``."""
        batch, length, _ = words.shape
        return self.projection(words).view(batch, length, self.num_decoders, NUM_TAGS).transpose(1, 2)

    def loss(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # the CRF's sums of scores run in fp32 even under bf16-mixed autocast (a no-op in fp32)
        nll = self.crf.neg_log_likelihood(emissions.float(), tags, mask)  # [B, D]
        return (nll.mean(0) * self.loss_weights).sum()

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.crf.viterbi(emissions.float(), mask)

    def inside_probabilities(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each word's CRF marginal probability of lying inside a span, per decoder: ``[B, D, W]``."""
        return self.crf.inside_probabilities(emissions.float(), mask.bool())

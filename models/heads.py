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
    def loss(logits: torch.Tensor, targets: torch.Tensor, annotated: torch.Tensor | None = None) -> torch.Tensor:
        """Binary cross-entropy averaged over posts, views and labels.

        ``annotated`` ``[B, V]`` (bool) marks the (post, view) pairs whose view annotated the post; the others
        take no part in the loss (a missing annotation is not "no label"), and the mean runs over the rest.
        """
        if annotated is None or bool(annotated.all()):
            return F.binary_cross_entropy_with_logits(logits, targets.to(logits.dtype))
        weight = annotated.to(logits.dtype).unsqueeze(-1).expand_as(logits)
        terms = F.binary_cross_entropy_with_logits(logits, targets.to(logits.dtype), reduction="none")
        return (terms * weight).sum() / weight.sum().clamp(min=1.0)

    @staticmethod
    def soft_loss(logits: torch.Tensor, targets: torch.Tensor, annotated: torch.Tensor | None = None) -> torch.Tensor:
        """``data.targets=soft``: BCE of one head's logits ``[B, 1, C]`` against the share of the annotated views
        of 0/1 targets ``[B, V, C]`` that give each label, averaged over labels and the posts that at least one
        view annotated. One head then models the distribution of the annotators, not one of them."""
        shares, keep = view_shares(targets.to(logits.dtype), annotated)
        terms = F.binary_cross_entropy_with_logits(logits[:, 0], shares, reduction="none")  # [B, C]
        weight = keep.to(logits.dtype).unsqueeze(-1).expand_as(terms)
        return (terms * weight).sum() / weight.sum().clamp(min=1.0)


def view_shares(targets: torch.Tensor, annotated: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per post and label the share of annotated views with the label, ``[B, C]``, and which posts have any
    annotated view ``[B]`` (the share of the others is 0 and must be ignored)."""
    if annotated is None:
        annotated = torch.ones(targets.shape[:2], dtype=torch.bool, device=targets.device)
    weight = annotated.to(targets.dtype).unsqueeze(-1)  # [B, V, 1]
    count = weight.sum(1)  # [B, 1]
    return (targets * weight).sum(1) / count.clamp(min=1.0), count.squeeze(-1) > 0


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

    def loss(
        self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, annotated: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``Σ_d λ_d · mean over posts of NLL_d``. ``annotated`` ``[B, V]``: the (post, view) pairs whose view
        annotated the post; a decoder's mean runs over the posts its view annotated (the others, a missing
        annotation, are not "all O"), so masking a view on a post is the same as leaving that pair out."""
        # the CRF's sums of scores run in fp32 even under bf16-mixed autocast (a no-op in fp32)
        nll = self.crf.neg_log_likelihood(emissions.float(), tags, mask)  # [B, D]
        if annotated is None or bool(annotated.all()):
            return (nll.mean(0) * self.loss_weights).sum()
        per_view = self.num_decoders // annotated.shape[1]
        weight = annotated.to(nll.dtype).repeat_interleave(per_view, dim=1)  # [B, D]
        means = (nll * weight).sum(0) / weight.sum(0).clamp(min=1.0)
        return (means * self.loss_weights).sum()

    def soft_loss(
        self,
        emissions: torch.Tensor,
        tags: torch.Tensor,
        mask: torch.Tensor,
        annotated: torch.Tensor | None = None,
        view_weights: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``data.targets=soft``: one decoder set (``D = C`` decoders, emissions ``[B, C, W, 3]``) and the tags of
        every view ``[B, V·C, W]`` as repeated observations of the same CRFs: ``Σ_v w_v · loss(tags of view v)``,
        each view's term masked to the posts it annotated (``w_v``: ``view_weights``, default 1)."""
        num_views = tags.shape[1] // self.num_decoders
        if tags.shape[1] != num_views * self.num_decoders:
            raise ValueError(f"tags have {tags.shape[1]} rows, not a multiple of the {self.num_decoders} decoders")
        if view_weights is not None and view_weights.numel() != num_views:
            raise ValueError(f"view_weights has {view_weights.numel()} values for {num_views} views")
        total = emissions.new_zeros((), dtype=torch.float32)
        for v in range(num_views):
            view_tags = tags[:, v * self.num_decoders : (v + 1) * self.num_decoders]
            view_annotated = None if annotated is None else annotated[:, v : v + 1]
            term = self.loss(emissions, view_tags, mask, view_annotated)
            total = total + (term if view_weights is None else view_weights[v] * term)
        return total

    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.crf.viterbi(emissions.float(), mask)

    def inside_probabilities(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each word's CRF marginal probability of lying inside a span, per decoder: ``[B, D, W]``."""
        return self.crf.inside_probabilities(emissions.float(), mask.bool())

"""A linear-chain CRF for many independent BIO decoders at once.

MVMD span-f has one decoder per (view, label): 40 small CRFs over the same words. Running them as 40
modules would launch 40 tiny kernels per time step; here every tensor carries a decoder axis ``D`` and
one forward pass (a loop over words only) serves them all.

Tags are ``O=0, B=1, I=2``. The transitions that BIO forbids (``O -> I`` and a sequence starting with
``I``) are not learned: their scores are replaced by a large negative constant on every use, so they
never win in Viterbi, take no probability mass in the partition function and receive no gradient.
A large finite constant rather than ``-inf`` keeps ``logsumexp`` and its gradient free of NaNs.

``marginals`` gives each word's posterior tag distribution ``p(tag_t | emissions)`` by the forward-backward
recursions in log space: what a span model reports as its probabilities (``docs/soft-labels.md``), rather than a
softmax of the emissions, which ignores the transitions and so disagrees with what Viterbi decodes.
"""

from __future__ import annotations

import torch
from torch import nn

O, B, I = 0, 1, 2
NUM_TAGS = 3
FORBIDDEN = -1.0e4


def allowed_transitions() -> torch.Tensor:
    """``[3, 3]`` bool: ``allowed[prev, next]``; only ``O -> I`` is invalid."""
    allowed = torch.ones(NUM_TAGS, NUM_TAGS, dtype=torch.bool)
    allowed[O, I] = False
    return allowed


def allowed_starts() -> torch.Tensor:
    """``[3]`` bool: a sequence may not start inside a span."""
    allowed = torch.ones(NUM_TAGS, dtype=torch.bool)
    allowed[I] = False
    return allowed


class BatchedBIOCRF(nn.Module):
    """``num_decoders`` independent 3-tag CRFs, evaluated together.

    Shapes: emissions ``[B, D, W, 3]``, tags ``[B, D, W]``, mask ``[B, W]`` (True for real words; the
    real words of a post must come first, as padding does).
    """

    def __init__(self, num_decoders: int):
        super().__init__()
        self.num_decoders = num_decoders
        self.transitions = nn.Parameter(torch.zeros(num_decoders, NUM_TAGS, NUM_TAGS))
        self.start_scores = nn.Parameter(torch.zeros(num_decoders, NUM_TAGS))
        self.end_scores = nn.Parameter(torch.zeros(num_decoders, NUM_TAGS))
        self.register_buffer("_allowed", allowed_transitions(), persistent=False)
        self.register_buffer("_allowed_start", allowed_starts(), persistent=False)

    def constrained(self, decoders: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Transitions ``[D,3,3]``, start ``[D,3]`` and end ``[D,3]`` scores with BIO's rules applied (of the
        decoders ``decoders`` ``[M]`` only, in that order, any repeated, when given)."""
        forbidden = torch.full_like(self.transitions, FORBIDDEN)
        transitions = torch.where(self._allowed, self.transitions, forbidden)
        start = torch.where(self._allowed_start, self.start_scores, torch.full_like(self.start_scores, FORBIDDEN))
        if decoders is None:
            return transitions, start, self.end_scores
        return transitions[decoders], start[decoders], self.end_scores[decoders]

    def neg_log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``-log p(tags | emissions)`` per post and decoder, ``[B, D]``; 0 for a post without words."""
        mask = mask.bool()
        return self._log_partition(emissions, mask) - self._score(emissions, tags, mask)

    def _score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        transitions, start, end = self.constrained()
        batch, decoders, words, _ = emissions.shape
        if words == 0:
            return emissions.new_zeros(batch, decoders)
        tags = tags.long()
        step_mask = mask[:, None, :].to(emissions.dtype)  # [B, 1, W]
        emitted = emissions.gather(-1, tags.unsqueeze(-1)).squeeze(-1)  # [B, D, W]
        score = (emitted * step_mask).sum(-1)
        score = (
            score + start.unsqueeze(0).expand(batch, -1, -1).gather(-1, tags[:, :, :1]).squeeze(-1) * step_mask[:, :, 0]
        )
        if words > 1:
            pair = tags[:, :, :-1] * NUM_TAGS + tags[:, :, 1:]  # [B, D, W-1]
            flat = transitions.reshape(1, decoders, NUM_TAGS * NUM_TAGS).expand(batch, -1, -1)
            score = score + (flat.gather(-1, pair) * step_mask[:, :, 1:]).sum(-1)
        lengths = mask.sum(-1)  # [B]
        last = (lengths - 1).clamp(min=0)[:, None, None].expand(-1, decoders, 1)
        last_tags = tags.gather(-1, last)  # [B, D, 1]
        end_score = end.unsqueeze(0).expand(batch, -1, -1).gather(-1, last_tags).squeeze(-1)
        return score + end_score * (lengths > 0)[:, None].to(emissions.dtype)

    def _log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        transitions, start, end = self.constrained()
        words = emissions.shape[2]
        if words == 0:
            return emissions.new_zeros(emissions.shape[:2])
        alpha = start.unsqueeze(0) + emissions[:, :, 0]  # [B, D, 3]
        for t in range(1, words):
            # [B, D, prev, 1] + [D, prev, next] + [B, D, 1, next] -> logsumexp over prev
            candidate = torch.logsumexp(alpha.unsqueeze(-1) + transitions + emissions[:, :, t].unsqueeze(-2), dim=-2)
            alpha = torch.where(mask[:, t, None, None], candidate, alpha)
        log_z = torch.logsumexp(alpha + end.unsqueeze(0), dim=-1)
        return log_z * (mask.sum(-1) > 0)[:, None].to(emissions.dtype)

    @torch.no_grad()
    def viterbi(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Best tag sequence per post and decoder, ``[B, D, W]`` (0 at padded words)."""
        mask = mask.bool()
        transitions, start, end = self.constrained()
        batch, decoders, words, _ = emissions.shape
        if words == 0:
            return torch.zeros(batch, decoders, 0, dtype=torch.long, device=emissions.device)
        identity = torch.arange(NUM_TAGS, device=emissions.device).expand(batch, decoders, NUM_TAGS)
        score = start.unsqueeze(0) + emissions[:, :, 0]
        backpointers = []
        for t in range(1, words):
            best, arg = (score.unsqueeze(-1) + transitions).max(dim=-2)  # over prev -> [B, D, next]
            step = mask[:, t, None, None]
            score = torch.where(step, best + emissions[:, :, t], score)
            # A padded step points every tag to itself, so backtracking passes through unchanged.
            backpointers.append(torch.where(step, arg, identity))
        tag = (score + end.unsqueeze(0)).argmax(-1)  # [B, D]
        path = [tag]
        for pointer in reversed(backpointers):
            tag = pointer.gather(-1, tag.unsqueeze(-1)).squeeze(-1)
            path.append(tag)
        path.reverse()
        tags = torch.stack(path, dim=-1)
        return tags * mask[:, None, :].long()

    def tempered(
        self, emissions: torch.Tensor, scale: torch.Tensor | None, decoders: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Emissions, transitions, start and end scores with BIO's rules applied, each decoder's multiplied by
        ``scale`` ``[D]`` (``1 / T``: the tempered distribution ``p(y)^scale / Z``, ``models/calibration.py``;
        ``None``: as they are); of the decoders ``decoders`` (``constrained``) when given."""
        transitions, start, end = self.constrained(decoders)
        if scale is None:
            return emissions, transitions, start, end
        scale = scale.to(emissions)
        return (
            emissions * scale[None, :, None, None],
            transitions.to(emissions) * scale[:, None, None],
            start.to(emissions) * scale[:, None],
            end.to(emissions) * scale[:, None],
        )

    def marginals(
        self,
        emissions: torch.Tensor,
        mask: torch.Tensor,
        scale: torch.Tensor | None = None,
        decoders: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Posterior tag probabilities per word, ``[B, D, W, 3]``, by forward-backward in log space (of the CRF
        tempered by ``scale`` ``[D]`` when given, ``tempered``). With ``decoders`` ``[M]``, the emissions
        ``[B, M, W, 3]`` are those of the CRF's decoders ``decoders[m]`` (any repeated: one decoder at several
        scales, or every decoder raw and tempered, from one pass).

        ``alpha_t(j)`` is the log-sum of the scores of every prefix ending in tag ``j`` at word ``t`` (the
        recursion of ``_log_partition``), ``beta_t(i)`` that of every suffix after word ``t`` given tag ``i``
        there (the end score at a post's last word); ``p(tag_t = j) = exp(alpha_t(j) + beta_t(j) - log Z)``.
        Each real word's three values sum to 1; padded words (and posts without words) get 0 for every tag.
        """
        mask = mask.bool()
        emissions, transitions, start, end = self.tempered(emissions, scale, decoders)
        batch, width, words, _ = emissions.shape
        if words == 0:
            return emissions.new_zeros(batch, width, 0, NUM_TAGS)
        alphas = [start.unsqueeze(0) + emissions[:, :, 0]]  # each [B, D, 3]
        for t in range(1, words):
            candidate = torch.logsumexp(
                alphas[-1].unsqueeze(-1) + transitions + emissions[:, :, t].unsqueeze(-2), dim=-2
            )
            alphas.append(torch.where(mask[:, t, None, None], candidate, alphas[-1]))
        # padded steps copy alpha forward, so the last alpha is the one at each post's last real word
        log_z = torch.logsumexp(alphas[-1] + end.unsqueeze(0), dim=-1)  # [B, D]
        closing = end.unsqueeze(0).expand(batch, -1, -1)
        betas = [closing]  # beta at the last position; built backwards
        for t in range(words - 2, -1, -1):
            # [D, prev, next] + [B, D, 1, next] -> logsumexp over next
            candidate = torch.logsumexp(transitions + (emissions[:, :, t + 1] + betas[-1]).unsqueeze(-2), dim=-1)
            # word t+1 is padding: word t is the post's last real word, whose suffix is the end score alone
            betas.append(torch.where(mask[:, t + 1, None, None], candidate, closing))
        betas.reverse()
        log_marginals = torch.stack(alphas, dim=2) + torch.stack(betas, dim=2) - log_z[:, :, None, None]
        return log_marginals.exp() * mask[:, None, :, None].to(emissions.dtype)

    def inside_probabilities(
        self,
        emissions: torch.Tensor,
        mask: torch.Tensor,
        scale: torch.Tensor | None = None,
        decoders: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``P(word t is inside a span) = P(B) + P(I)`` per post, decoder and word, ``[B, D, W]`` (0 at padding);
        of the tempered CRF with ``scale`` ``[D]`` (its calibration, ``models/calibration.py``); of the decoders
        ``decoders`` when given (``marginals``).

        Computed in float64 and returned in the emissions' dtype: in float32, ``exp(alpha + beta - log Z)`` of a
        near-certain word can come out at 1.00001, which is not a probability.
        """
        marginals = self.marginals(emissions.double(), mask, None if scale is None else scale.double(), decoders)
        return (marginals[..., B] + marginals[..., I]).clamp(0.0, 1.0).to(emissions.dtype)

    def inside_probabilities_at(
        self, emissions: torch.Tensor, mask: torch.Tensor, scales: torch.Tensor
    ) -> torch.Tensor:
        """``inside_probabilities`` of every decoder at each row of ``scales`` ``[K, D]``, ``[K, B, D, W]``, from one
        pass with the decoders side by side (each row's values are those of a pass at that scale alone)."""
        copies, decoders = scales.shape
        every = torch.arange(decoders, device=emissions.device).repeat(copies)
        inside = self.inside_probabilities(emissions.repeat(1, copies, 1, 1), mask, scales.reshape(-1), every)
        return inside.reshape(inside.shape[0], copies, decoders, -1).transpose(0, 1)

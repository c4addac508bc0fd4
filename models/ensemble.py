"""Ensembles of trained MVML / MVMD models that predict like one model.

A cross-validated experiment leaves one model per fold; averaging them is the cheapest strong submission.
Where the average is taken decides whether the result is still a valid prediction:

- ``MVMLEnsemble`` averages the members' label *probabilities* and applies the threshold once
  (the members' thresholds averaged: with fixed τ that is τ; tuned ones meet in the middle).
- ``MVMDEnsemble`` averages each decoder's *emission scores* (each member's decision O bias included)
  and decodes once with a CRF whose transition, start and end scores are the members' averages. Viterbi
  over the constrained CRF can only produce valid BIO, which averaging decoded tags could not promise.

Probabilities follow the same averages: an MVML ensemble's probabilities are the mean probabilities its threshold
is applied to; an MVMD ensemble's span probabilities (``inside``) are the forward-backward marginals of the averaged
CRF over the averaged emissions, the distribution whose best path Viterbi decodes (the members' decision O biases,
a decision rule, move the decoded path only, as in a single model). Calibrated members report calibrated ones: an
MVML ensemble the mean of its members' calibrated probabilities (each mixed with its own prior when it has a prior
fallback, ``models/prior_fallback.py``); an MVMD ensemble the marginals of the mean of its members' tempered CRFs,
with each member's prior fallback applied to those and averaged (``MVMDEnsemble.span_scores``).

Both answer the prediction methods a single model of their level answers (``models/outputs.py``: ``predict_step``,
``predict_outputs`` with or without the raw scores, ``dev_outputs``, ``fit_decision``, ``apply_decision``), so code
that predicts (``faina.predict``, taggers, the quality benchmark) never asks whether it holds one model or several.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import lightning as L
import torch
from torch import nn

from models.crf import BatchedBIOCRF
from models.mvmd import MVMD
from models.mvml import MVML
from models.outputs import PostOutputs, SpanOutputs


class _Ensemble(L.LightningModule):
    member_type: type = nn.Module

    def __init__(self, members: Sequence[nn.Module]):
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one model")
        wrong = [type(m).__name__ for m in members if not isinstance(m, self.member_type)]
        if wrong:
            raise ValueError(f"{type(self).__name__} combines {self.member_type.__name__} models, got {wrong}")
        first = members[0]
        for member in members[1:]:
            if list(member.labels) != list(first.labels) or member.num_views != first.num_views:
                raise ValueError("ensemble members must share labels and views")
        self.members = nn.ModuleList(members)
        self.labels = list(first.labels)
        self.num_views = first.num_views
        self.reports_calibrated = True

    def use_calibration(self, on: bool = True) -> None:
        """Report the members' calibrated probabilities (the default) or their raw ones."""
        self.reports_calibrated = bool(on)
        for member in self.members:
            member.use_calibration(on)

    @property
    def applies_calibration(self) -> bool:
        return any(member.applies_calibration for member in self.members)

    def __len__(self) -> int:
        return len(self.members)


class MVMLEnsemble(PostOutputs, _Ensemble):
    """Average of MVML members' probabilities, thresholded once."""

    member_type = MVML

    def __init__(self, members: Sequence[MVML]):
        super().__init__(members)
        self.register_buffer("thresholds", torch.stack([m.thresholds for m in members]).mean(0))

    def probabilities(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Mean raw label probabilities ``[B, V, C]`` (what the averaged thresholds decide on)."""
        return torch.stack([member.probabilities(batch) for member in self.members]).mean(0)

    def probability_outputs(self, batch: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The mean of the members' raw probabilities and of their reported (calibrated) ones."""
        scores = [member.probability_outputs(batch) for member in self.members]
        raw = torch.stack([s["raw_probabilities"] for s in scores]).mean(0)
        if not self.applies_calibration:
            return {"raw_probabilities": raw, "probabilities": raw}
        return {"raw_probabilities": raw, "probabilities": torch.stack([s["probabilities"] for s in scores]).mean(0)}

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Logits of the mean probabilities ``[B, V, C]`` (what a single MVML's forward returns)."""
        return torch.logit(self.probabilities(batch), eps=1e-7)

    def decide(self, probabilities: torch.Tensor) -> torch.Tensor:
        return probabilities >= self.thresholds.to(probabilities.dtype)

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        return self.predict_outputs(batch)


class MVMDEnsemble(SpanOutputs, _Ensemble):
    """Average of MVMD members' emissions, decoded once by a CRF with the members' mean scores."""

    member_type = MVMD

    def __init__(self, members: Sequence[MVMD]):
        super().__init__(members)
        crfs = [m.decoders.crf for m in members]
        self.crf = BatchedBIOCRF(crfs[0].num_decoders)
        with torch.no_grad():
            for name in ("transitions", "start_scores", "end_scores"):
                getattr(self.crf, name).copy_(torch.stack([getattr(c, name).detach() for c in crfs]).mean(0))
        self.crf.requires_grad_(False)

    def emissions(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Mean of the members' emissions ``[B, D, W, 3]`` (no decision O bias)."""
        return torch.stack(self._member_emissions(batch)).mean(0)

    def emission_pair(self, batch: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """The averaged emissions and decision emissions from one forward pass of each member."""
        emissions = self._member_emissions(batch)
        return torch.stack(emissions).mean(0), self._mean_decision(emissions)

    def decision_emissions(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Mean of the members' decision emissions ``[B, D, W, 3]``."""
        return self._mean_decision(self._member_emissions(batch))

    def span_scores(self, batch: Mapping[str, torch.Tensor]):
        """From one forward pass of each member: the averaged emissions (each member's decision O bias left out, as
        a single model leaves its own out) and decision emissions, the raw marginals (of the averaged CRF over the
        averaged emissions) and the reported ones: with calibrated members, the marginals of the average of their
        tempered CRFs (each member's scores times its ``calibration_scale``), the ensemble of the distributions the
        members report, then each member's prior fallback applied to them and averaged (``Σ_m (w_m · p + (1 − w_m)
        · π_m) / M``: members that all fall back to the prior report their mean prior; without a fallback ``w_m =
        1`` and ``p`` is reported)."""
        emissions = self._member_emissions(batch)
        mean, decision = torch.stack(emissions).mean(0), self._mean_decision(emissions)
        mask = batch["word_mask"].bool()
        raw = self.crf.inside_probabilities(mean.float(), mask)
        if not self.applies_calibration:
            return mean, decision, raw, raw
        scales = [m.calibration_scale.to(e)[None, :, None, None] for m, e in zip(self.members, emissions)]
        tempered = torch.stack([e * scale for e, scale in zip(emissions, scales)]).mean(0)
        inside = self._tempered_crf().to(tempered.device).inside_probabilities(tempered.float(), mask)
        reported = torch.stack([m.with_prior(inside, mask, m.calibration_values()) for m in self.members]).mean(0)
        return mean, decision, raw, reported

    def _tempered_crf(self) -> BatchedBIOCRF:
        """A CRF whose scores are the mean of the members' scores each times its calibration scale."""
        crf = BatchedBIOCRF(self.crf.num_decoders)
        with torch.no_grad():
            for name in ("transitions", "start_scores", "end_scores"):
                scaled = [
                    getattr(m.decoders.crf, name).detach().cpu()
                    * m.calibration_scale.cpu().view(-1, *[1] * (getattr(m.decoders.crf, name).dim() - 1))
                    for m in self.members
                ]
                getattr(crf, name).copy_(torch.stack(scaled).mean(0))
        return crf.requires_grad_(False)

    def _member_emissions(self, batch: Mapping[str, torch.Tensor]) -> list[torch.Tensor]:
        return [member.emissions(batch) for member in self.members]

    def _mean_decision(self, emissions: Sequence[torch.Tensor]) -> torch.Tensor:
        return torch.stack([m.with_decision_bias(e) for m, e in zip(self.members, emissions)]).mean(0)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Decoded tags ``[B, D, W]``."""
        return self.crf.viterbi(self.decision_emissions(batch), batch["word_mask"])

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        """What ``MVMD.predict_step`` returns; ``inside`` are the marginals of the averaged CRF over the averaged
        emissions."""
        return self.predict_outputs(batch)


ENSEMBLE_OF = {MVML: MVMLEnsemble, MVMD: MVMDEnsemble}


def ensemble(members: Sequence[nn.Module]) -> _Ensemble:
    """The ensemble module for members of one model class (``MVML`` or ``MVMD``)."""
    kinds = {type(m) for m in members}
    if len(kinds) != 1 or next(iter(kinds)) not in ENSEMBLE_OF:
        raise ValueError(f"cannot ensemble models of types {sorted(k.__name__ for k in kinds)}")
    return ENSEMBLE_OF[next(iter(kinds))](members).eval()

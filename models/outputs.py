"""What a span or post model gives a prediction pass, and how a decision rule is fitted on it and applied to it.

One model (``MVMD``, ``MVML``) and an ensemble of them (``models/ensemble.py``) answer the same methods, so the
prediction pass (``faina.serving.prediction``), ``train.py``'s tuned rules and the quality benchmark never ask
which of the two they hold:

- ``predict_outputs(batch, raw=False)``: what ``predict_step`` returns, per post: the decoded tags and each word's
  CRF marginal of lying in a span (``inside``), or the label probabilities and their decisions. With ``raw``,
  also the scores the decision is taken on: a span model's emissions with and without its decision O bias and the
  word mask; and, for a labelled batch, its gold against every annotator view (``dev_outputs``' keys);
- ``dev_outputs(batch)``: the scores a decision rule is fitted on (span: the emissions without any decision bias;
  post: the probabilities) and the batch's gold, ``gold`` (every annotator view, ``models.base.scoring_targets``)
  with its ``annotated`` mask;
- ``fit_decision(outputs, settings)``: the values a ``DecisionSettings`` rule fits on such outputs (O biases
  ``[D]`` / thresholds ``[V, C]``) and what was decided; a fixed rule gives its fixed value. This is what
  ``FallacyModule.tune_decisions`` (``o_bias``/``threshold`` tuned by ``train.py``) calls;
- ``apply_decision(outputs, values)``: raw outputs decided again under other values, as ``predict_step`` dicts.

A calibrated model (``models/calibration.py``) reports calibrated ``inside`` / ``probabilities`` and keeps the raw
ones beside them (``raw_inside`` / ``raw_probabilities``); decisions are taken, and decision rules fitted, on the
raw scores, so a calibration moves no hard decision. Single models also answer ``fit_calibration`` /
``apply_calibration`` (``models/mvml.py``, ``models/mvmd.py``); an ensemble reports its members' calibrations.

Every tensor they return is on the CPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from copy import deepcopy

import torch

from models.base import gold_of
from models.decision_rules import (
    DecisionSettings,
    SpanDev,
    fit_o_bias,
    fit_thresholds,
    post_observations,
    span_observations,
    views_per_model_view,
    with_o_bias,
)


class SpanOutputs:
    """For span models: needs ``crf`` (the CRF that decodes), ``emissions(batch)`` (the decoders' scores
    ``[B, D, W, 3]``), ``span_scores(batch)`` (those, the ones decoding uses, with the decision O bias, and the raw
    and reported marginals), ``labels`` and ``num_views``."""

    def predict_outputs(self, batch: Mapping[str, torch.Tensor], raw: bool = False) -> dict:
        """Decoded tags, and ``inside`` ``[B, D, W]``: each word's CRF marginal of lying in a span of the decoder's
        label. The marginals are those of the model's own emissions (of its tempered CRF when it is calibrated,
        ``models/calibration.py``, the uncalibrated ones then also as ``raw_inside``); the decision O bias is a
        decision rule (like MVML's thresholds) and moves only the tags (``docs/soft-labels.md``)."""
        emissions, decision, raw_inside, inside = self.span_scores(batch)
        mask = batch["word_mask"]
        out = {
            "post_index": batch["post_index"].cpu(),
            "tags": self.crf.viterbi(decision.float(), mask).cpu(),
            "num_words": mask.sum(-1).cpu(),
            "inside": inside.cpu(),
        }
        if inside is not raw_inside:
            out["raw_inside"] = raw_inside.cpu()
        if raw:
            out.update(emissions=emissions.cpu(), decision_emissions=decision.cpu(), word_mask=mask.cpu())
            out.update(gold_of(batch, "tags"))
        return out

    def dev_outputs(self, batch: Mapping[str, torch.Tensor]) -> dict:
        return self.dev_record(batch, self.emissions(batch))

    def dev_record(self, batch: Mapping[str, torch.Tensor], emissions: torch.Tensor) -> dict:
        """``dev_outputs`` of a batch whose ``emissions`` are already computed (a validation step's)."""
        return {"emissions": emissions.cpu(), "word_mask": batch["word_mask"].cpu(), **gold_of(batch, "tags")}

    def observations(self, outputs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One batch's dev ``(emissions, tags, mask)`` against every gold view (``span_observations`` says how one
        decoder set meets them)."""
        return span_observations(
            outputs["emissions"].float(),
            outputs["gold"],
            outputs["word_mask"],
            outputs.get("annotated"),
            self.num_views,
        )

    @torch.no_grad()
    def fit_decision(self, outputs: Sequence[Mapping], settings: DecisionSettings) -> tuple[torch.Tensor, dict]:
        """Decision O biases ``[D]`` of ``settings`` fitted on dev outputs, and what was decided."""
        decoders = self.num_views * len(self.labels)
        if not settings.tuned:
            return torch.full((decoders,), float(settings.fixed)), {}
        crf = self.crf if self.crf.transitions.device.type == "cpu" else deepcopy(self.crf).cpu()
        gold_views = outputs[0]["gold"].shape[1] // len(self.labels)  # every annotator's, also for one decoder set
        return fit_o_bias(
            SpanDev(crf, [self.observations(batch) for batch in outputs]),
            self.num_views,
            settings.min_evidence,
            settings.scope,
            settings.shrinkage,
            settings.confirm,
            views_per_item=views_per_model_view(gold_views, self.num_views),  # evidence is counted per view
            fixed=settings.fixed,
            floor=settings.floor,
        )

    @torch.no_grad()
    def apply_decision(self, outputs: Sequence[Mapping], bias: torch.Tensor) -> list[dict]:
        """``predict_step`` dicts of raw outputs decoded with the decision O bias ``bias`` ``[D]`` instead."""
        device = self.crf.transitions.device
        decided = []
        for batch in outputs:
            emissions, mask = batch["emissions"].to(device), batch["word_mask"].to(device)
            decided.append(
                {
                    **batch,
                    "tags": self.crf.viterbi(with_o_bias(emissions, bias.to(device)).float(), mask).cpu(),
                }
            )
        return decided


class PostOutputs:
    """For post models: needs ``probabilities(batch)`` ``[B, V, C]`` (raw, the decisions'), ``probability_outputs(batch)``
    (those and the reported ones), ``decide(probabilities)`` and ``num_views``."""

    def predict_outputs(self, batch: Mapping[str, torch.Tensor], raw: bool = False) -> dict:
        """The reported ``probabilities`` (calibrated when the model is, the raw ones then also as
        ``raw_probabilities``) and the decisions taken on the raw ones; with ``raw``, the ``logits`` too (a single
        model's) and the gold."""
        scores = self.probability_outputs(batch)
        decided_on = scores["raw_probabilities"]
        out = {
            "post_index": batch["post_index"].cpu(),
            "probabilities": scores["probabilities"].cpu(),
            "predicted": self.decide(decided_on).cpu(),
        }
        if scores["probabilities"] is not decided_on:
            out["raw_probabilities"] = decided_on.cpu()
        if raw:
            if "logits" in scores:
                out["logits"] = scores["logits"].cpu()
            out.update(gold_of(batch, "labels"))
        return out

    def dev_outputs(self, batch: Mapping[str, torch.Tensor]) -> dict:
        return {"probabilities": self.probabilities(batch).cpu(), **gold_of(batch, "labels")}

    def observations(self, outputs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch's dev ``(probabilities, targets)`` ``[N, V, C]`` against every gold view (``post_observations``
        says how one head meets them)."""
        return post_observations(
            outputs["probabilities"].float(), outputs["gold"].float(), outputs.get("annotated"), self.num_views
        )

    @torch.no_grad()
    def fit_decision(self, outputs: Sequence[Mapping], settings: DecisionSettings) -> tuple[torch.Tensor, dict]:
        """Thresholds ``[V, C]`` of ``settings`` fitted on dev outputs, and what was decided."""
        if not settings.tuned:
            return torch.full((self.num_views, len(self.labels)), float(settings.fixed)), {}
        probabilities, targets = zip(*(self.observations(batch) for batch in outputs))
        return fit_thresholds(
            torch.cat(probabilities),
            torch.cat(targets),
            settings.fixed,
            settings.min_evidence,
            settings.scope,
            settings.shrinkage,
            settings.confirm,
            settings.floor,
            views_per_item=views_per_model_view(outputs[0]["gold"].shape[1], self.num_views),  # counted per view
        )

    @torch.no_grad()
    def apply_decision(self, outputs: Sequence[Mapping], thresholds: torch.Tensor) -> list[dict]:
        """``predict_step`` dicts of raw outputs decided with ``thresholds`` (``[V, C]``, or one τ) instead, on the raw
        probabilities (a calibration moves what is reported, not what is decided)."""
        decided = []
        for batch in outputs:
            probabilities = batch.get("raw_probabilities", batch["probabilities"])  # what the thresholds decide on
            decided.append({**batch, "predicted": probabilities >= thresholds.to(probabilities.dtype)})
        return decided

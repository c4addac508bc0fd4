"""MVMD: multi-view, multi-decoder span detection (span-c, span-f).

One BIO decoder per (annotator view, label): decoder ``d = view * C + c``. Each word is represented
by its first subword's vector; a linear layer gives every decoder its O/B/I scores and a CRF
restricted to valid BIO transitions decodes them (``models/heads.py``, ``models/crf.py``).

Why the decoders get their own, higher learning rate (``head_lr``): with one lr of 1e-4 for everything
the 40 decoders first learn each label's prior, and for labels that cover a few per mille of the words
the prior is "always O". Adam moves each weight by about lr per step, so a freshly initialised linear
decoder needs many steps at 1e-4 to lift B/I scores above that prior; a small encoder or a short run
(few posts, few epochs) never gets there and every decoder ends predicting only O. Hence a higher ``head_lr``
for the small decoders only, while the encoder keeps the paper's 1e-4, so the pretrained weights move no more
than in the paper (what each rate gave: docs/faina-metrics.md).
``o_bias`` (a number, default 0) is an *initial* emission bias: it starts decoders biased towards O; it does not
prevent the collapse (it starts there) but suppresses the flood of random spans of the first epoch, and training
moves it like any weight. The *decision* rule is ``decision`` (``models.decision_rules.SpanDecisionSettings``):
by default no decision bias (``fixed`` 0: the CRF's own path); with ``tuned``, after training each decoder gets
the bias on its O score that maximises its strict span F1 on the fold's dev set (``tune_decisions``), for decoders
that under- or over-predict; decoders with fewer than ``min_evidence`` dev spans keep ``fixed``. ``scope``
(``own`` | ``shared`` | ``shrunk``), ``shrinkage`` and ``confirm`` choose how the biases are fitted
(``models/decision_rules.py``: the per-decoder ``own`` rule overfits on real data). The decision biases live in
the ``decision_o_bias`` buffer ``[D]`` (saved with the weights) and apply to every decode.

``soft_targets=True`` (``data.targets=soft``): one decoder set (``num_views=1``, ``C`` decoders) trained on every
view's tag sequence as a repeated observation of the same CRFs, ``Σ_v w_v · NLL(view v)`` (``view_weights``
``w_v``, default 1; ``BIODecoders.soft_loss``); the batches keep every view's tags ``[B, V·C, W]``. A batch's
``annotated`` ``[B, V]`` masks the views that did not annotate a post out of the loss and the dev scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from typing import Any

import torch

from models.base import COLLAPSE_FRACTION, FallacyModule, masked_views, scoring_targets
from models.bio import tags_to_spans
from models.calibration import CalibrationSettings, SpanCalibrationSettings, fit_span_calibration
from models.decision_rules import DecisionSettings, SpanDecisionSettings, with_o_bias
from models.encoder import ChunkedEncoder
from models.heads import BIODecoders
from models.outputs import SpanOutputs
from models.prior_fallback import fit_span_fallback, mixed


def gather_words(subwords: torch.Tensor, word_starts: torch.Tensor) -> torch.Tensor:
    """Each word's vector is its first subword's: ``[B, T, H]`` × ``[B, W]`` → ``[B, W, H]``."""
    index = word_starts.clamp(min=0, max=max(subwords.shape[1] - 1, 0))
    return subwords.gather(1, index.unsqueeze(-1).expand(-1, -1, subwords.shape[-1]))


class MVMD(SpanOutputs, FallacyModule):
    """Span model. ``labels``: the grain's label strings (sorted); ``num_views``: annotators.

    ``loss_weights``: one λ per decoder (default all 1). ``head_lr``: learning rate of the decoders
    (``None``: the optimiser's). ``o_bias``: initial emission bias of ``O`` over ``B``/``I``. ``decision``: the
    decision rule (``SpanDecisionSettings``, a mapping of its fields, or ``None`` for its defaults; module
    docstring).
    """

    unit_name = "spans"

    def __init__(
        self,
        encoder: ChunkedEncoder | Mapping | None = None,
        num_views: int = 2,
        labels: Sequence[str] = (),
        optimizer: Callable[..., torch.optim.Optimizer] | None = None,
        scheduler: Callable[..., Any] | None = None,
        loss_weights: Sequence[float] | None = None,
        discriminative_decay: float | None = None,
        gradual_unfreezing: bool = False,
        head_lr: float | None = 1e-2,
        o_bias: float = 0.0,
        val_metric=None,
        decision: DecisionSettings | Mapping | None = None,
        soft_targets: bool = False,
        view_weights: Sequence[float] | None = None,
        calibration: CalibrationSettings | Mapping | None = None,
    ):
        super().__init__(encoder, optimizer, scheduler, discriminative_decay, gradual_unfreezing, head_lr, val_metric)
        labels = [str(label) for label in labels]
        if not labels:
            raise ValueError("MVMD needs the task's labels")
        if isinstance(o_bias, str) or isinstance(o_bias, bool):
            raise ValueError(
                f"o_bias is the initial O bias, a number (got {o_bias!r}); a tuned decision O bias is "
                "decision.tuned=true (model.module.decision.tuned=true)"
            )
        self.save_hyperparameters(ignore=["encoder", "optimizer", "scheduler", "val_metric", "decision", "calibration"])
        self.record_encoder_hparams()
        self.keep_decision_settings(SpanDecisionSettings.of(decision))
        self.keep_calibration_settings(SpanCalibrationSettings.of(calibration))
        self.labels = labels
        self.num_views = num_views
        self.soft_targets = bool(soft_targets)
        if self.soft_targets and num_views != 1:
            raise ValueError(f"soft_targets trains one decoder set: num_views must be 1, got {num_views}")
        # view_weights count only with soft targets (a model read back for prediction carries them unused)
        self.view_weights = None if view_weights is None else [float(w) for w in view_weights]
        num_decoders = num_views * len(labels)
        self.decoders = BIODecoders(self.encoder.hidden_size, num_decoders, loss_weights, float(o_bias))
        self.register_buffer("decision_o_bias", torch.full((num_decoders,), float(self.decision.fixed)))
        # 1 / T per decoder, the tempered CRF whose marginals are reported (models/calibration.py), mixed with the
        # label prior as weight · marginal + (1 - weight) · prior (models/prior_fallback.py)
        self.register_buffer("calibration_scale", torch.ones(num_decoders))
        self.register_buffer("calibration_weight", torch.ones(num_decoders))
        self.register_buffer("calibration_prior", torch.zeros(num_decoders))
        self._register_load_state_dict_pre_hook(self._keep_bias_of_older_exports)

    def _keep_bias_of_older_exports(self, state_dict, prefix, *args, **kwargs) -> None:
        """Models exported before tuned O biases (calibration, its prior fallback) existed have no buffer: they
        decoded without one (and reported the untempered, or the tempered unmixed, marginals)."""
        state_dict.setdefault(prefix + "decision_o_bias", torch.zeros_like(self.decision_o_bias))
        state_dict.setdefault(prefix + "calibration_scale", torch.ones_like(self.calibration_scale))
        state_dict.setdefault(prefix + "calibration_weight", torch.ones_like(self.calibration_weight))
        state_dict.setdefault(prefix + "calibration_prior", torch.zeros_like(self.calibration_prior))

    @property
    def crf(self):
        """The CRF that decodes every decoder (``models/crf.py``)."""
        return self.decoders.crf

    def emissions(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        subwords, _ = self.encoder(batch["input_ids"], batch["attention_mask"])
        return self.decoders.emissions(gather_words(subwords, batch["word_starts"]))

    def emission_pair(self, batch: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """The decoders' emissions and the ones decoding uses (with the decision O bias), from one forward pass."""
        emissions = self.emissions(batch)
        return emissions, self.with_decision_bias(emissions)

    def span_scores(self, batch: Mapping[str, torch.Tensor]):
        """From one forward pass: the emissions, the decision emissions, the raw marginals ``P(inside)`` and the
        reported ones (the tempered CRF's, mixed with the prior, when the model is calibrated and reports it; else
        the raw ones)."""
        emissions, decision = self.emission_pair(batch)
        mask = batch["word_mask"].bool()
        if not self.applies_calibration:
            raw = self.crf.inside_probabilities(emissions.float(), mask)
            return emissions, decision, raw, raw
        scale = self.calibration_scale
        raw, tempered = self.crf.inside_probabilities_at(
            emissions.float(), mask, torch.stack([torch.ones_like(scale), scale])
        )
        return emissions, decision, raw, self.with_prior(tempered, mask, self.calibration_values())

    @staticmethod
    def with_prior(inside: torch.Tensor, mask: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Marginals ``[B, D, W]`` mixed with each decoder's prior by its weight (``values`` rows 1 and 2), 0 at
        padding as the marginals are."""
        reported = mixed(inside, values[1][None, :, None], values[2][None, :, None])
        return reported * mask[:, None, :].to(reported)

    def calibration_values(self) -> torch.Tensor:
        """``[3, D]``: the buffers' scale, prior weight and prior (what ``fit_calibration`` returns)."""
        return torch.stack([self.calibration_scale, self.calibration_weight, self.calibration_prior])

    @property
    def applies_calibration(self) -> bool:
        """Whether reported marginals differ from the raw ones: a fitted calibration, not switched off."""
        fitted = bool((self.calibration_scale != 1).any() or (self.calibration_weight != 1).any())
        return self.reports_calibrated and fitted

    def fit_calibration(
        self, outputs, settings: CalibrationSettings, prior: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, dict]:
        """``[3, D]``: each decoder's ``1 / T``, prior weight and prior of ``settings`` fitted on dev outputs
        (``emissions``, ``gold``); ``prior`` ``[V, C]``: each label's share of the training part's tokens, which
        ``fallback: prior`` needs (``models/prior_fallback.py``)."""
        views, labels = self.num_views, len(self.labels)
        scale, info = fit_span_calibration(self.crf, outputs, views, labels, settings)
        weight, pi, fallback = fit_span_fallback(self.crf, outputs, views, labels, settings, prior, scale)
        return torch.stack([scale, weight, pi]), {**settings.model_dump(), **info, **fallback}

    def keep_calibration(self, values: torch.Tensor) -> None:
        for buffer, value in zip((self.calibration_scale, self.calibration_weight, self.calibration_prior), values):
            buffer.copy_(value.to(buffer))

    @torch.no_grad()
    def apply_calibration(self, outputs, values: torch.Tensor) -> list[dict]:
        """Raw prediction outputs (with ``emissions``) whose ``inside`` are the marginals tempered by ``values[0]``
        and mixed with the prior (``values`` as ``fit_calibration`` returns them)."""
        crf = self.crf if self.crf.transitions.device.type == "cpu" else deepcopy(self.crf).cpu()
        calibrated = []
        for batch in outputs:
            mask = batch["word_mask"].bool()
            tempered = crf.inside_probabilities(batch["emissions"].float(), mask, values[0])
            calibrated.append({**batch, "inside": self.with_prior(tempered, mask, values)})
        return calibrated

    def calibration_report(self, values: torch.Tensor, info: dict) -> dict:
        def per_view(row: torch.Tensor, invert: bool) -> dict:
            table: dict = {}
            for d, value in enumerate(row.tolist()):
                view, label = divmod(d, len(self.labels))
                table.setdefault(f"a{view + 1}", {})[self.labels[label]] = round(1.0 / value if invert else value, 4)
            return table

        report = {"temperature": per_view(values[0], True), **info}
        if info.get("fallback", "none") != "none":
            report["prior_weight"], report["prior"] = per_view(values[1], False), per_view(values[2], False)
        if "fallback_evidence" in info:  # with a fallback margin: each label's dev evidence, by name
            report["fallback_evidence"] = dict(zip(self.labels, info["fallback_evidence"]))
        return report

    def decision_emissions(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The emissions that decoding uses: the decoders' scores plus each one's decision O bias."""
        return self.with_decision_bias(self.emissions(batch))

    def with_decision_bias(self, emissions: torch.Tensor) -> torch.Tensor:
        return with_o_bias(emissions, self.decision_o_bias)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Decoded tags ``[B, D, W]``."""
        return self.decoders.decode(self.decision_emissions(batch), batch["word_mask"])

    def loss(self, emissions: torch.Tensor, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The training objective: per-decoder NLL, or with ``soft_targets`` the sum over views of their NLL."""
        annotated = batch.get("annotated")
        if self.soft_targets:
            weights = None if self.view_weights is None else emissions.new_tensor(self.view_weights)
            return self.decoders.soft_loss(emissions, batch["tags"], batch["word_mask"], annotated, weights)
        return self.decoders.loss(emissions, batch["tags"], batch["word_mask"], annotated)

    def training_loss(self, batch) -> torch.Tensor:
        return self.loss(self.emissions(batch), batch)

    def _evaluate(self, batch, split: str, record: bool = False) -> dict | None:
        if "tags" not in batch:  # unlabelled data: nothing to score
            return None
        emissions = self.emissions(batch)
        mask = batch["word_mask"]
        size = batch["input_ids"].shape[0]
        loss = self.loss(emissions, batch)
        self.log(f"{split}/loss", loss, batch_size=size, sync_dist=True)
        predicted = self.batch_spans(self.decoders.decode(self.with_decision_bias(emissions), mask), mask)
        gold_tags, annotated = scoring_targets(batch, "tags")
        gold_views = gold_tags.shape[1] // len(self.labels)  # every annotator's, also for one decoder set
        gold = masked_views(self.batch_spans(gold_tags, mask, gold_views), annotated)
        self.count_predictions(
            split,
            sum(len(v) for post in predicted for v in post),
            sum(len(v or ()) for post in gold for v in post),
            gold_views,
        )
        metric = self.metric_for(split)
        if metric is not None:
            metric.update(predicted, gold)
        return self.dev_record(batch, emissions) if record else None

    def batch_spans(self, tags: torch.Tensor, mask: torch.Tensor, num_views: int | None = None):
        """Spans per post per view (``faina.formats.records.Span``, 1-based tokens) from tags ``[B, D, W]``
        (``num_views``: the views the tags hold, default the model's)."""
        tags, lengths = tags.cpu(), mask.sum(-1).tolist()
        views = num_views or self.num_views
        return [tags_to_spans(tags[i], lengths[i], views, self.labels) for i in range(len(lengths))]

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        """Decoded tags and the CRF marginals ``inside`` (``models.outputs.SpanOutputs.predict_outputs``)."""
        return self.predict_outputs(batch)

    def collapse_message(self, predicted: float, gold: float) -> str:
        return (
            f"the span decoders predicted {predicted:.4g} spans per view where the gold data has {gold:.4g} per view "
            f"(< {COLLAPSE_FRACTION:.0%}); they may have collapsed to predicting only O. Try a higher "
            "model.module.head_lr, a lower model.module.o_bias, a lower model.module.optimizer.lr (the encoder's), "
            "or more epochs (trainer.max_epochs)."
        )

    def keep_decision(self, values: torch.Tensor) -> None:
        self.decision_o_bias.copy_(values.to(self.decision_o_bias))

    def decision_report(self, values: torch.Tensor, info: dict) -> dict:
        per_view = {}
        for d, value in enumerate(values.tolist()):
            view, label = divmod(d, len(self.labels))
            per_view.setdefault(f"a{view + 1}", {})[self.labels[label]] = round(value, 4)
        return {"o_bias": per_view, "o_bias_rule": info}

"""MVML: multi-view, multi-label post classification (post-c, post-f).

One multi-label head per annotator view on the post's sentence vector (``models/heads.py``): sigmoid
scores, binary cross-entropy, and a label is predicted when its probability reaches its threshold. The decision
rule is ``decision`` (``models.decision_rules.PostDecisionSettings``): ``fixed`` (τ = 0.7 in the paper) for every
label, or with ``tuned`` one threshold per view and label picked on the fold's dev set after training
(``tune_decisions``), τ = ``fixed`` where dev has fewer than ``min_evidence`` positives. The thresholds live in the
``thresholds`` buffer ``[V, C]``, so they are saved and loaded with the weights. ``scope`` (``own`` | ``shared`` |
``shrunk``), ``shrinkage``, ``confirm`` and ``floor`` choose how they are fitted (``models/decision_rules.py``).

``soft_targets=True`` (``data.targets=soft``): one head (``num_views=1``) trained with BCE against each post's
share of annotated views per label (``MultiLabelHead.soft_loss``), so its sigmoid is the predicted share of
annotators; the batches keep every view's targets ``[B, V, C]`` and its prediction is scored against each view.
A batch's ``annotated`` ``[B, V]`` (views with the ``?`` marker are False) masks the missing annotations out of
the loss and of the dev scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from models.base import COLLAPSE_FRACTION, FallacyModule, gold_of, masked_views, scoring_targets
from models.calibration import (
    CalibrationSettings,
    PostCalibrationSettings,
    apply_post_calibration,
    fit_post_calibration,
)
from models.decision_rules import THRESHOLD_GRID, DecisionSettings, PostDecisionSettings
from models.encoder import ChunkedEncoder
from models.heads import MultiLabelHead
from models.outputs import PostOutputs
from models.prior_fallback import fit_post_fallback, mixed


class MVML(PostOutputs, FallacyModule):
    """Post model. ``labels``: the grain's label strings (sorted); ``num_views``: annotators; ``decision``: the
    decision rule (``PostDecisionSettings``, a mapping of its fields, or ``None`` for its defaults)."""

    unit_name = "labels"

    def __init__(
        self,
        encoder: ChunkedEncoder | Mapping | None = None,
        num_views: int = 2,
        labels: Sequence[str] = (),
        optimizer: Callable[..., torch.optim.Optimizer] | None = None,
        scheduler: Callable[..., Any] | None = None,
        decision: DecisionSettings | Mapping | None = None,
        discriminative_decay: float | None = None,
        gradual_unfreezing: bool = False,
        head_lr: float | None = None,
        val_metric=None,
        soft_targets: bool = False,
        calibration: CalibrationSettings | Mapping | None = None,
    ):
        super().__init__(encoder, optimizer, scheduler, discriminative_decay, gradual_unfreezing, head_lr, val_metric)
        labels = [str(label) for label in labels]
        if not labels:
            raise ValueError("MVML needs the task's labels")
        self.save_hyperparameters(ignore=["encoder", "optimizer", "scheduler", "val_metric", "decision", "calibration"])
        self.record_encoder_hparams()
        self.keep_decision_settings(PostDecisionSettings.of(decision))
        self.keep_calibration_settings(PostCalibrationSettings.of(calibration))
        self.labels = labels
        self.num_views = num_views
        self.soft_targets = bool(soft_targets)
        if self.soft_targets and num_views != 1:
            raise ValueError(f"soft_targets trains one head: num_views must be 1, got {num_views}")
        self.head = MultiLabelHead(self.encoder.hidden_size, num_views, len(labels))
        self.register_buffer("thresholds", torch.full((num_views, len(labels)), float(self.threshold)))
        # sigmoid(scale · logit + shift) per view and label: fitted on dev after training (models/calibration.py),
        # mixed with the label prior as weight · that + (1 - weight) · prior (models/prior_fallback.py)
        self.register_buffer("calibration_scale", torch.ones(num_views, len(labels)))
        self.register_buffer("calibration_shift", torch.zeros(num_views, len(labels)))
        self.register_buffer("calibration_weight", torch.ones(num_views, len(labels)))
        self.register_buffer("calibration_prior", torch.zeros(num_views, len(labels)))
        self._register_load_state_dict_pre_hook(self._keep_thresholds_of_older_exports)

    @property
    def threshold(self) -> float:
        """τ of the fixed rule, and of the labels a tuned rule leaves alone (``decision.fixed``)."""
        return float(self.decision.fixed)

    def _keep_thresholds_of_older_exports(self, state_dict, prefix, *args, **kwargs) -> None:
        """Models exported before tuned thresholds (calibration, its prior fallback) existed have no buffer: they
        used the one τ (and reported their raw, or their calibrated unmixed, probabilities)."""
        state_dict.setdefault(prefix + "thresholds", torch.full_like(self.thresholds, self.threshold))
        state_dict.setdefault(prefix + "calibration_scale", torch.ones_like(self.calibration_scale))
        state_dict.setdefault(prefix + "calibration_shift", torch.zeros_like(self.calibration_shift))
        state_dict.setdefault(prefix + "calibration_weight", torch.ones_like(self.calibration_weight))
        state_dict.setdefault(prefix + "calibration_prior", torch.zeros_like(self.calibration_prior))

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Logits ``[B, V, C]``."""
        _, sentence = self.encoder(batch["input_ids"], batch["attention_mask"])
        return self.head(sentence)

    def loss(self, logits: torch.Tensor, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The training objective: per-view BCE, or with ``soft_targets`` BCE against the views' share."""
        annotated = batch.get("annotated")
        if self.soft_targets:
            return self.head.soft_loss(logits, batch["labels"], annotated)
        return self.head.loss(logits, batch["labels"], annotated)

    def training_loss(self, batch) -> torch.Tensor:
        return self.loss(self(batch), batch)

    def _evaluate(self, batch, split: str, record: bool = False) -> dict | None:
        if "labels" not in batch:  # unlabelled data: nothing to score
            return None
        logits = self(batch)
        size = batch["input_ids"].shape[0]
        self.log(f"{split}/loss", self.loss(logits, batch), batch_size=size, sync_dist=True)
        probabilities = torch.sigmoid(logits)
        predicted = self.label_sets(self.decide(probabilities))
        gold_labels, annotated = scoring_targets(batch, "labels")
        gold = masked_views(self.label_sets(gold_labels > 0.5), annotated)
        self.count_predictions(
            split,
            sum(len(v) for post in predicted for v in post),
            sum(len(v or ()) for post in gold for v in post),
            gold_labels.shape[1],
            judged=int((probabilities >= self.collapse_thresholds().to(probabilities)).sum()),
        )
        metric = self.metric_for(split)
        if metric is not None:
            metric.update(predicted, gold)
        return self.dev_record(batch, logits) if record else None

    def label_sets(self, chosen: torch.Tensor) -> list[list[tuple[str, ...]]]:
        """Label strings per post per view (sorted, as the files list them) from booleans ``[B, V, C]``."""
        rows = chosen.cpu().tolist()
        return [[tuple(label for label, on in zip(self.labels, view) if on) for view in post] for post in rows]

    def decide(self, probabilities: torch.Tensor) -> torch.Tensor:
        """Booleans ``[B, V, C]``: each label's probability against its view's threshold for it."""
        return probabilities >= self.thresholds.to(probabilities.dtype)

    def probabilities(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Label probabilities ``[B, V, C]``: the raw sigmoid, which the thresholds decide on."""
        return torch.sigmoid(self(batch))

    def probability_outputs(self, batch: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """From one forward pass: ``raw_probabilities`` (the decisions'), ``probabilities`` (what the model reports:
        calibrated when it has a calibration and reports it, ``models/calibration.py``) and the ``logits``."""
        logits = self(batch)
        raw = torch.sigmoid(logits)
        reported = self.calibrated(logits) if self.applies_calibration else raw
        return {"raw_probabilities": raw, "probabilities": reported, "logits": logits}

    def calibrated(self, logits: torch.Tensor) -> torch.Tensor:
        return self.calibrated_with(logits, self.calibration_values())

    @staticmethod
    def calibrated_with(logits: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """The probabilities of ``logits`` ``[B, V, C]`` under calibration ``values`` ``[4, V, C]`` (scale, shift,
        prior weight, prior): the rescaled sigmoid, mixed with the prior."""
        return mixed(apply_post_calibration(logits, values[0], values[1]), values[2], values[3])

    def calibration_values(self) -> torch.Tensor:
        """``[4, V, C]``: the buffers' scale, shift, prior weight and prior (what ``fit_calibration`` returns)."""
        return torch.stack(
            [self.calibration_scale, self.calibration_shift, self.calibration_weight, self.calibration_prior]
        )

    @property
    def applies_calibration(self) -> bool:
        """Whether reported probabilities differ from the raw ones: a fitted calibration, not switched off."""
        fitted = bool(
            (self.calibration_scale != 1).any()
            or (self.calibration_shift != 0).any()
            or (self.calibration_weight != 1).any()
        )
        return self.reports_calibrated and fitted

    def dev_outputs(self, batch: Mapping[str, torch.Tensor]) -> dict:
        return self.dev_record(batch, self(batch))

    def dev_record(self, batch: Mapping[str, torch.Tensor], logits: torch.Tensor) -> dict:
        """One dev batch's outputs from its ``logits``: the raw probabilities (thresholds are fitted on them), the
        logits (calibrations are) and the gold of every annotator view."""
        return {"logits": logits.cpu(), "probabilities": torch.sigmoid(logits).cpu(), **gold_of(batch, "labels")}

    def fit_calibration(
        self, outputs, settings: CalibrationSettings, prior: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, dict]:
        """``[4, V, C]`` (scale, shift, prior weight, prior) of ``settings`` fitted on dev outputs (with ``logits``
        and ``gold``); ``prior`` ``[V, C]``: each label's share in the training part, which ``fallback: prior``
        needs (``models/prior_fallback.py``)."""
        shape = self.calibration_scale.shape
        if not outputs:
            return torch.stack([torch.ones(shape), torch.zeros(shape), torch.ones(shape), torch.zeros(shape)]), {}
        logits = torch.cat([batch["logits"] for batch in outputs])
        gold = torch.cat([batch["gold"] for batch in outputs])
        annotated = [batch.get("annotated") for batch in outputs]
        mask = None if any(a is None for a in annotated) else torch.cat(annotated)
        scale, shift, info = fit_post_calibration(logits, gold, mask, settings)
        weight, pi, fallback = fit_post_fallback(logits, gold, mask, settings, prior)
        return torch.stack([scale, shift, weight, pi]), {**settings.model_dump(), **info, **fallback}

    def keep_calibration(self, values: torch.Tensor) -> None:
        for buffer, value in zip(
            (self.calibration_scale, self.calibration_shift, self.calibration_weight, self.calibration_prior), values
        ):
            buffer.copy_(value.to(buffer))

    def apply_calibration(self, outputs, values: torch.Tensor) -> list[dict]:
        """Raw prediction outputs (with ``logits``) whose ``probabilities`` are calibrated with ``values`` instead."""
        return [{**batch, "probabilities": self.calibrated_with(batch["logits"].float(), values)} for batch in outputs]

    def calibration_report(self, values: torch.Tensor, info: dict) -> dict:
        def per_view(table: torch.Tensor, invert: bool) -> dict:
            return {
                f"a{v + 1}": {
                    label: round(1.0 / value if invert else value, 4)
                    for label, value in zip(self.labels, table[v].tolist())
                }
                for v in range(self.num_views)
            }

        report = {"temperature": per_view(values[0], True), **info}
        if info.get("method") == "platt":
            report["shift"] = per_view(values[1], False)
        if info.get("fallback", "none") != "none":
            report["prior_weight"], report["prior"] = per_view(values[2], False), per_view(values[3], False)
        if "fallback_evidence" in info:  # with a fallback margin: each label's dev evidence, by name
            report["fallback_evidence"] = dict(zip(self.labels, info["fallback_evidence"]))
        return report

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        """Probabilities and their decisions (``models.outputs.PostOutputs.predict_outputs``)."""
        return self.predict_outputs(batch)

    @property
    def warns_on_collapse(self) -> bool:
        """A soft-target head predicts shares, mostly below any threshold: few labels are no collapse (its dev
        measure is its soft loss, ``val/loss``)."""
        return not self.soft_targets

    def lowest_tuned_threshold(self) -> float:
        """The lowest threshold the decision rule may choose after training: ``decision.floor`` (or the grid's
        lowest) for a tuned rule, the thresholds themselves for a fixed one."""
        return float(self.decision.floor) if self.decision.floor is not None else float(THRESHOLD_GRID[0])

    def collapse_thresholds(self) -> torch.Tensor:
        """The thresholds a collapse is judged at (``[V, C]``): the decision rule's, and for a tuned rule, which is
        fitted only after training, the lowest it may choose, so that a head it can still rescue is no alarm."""
        if not self.decision.tuned:
            return self.thresholds
        return torch.clamp(self.thresholds, max=self.lowest_tuned_threshold())

    def collapse_message(self, predicted: float, gold: float) -> str:
        if self.decision.tuned:
            rule = f"a probability of {self.lowest_tuned_threshold():g}, the lowest threshold the tuned rule may choose"
            option = "a lower model.module.decision.floor"
        else:
            rule, option = f"τ = {self.threshold:g}", "a lower model.module.decision.fixed (τ)"
        return (
            f"the post heads gave {predicted:.4g} labels per view at their decision rule ({rule}) where the gold "
            f"data has {gold:.4g} per view (< {COLLAPSE_FRACTION:.0%}); they may have collapsed to predicting no "
            f"label. Try a higher model.module.head_lr, more epochs (trainer.max_epochs) or {option}."
        )

    def keep_decision(self, values: torch.Tensor) -> None:
        self.thresholds.copy_(values.to(self.thresholds))

    def decision_report(self, values: torch.Tensor, info: dict) -> dict:
        return {
            "thresholds": {
                f"a{v + 1}": {label: round(value, 4) for label, value in zip(self.labels, values[v].tolist())}
                for v in range(self.num_views)
            },
            "threshold_rule": info,
        }

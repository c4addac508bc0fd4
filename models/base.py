"""What MVML and MVMD share: the encoder, the optimiser recipe, metric logging and the collapse alarm.

The optimiser and schedule come in as Hydra partials (``_partial_: true``), so the MaChAmp recipe
(AdamW β=(0.9, 0.99), lr 1e-4, weight decay 0.01, slanted triangular schedule) lives in config and
any of it can be overridden from the command line. This class only decides *which* parameters get
which learning rate:
- ``discriminative_decay``: encoder layer ``l`` of ``L`` trains at ``lr · decay^(L − l)``, the
  embeddings (l = 0) lowest; task heads at the base lr (ULMFiT / MaChAmp).
- ``head_lr``: an absolute learning rate for the task heads (``None``: the optimiser's lr).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_warn
from torch import nn

from common.validation_outputs import ValidationOutputs
from models.calibration import CalibrationSettings
from models.collapse_warning import CollapseWarning
from models.decision_rules import DecisionSettings
from models.encoder import ChunkedEncoder
from models.layer_groups import encoder_layer_groups
from models.unfreezing import GradualUnfreezing

COLLAPSE_FRACTION = 0.05


def build_encoder(encoder: ChunkedEncoder | Mapping | None) -> ChunkedEncoder:
    """A ``ChunkedEncoder`` from itself, its config (a mapping, with or without the known ``_target_``) or ``None``."""
    if isinstance(encoder, nn.Module):
        return encoder
    if encoder is None:
        return ChunkedEncoder()
    from common.untrusted import refuse_code
    from models.encoder import ENCODERS

    config = dict(encoder)
    # a mapping may come from a saved file: its _target_ is only ever one this project wrote, never imported
    kind = (
        ENCODERS.name_of_target(config.pop("_target_"), None, "encoder._target_") if "_target_" in config else "chunked"
    )
    refuse_code(config, None, "encoder")
    return ENCODERS.get(kind, None, "encoder")(**config)


def default_optimizer(params, **overrides) -> torch.optim.Optimizer:
    """MaChAmp's AdamW, for code that builds a model without Hydra."""
    settings = {"lr": 1e-4, "betas": (0.9, 0.99), "weight_decay": 0.01, **overrides}
    return torch.optim.AdamW(params, **settings)


def masked_views(views_per_post: list[list], annotated: torch.Tensor | None) -> list[list]:
    """Each post's gold views with the ones its ``annotated`` row marks False replaced by ``None`` (what the metrics
    skip: a missing annotation is not scored as "no label")."""
    if annotated is None:
        return views_per_post
    rows = annotated.cpu().tolist()
    return [[view if on else None for view, on in zip(post, row)] for post, row in zip(views_per_post, rows)]


def scoring_targets(batch: Mapping[str, torch.Tensor], key: str) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The gold a labelled batch is *scored* against, and its ``annotated`` mask: ``gold_<key>`` (every annotator
    view) when the model trains on aggregated targets (``data.targets`` union, majority, intersection: the batch's
    ``key`` holds the aggregate the loss uses), else ``key`` itself. Dev F1, best-epoch selection and tuned decision
    rules use it, so dev is scored as the test files are: the one prediction against each view."""
    if f"gold_{key}" in batch:
        return batch[f"gold_{key}"], batch.get("gold_annotated")
    return batch[key], batch.get("annotated")


def gold_of(batch: Mapping[str, torch.Tensor], key: str) -> dict:
    """``gold`` and ``annotated`` of a labelled batch on the CPU (nothing for an unlabelled one): every annotator
    view (``scoring_targets``), what decision rules and calibrations are fitted against."""
    if key not in batch and f"gold_{key}" not in batch:
        return {}
    gold, annotated = scoring_targets(batch, key)
    return {"gold": gold.cpu(), "annotated": None if annotated is None else annotated.cpu()}


def optimizer_with_schedule(recipe: FallacyModule, param_groups: list[dict], lrs: list, trained: L.LightningModule):
    """``configure_optimizers``'s answer for ``param_groups``: ``recipe``'s optimiser over them, each group's lr set
    as ``lrs`` says (``parameter_groups``), and ``recipe``'s schedule stepped per batch over the steps of the run
    that trains ``trained`` (read only when there is a schedule)."""
    optimizer = recipe.optimizer_factory(param_groups)
    for group, (kind, value) in zip(optimizer.param_groups, lrs):
        group["lr"] = value if kind == "absolute" else group["lr"] * value
    if recipe.scheduler_factory is None:
        return optimizer
    total_steps = int(trained.trainer.estimated_stepping_batches)
    scheduler = recipe.scheduler_factory(optimizer, total_steps=total_steps)
    return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class FallacyModule(L.LightningModule):
    """Base LightningModule: the encoder, the optimiser recipe and the evaluation loop MVML and MVMD share.

    Subclasses define ``forward``, ``training_loss``, ``_evaluate`` (decode a labelled batch and update the
    metric and the predicted/gold counts), the prediction methods of their level (``models/outputs.py``), and for
    their decision rule (``decision``, a ``DecisionSettings``) where its values live (``keep_decision``) and how
    they are reported (``decision_report``); ``tune_decisions`` is the same for both. Everything that is not the
    encoder counts as the heads (``heads_parameters``).
    """

    def __init__(
        self,
        encoder: ChunkedEncoder | Mapping | None = None,
        optimizer: Callable[..., torch.optim.Optimizer] | None = None,
        scheduler: Callable[..., Any] | None = None,
        discriminative_decay: float | None = None,
        gradual_unfreezing: bool = False,
        head_lr: float | None = None,
        val_metric=None,
    ):
        super().__init__()
        self.encoder = build_encoder(encoder)
        self.optimizer_factory = optimizer or default_optimizer
        self.scheduler_factory = scheduler
        self.discriminative_decay = discriminative_decay
        self.gradual_unfreezing = gradual_unfreezing
        self.head_lr = head_lr
        self.val_metric = val_metric
        self.test_metric = val_metric.clone() if val_metric is not None else None
        self._counts = {"val": [0, 0, 0], "test": [0, 0, 0]}  # predicted, gold (spans or labels), judged
        self._gold_views: dict[str, int] = {}
        # whether predictions report the calibrated probabilities (when a calibration was fitted) or the raw ones
        self.reports_calibrated = True
        # the dev outputs of the latest validation pass, when the runner records them (to fit the rule and calibration on)
        self.validation_outputs = ValidationOutputs()

    @torch.no_grad()
    def collect_in_eval(self, batches, collect):
        """``[collect(batch) for batch in batches]`` in eval mode on this module's device (for tuning decision
        rules on dev); the module's train/eval mode is restored afterwards."""
        was_training = self.training
        self.eval()
        try:
            return [
                collect({k: v.to(self.device) if torch.is_tensor(v) else v for k, v in batch.items()})
                for batch in batches
            ]
        finally:
            self.train(was_training)

    def record_encoder_hparams(self) -> None:
        """Put the encoder's identity into the checkpoint's hyperparameters (it is not pickled there)."""
        self.hparams["encoder_name"] = self.encoder.name_or_path
        self.hparams["encoder_max_length"] = self.encoder.max_length

    # --- optimisation ------------------------------------------------------------------------------
    def encoder_layer_groups(self) -> list[list[nn.Parameter]]:
        """The encoder's trainable parameters by layer, bottom to top (with LoRA: the adapters only)."""
        groups = encoder_layer_groups(self.encoder.model)
        if not self.encoder.has_adapters:
            return groups
        base = self.encoder.base_weights.parameters_of(self.encoder)
        return [[p for p in group if id(p) not in base] for group in groups]

    def heads_parameters(self) -> list[nn.Parameter]:
        encoder_ids = {id(p) for p in self.encoder.parameters()}
        return [p for p in self.parameters() if id(p) not in encoder_ids]

    def parameter_groups(self) -> tuple[list[dict], list[float | None]]:
        """Optimiser groups (encoder layers bottom to top, then the heads) and, per group, how its lr is set.

        Each group gets ``("factor", f)`` (the optimiser's lr times ``f``: discriminative decay ``d ** (top -
        layer)`` for encoder layers, 1 without decay) or, for the heads when ``head_lr`` is set,
        ``("absolute", head_lr)``; ``configure_optimizers`` applies them after the optimiser is built.
        """
        groups = self.encoder_layer_groups()
        top = len(groups) - 1
        param_groups, lrs = [], []
        for level, parameters in enumerate(groups):
            if parameters:
                param_groups.append({"params": parameters, "name": f"encoder.{level}"})
                factor = self.discriminative_decay ** (top - level) if self.discriminative_decay else 1.0
                lrs.append(("factor", factor))
        param_groups.append({"params": self.heads_parameters(), "name": "heads"})
        lrs.append(("absolute", self.head_lr) if self.head_lr is not None else ("factor", 1.0))
        return param_groups, lrs

    def configure_optimizers(self):
        param_groups, lrs = self.parameter_groups()
        return optimizer_with_schedule(self, param_groups, lrs, self)

    def configure_callbacks(self):
        return [GradualUnfreezing()] if self.gradual_unfreezing else []

    # --- the decision rule ---------------------------------------------------------------------------
    def keep_decision_settings(self, decision: DecisionSettings) -> None:
        """Hold the rule's settings, also as plain values in the hyperparameters (a checkpoint stores no object)."""
        self.decision = decision
        self.hparams["decision"] = decision.model_dump()

    @property
    def tuned(self) -> bool:
        """Whether the decision rule is fitted on dev after training (``decision.tuned``)."""
        return self.decision.tuned

    @torch.no_grad()
    def dev_pass(self, batches) -> list[dict]:
        """``dev_outputs`` of every labelled dev batch, in eval mode: what decision rules and calibrations are fitted
        on (a validation pass with ``validation_outputs`` recording keeps the same outputs)."""
        return self.collect_in_eval(batches, self.dev_outputs)

    def tune_decisions(self, batches) -> dict | None:
        """Fit the decision rule (thresholds, O biases) on labelled dev batches after training and keep it.

        Returns what was tuned (for the fold's metrics), or ``None`` when the model uses a fixed rule. The fit is
        the level's ``fit_decision`` (``models/outputs.py``), the one the quality benchmark fits its rules with.
        """
        return self.fit_decision_on(self.dev_pass(batches)) if self.decision.tuned else None

    @torch.no_grad()
    def fit_decision_on(self, outputs: list[dict]) -> dict | None:
        """``tune_decisions`` on the outputs of a dev pass."""
        if not self.decision.tuned or not outputs:
            return None
        values, info = self.fit_decision(outputs, self.decision)
        self.keep_decision(values)
        return self.decision_report(values, info)

    def use_fixed_decision(self) -> None:
        """Decide with the fixed rule (``decision.fixed``) from now on, whatever was tuned: the same trained model
        under its untuned rule."""
        fixed = self.decision.model_copy(update={"tuned": False})
        self.keep_decision(self.fit_decision([], fixed)[0])
        self.keep_decision_settings(fixed)

    def keep_decision(self, values: torch.Tensor) -> None:
        """Store fitted decision values in the buffer prediction uses (saved with the weights)."""
        raise NotImplementedError

    def decision_report(self, values: torch.Tensor, info: dict) -> dict:
        """The fitted values per view and label, and ``info``, as the fold's metrics record them."""
        raise NotImplementedError

    # --- calibration of the probabilities (models/calibration.py) ------------------------------------------------
    def keep_calibration_settings(self, calibration: CalibrationSettings) -> None:
        """Hold the calibration's settings, also as plain values in the hyperparameters."""
        self.calibration = calibration
        self.hparams["calibration"] = calibration.model_dump()

    def calibrate(self, batches, prior: torch.Tensor | None = None) -> dict | None:
        """Fit the calibration (``calibration``) on labelled dev batches after training and keep it; what was
        fitted (for the fold's metrics), or ``None`` when it fits nothing. The fit is ``fit_calibration``, the one
        the quality benchmark calls too; ``prior`` ``[V, C]`` (each label's share in the training part, per model
        view) is what a prior fallback mixes in (``models/prior_fallback.py``)."""
        return self.fit_calibration_on(self.dev_pass(batches), prior) if self.calibration.fits else None

    @torch.no_grad()
    def fit_calibration_on(self, outputs: list[dict], prior: torch.Tensor | None = None) -> dict | None:
        """``calibrate`` on the outputs of a dev pass."""
        if not self.calibration.fits or not outputs:
            return None
        values, info = self.fit_calibration(outputs, self.calibration, prior)
        self.keep_calibration(values)
        return self.calibration_report(values, info)

    def use_calibration(self, on: bool = True) -> None:
        """Report the calibrated probabilities (``True``, the default) or the raw ones (``--uncalibrated``)."""
        self.reports_calibrated = bool(on)

    def fit_calibration(
        self, outputs, settings: CalibrationSettings, prior: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, dict]:
        raise NotImplementedError

    def keep_calibration(self, values: torch.Tensor) -> None:
        raise NotImplementedError

    def calibration_report(self, values: torch.Tensor, info: dict) -> dict:
        raise NotImplementedError

    # --- training and evaluation ---------------------------------------------------------------------
    def training_loss(self, batch) -> torch.Tensor:
        """The objective on one labelled batch (each model's own)."""
        raise NotImplementedError

    def training_step(self, batch, batch_idx):
        loss = self.training_loss(batch)
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["input_ids"].shape[0])
        return loss

    def validation_step(self, batch, batch_idx, dataloader_idx: int = 0):
        recorder = self.validation_outputs
        recorder.keep(dataloader_idx, self._evaluate(batch, "val", record=recorder.recording))

    def test_step(self, batch, batch_idx):
        self._evaluate(batch, "test")

    def _evaluate(self, batch, split: str, record: bool = False) -> dict | None:
        """Score one batch of a labelled split (each model decodes and updates its metric); with ``record``, return
        its ``dev_outputs`` from the same forward pass."""
        raise NotImplementedError

    def metric_for(self, split: str):
        return self.val_metric if split == "val" else self.test_metric

    def count_predictions(
        self, split: str, predicted: int, gold: int, gold_views: int | None = None, judged: int | None = None
    ) -> None:
        """Add a batch's predicted and gold spans / labels; ``gold_views``: the views the gold holds (default the
        model's; more for a one-view model scored against every annotator); ``judged``: the predictions a collapse
        is judged on, when not ``predicted`` (``collapse_message``)."""
        counts = self._counts[split]
        counts[0] += predicted
        counts[1] += gold
        counts[2] += predicted if judged is None else judged
        self._gold_views[split] = gold_views or self.num_views

    def on_validation_epoch_start(self) -> None:
        self._counts["val"] = [0, 0, 0]
        self.validation_outputs.start()

    def on_test_epoch_start(self) -> None:
        self._counts["test"] = [0, 0, 0]

    def on_validation_epoch_end(self) -> None:
        self._finish_epoch("val")

    def on_test_epoch_end(self) -> None:
        self._finish_epoch("test")

    def _finish_epoch(self, split: str) -> None:
        metric = self.metric_for(split)
        if metric is not None and getattr(metric, "update_called", True):
            result = metric.compute()
            for view, scores in result.items():
                for name, value in scores.items():
                    self.log(f"{split}/{view}/{name}", float(value), sync_dist=True)
            self.log(f"{split}/f1", float(result["avg"]["f1"]), prog_bar=True, sync_dist=True)
            metric.reset()
        self._warn_if_collapsed(split)

    # whether a split's predicted/gold counts can show a collapse (a soft-target post head, whose probabilities are
    # shares mostly below any threshold, predicts few labels by design: it is judged by its dev loss)
    warns_on_collapse = True

    def _warn_if_collapsed(self, split: str) -> None:
        """The 40-CRF collapse (every decoder says O) looks fine in the loss; say so loudly. Counted per view (a
        one-view model against the mean of the gold views) and summed over the processes of a distributed run
        (each holds its share of the posts), warned about once, in the words of the model's heads
        (``collapse_message``)."""
        if self.trainer is not None and self.trainer.sanity_checking:
            return
        local = torch.tensor(self._counts[split], dtype=torch.int64, device=self.device)
        _, gold, judged = (int(n) for n in self.trainer.strategy.reduce(local, reduce_op="sum"))
        per_view = judged / self.num_views, gold / self._gold_views.get(split, self.num_views)
        if self.warns_on_collapse and gold > 0 and per_view[0] < COLLAPSE_FRACTION * per_view[1]:
            rank_zero_warn(f"{split}: {self.collapse_message(*per_view)}", category=CollapseWarning)
        # each process logs its own counts; Lightning sums them (a mean would halve them under two processes)
        mine_predicted, mine_gold, _ = self._counts[split]
        self.log(f"{split}/predicted_{self.unit_name}", float(mine_predicted), sync_dist=True, reduce_fx="sum")
        self.log(f"{split}/gold_{self.unit_name}", float(mine_gold), sync_dist=True, reduce_fx="sum")

    def collapse_message(self, predicted: float, gold: float) -> str:
        """The collapse warning for ``predicted`` and ``gold`` items per view, naming the options that help."""
        raise NotImplementedError

    unit_name = "items"

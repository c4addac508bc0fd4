"""MVML: multi-view, multi-label post classification (post-c, post-f).

One multi-label head per annotator view on the post's sentence vector (``models/heads.py``): sigmoid
scores, binary cross-entropy, and a label is predicted when its probability reaches its threshold:
``threshold`` (τ = 0.7 in the paper) for every label, or ``threshold="tuned"``: one threshold per view and
label picked on the fold's dev set after training (``tune_decisions``, ``models/decision_rules.py``),
τ = ``fallback_threshold`` where dev has fewer than ``min_dev_positives`` positives. The thresholds live
in the ``thresholds`` buffer ``[V, C]``, so they are saved and loaded with the weights. ``tuning_scope``
(``own`` | ``shared`` | ``shrunk``), ``tuning_shrinkage``, ``tuning_confirm`` and ``threshold_floor`` choose how
they are fitted (``models/decision_rules.py``).

``soft_targets=True`` (``data.targets=soft``): one head (``num_views=1``) trained with BCE against each post's
share of annotated views per label (``MultiLabelHead.soft_loss``), so its sigmoid is the predicted share of
annotators; the batches keep every view's targets ``[B, V, C]`` and its prediction is scored against each view.
A batch's ``annotated`` ``[B, V]`` (views with the ``?`` marker are False) masks the missing annotations out of
the loss and of the dev scores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

from models.base import FallacyModule, masked_views, scoring_targets
from models.decision_rules import check_scope, fit_thresholds, post_observations, views_per_model_view
from models.encoder import ChunkedEncoder
from models.heads import MultiLabelHead


class MVML(FallacyModule):
    """Post model. ``labels``: the grain's label strings (sorted); ``num_views``: annotators."""

    unit_name = "labels"

    def __init__(
        self,
        encoder: ChunkedEncoder | Mapping | None = None,
        num_views: int = 2,
        labels: Sequence[str] = (),
        optimizer: Callable[..., torch.optim.Optimizer] | None = None,
        scheduler: Callable[..., Any] | None = None,
        threshold: float | str = 0.7,
        discriminative_decay: float | None = None,
        gradual_unfreezing: bool = False,
        head_lr: float | None = None,
        val_metric=None,
        fallback_threshold: float = 0.7,
        min_dev_positives: int = 3,
        tuning_scope: str = "own",
        tuning_shrinkage: float = 20.0,
        tuning_confirm: bool = False,
        threshold_floor: float = 0.3,
        soft_targets: bool = False,
    ):
        super().__init__(encoder, optimizer, scheduler, discriminative_decay, gradual_unfreezing, head_lr, val_metric)
        labels = [str(label) for label in labels]
        if not labels:
            raise ValueError("MVML needs the task's labels")
        self.tuned = threshold == "tuned"
        initial = fallback_threshold if self.tuned else threshold
        if isinstance(initial, str) or not 0.0 < initial < 1.0:
            raise ValueError(f"threshold must be 'tuned' or lie strictly between 0 and 1, got {threshold!r}")
        self.save_hyperparameters(ignore=["encoder", "optimizer", "scheduler", "val_metric"])
        self.record_encoder_hparams()
        self.labels = labels
        self.num_views = num_views
        self.threshold = float(initial)
        self.min_dev_positives = min_dev_positives
        self.tuning_scope = check_scope(tuning_scope)
        self.tuning_shrinkage = float(tuning_shrinkage)
        self.tuning_confirm = bool(tuning_confirm)
        self.threshold_floor = float(threshold_floor)
        self.soft_targets = bool(soft_targets)
        if self.soft_targets and num_views != 1:
            raise ValueError(f"soft_targets trains one head: num_views must be 1, got {num_views}")
        self.head = MultiLabelHead(self.encoder.hidden_size, num_views, len(labels))
        self.register_buffer("thresholds", torch.full((num_views, len(labels)), float(initial)))
        self._register_load_state_dict_pre_hook(self._keep_thresholds_of_older_exports)

    def _keep_thresholds_of_older_exports(self, state_dict, prefix, *args, **kwargs) -> None:
        """Models exported before tuned thresholds existed have no buffer: they used the one τ."""
        state_dict.setdefault(prefix + "thresholds", torch.full_like(self.thresholds, self.threshold))

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

    def training_step(self, batch, batch_idx):
        loss = self.loss(self(batch), batch)
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["input_ids"].shape[0])
        return loss

    def _evaluate(self, batch, split: str) -> None:
        if "labels" not in batch:  # unlabelled data: nothing to score
            return
        logits = self(batch)
        size = batch["input_ids"].shape[0]
        self.log(f"{split}/loss", self.loss(logits, batch), batch_size=size, sync_dist=True)
        predicted = self.label_sets(self.decide(torch.sigmoid(logits)))
        gold_labels, annotated = scoring_targets(batch, "labels")
        gold = masked_views(self.label_sets(gold_labels > 0.5), annotated)
        self.count_predictions(
            split, sum(len(v) for post in predicted for v in post), sum(len(v or ()) for post in gold for v in post)
        )
        metric = self.metric_for(split)
        if metric is not None:
            metric.update(predicted, gold)

    def label_sets(self, chosen: torch.Tensor) -> list[list[tuple[str, ...]]]:
        """Label strings per post per view (sorted, as the files list them) from booleans ``[B, V, C]``."""
        rows = chosen.cpu().tolist()
        return [[tuple(label for label, on in zip(self.labels, view) if on) for view in post] for post in rows]

    def decide(self, probabilities: torch.Tensor) -> torch.Tensor:
        """Booleans ``[B, V, C]``: each label's probability against its view's threshold for it."""
        return probabilities >= self.thresholds.to(probabilities.dtype)

    def predict_step(self, batch, batch_idx, dataloader_idx: int = 0):
        probabilities = torch.sigmoid(self(batch))
        return {
            "post_index": batch["post_index"].cpu(),
            "probabilities": probabilities.cpu(),
            "predicted": self.decide(probabilities).cpu(),
        }

    def _dev_observations(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Dev probabilities and targets ``[N, V, C]`` for threshold tuning against every gold view of the batch
        (``scoring_targets``; ``models.decision_rules.post_observations`` says how one head meets them)."""
        targets, annotated = scoring_targets(batch, "labels")
        probabilities = torch.sigmoid(self(batch)).float().cpu()
        return post_observations(probabilities, targets.float().cpu(), annotated, self.num_views)

    @staticmethod
    def _gold_views(batch) -> int:
        return scoring_targets(batch, "labels")[0].shape[1]

    @torch.no_grad()
    def tune_decisions(self, batches: Iterable[Mapping[str, torch.Tensor]]) -> dict | None:
        """With ``threshold="tuned"``: fit the per-view, per-label thresholds on labelled dev batches."""
        if not self.tuned:
            return None
        collected = self.collect_in_eval(
            batches, lambda batch: (self._dev_observations(batch), self._gold_views(batch))
        )
        if not collected:
            return None
        probabilities, targets = zip(*(observations for observations, _ in collected))
        tuned, info = fit_thresholds(
            torch.cat(probabilities),
            torch.cat(targets),
            self.threshold,
            self.min_dev_positives,
            self.tuning_scope,
            self.tuning_shrinkage,
            self.tuning_confirm,
            self.threshold_floor,
            views_per_item=views_per_model_view(collected[0][1], self.num_views),  # evidence is counted per view
        )
        self.thresholds.copy_(tuned.to(self.thresholds))
        return {
            "thresholds": {
                f"a{v + 1}": {label: round(value, 4) for label, value in zip(self.labels, tuned[v].tolist())}
                for v in range(self.num_views)
            },
            "threshold_rule": info,
        }

"""A causal LM with LoRA adapters (peft) as a LightningModule: answer-only loss, adapter-only checkpoints.

Only the adapter weights train; the base stays frozen (and may be 4-bit on a GPU: QLoRA). The loss is the
next-token cross-entropy over the answer tokens alone: prompt and padding carry the label ``IGNORE_INDEX``
(-100), so the model is never taught to reproduce the prompt. Lightning checkpoints keep only the trainable
tensors (a 7B base would otherwise be copied into every checkpoint), and adapters are saved with peft's
``save_pretrained`` as safetensors, reloadable onto the same base and optionally merged into it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import lightning.pytorch as pl
import torch
import torch.nn.functional as F

from common.errors import UserError

log = logging.getLogger(__name__)
IGNORE_INDEX = -100


@dataclass
class LoraSettings:
    """The adapter's shape (``lora.*`` in conf/task/missci-*.yaml)."""

    rank: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: Sequence[str] = field(default_factory=lambda: ("q_proj", "k_proj", "v_proj", "o_proj"))


@dataclass
class OptimiserSettings:
    learning_rate: float = 2e-4
    weight_decay: float = 0.0
    warmup_steps: int = 0


def add_lora(
    model,
    settings: LoraSettings,
    quantized: bool = False,
    gradient_checkpointing: bool = False,
    task_type: str = "CAUSAL_LM",
    settings_key: str = "lora",
):
    """Wrap ``model`` in a peft LoRA model: base weights frozen, adapters trainable. ``task_type``: peft's
    (``FEATURE_EXTRACTION`` for a base model used as an encoder); ``settings_key``: where the settings live in the
    config, for the message about target modules the model does not have."""
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    if quantized:  # QLoRA: norms in fp32, inputs that require grads, optional gradient checkpointing
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gradient_checkpointing)
    elif gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    config = LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=list(settings.target_modules),
        bias="none",
        task_type=task_type,
    )
    try:
        peft_model = get_peft_model(model, config)
    except ValueError as err:  # e.g. a target module name the architecture does not have
        raise UserError(
            f"LoRA cannot be attached: {err}",
            fix=f"set {settings_key}.target_modules to linear layer names of this model "
            "(LLaMA: q_proj k_proj v_proj o_proj gate_proj up_proj down_proj).",
        ) from None
    if getattr(peft_model, "config", None) is not None:
        peft_model.config.use_cache = False  # the KV cache is useless (and wasteful) while training
    return peft_model


def answer_only_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy over positions whose label is not ``IGNORE_INDEX``."""
    shifted_logits = logits[:, :-1, :].float()
    shifted_labels = labels[:, 1:]
    return F.cross_entropy(
        shifted_logits.reshape(-1, shifted_logits.size(-1)), shifted_labels.reshape(-1), ignore_index=IGNORE_INDEX
    )


def pad_batch(features: Sequence[dict], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Right-pad ``input_ids``/``labels`` (labels with -100) and build the attention mask.

    Right padding keeps position ids 0..n-1 for every real token, as the model sees them when generating.
    """
    width = max(len(f["input_ids"]) for f in features)
    ids = torch.full((len(features), width), pad_token_id, dtype=torch.long)
    labels = torch.full((len(features), width), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(features), width), dtype=torch.long)
    for row, feature in enumerate(features):
        n = len(feature["input_ids"])
        ids[row, :n] = torch.tensor(feature["input_ids"], dtype=torch.long)
        labels[row, :n] = torch.tensor(feature["labels"], dtype=torch.long)
        mask[row, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


class LoraCausalLM(pl.LightningModule):
    """Trains the LoRA adapters of a peft model on padded (input_ids, attention_mask, labels) batches."""

    def __init__(self, model, optimiser: OptimiserSettings | None = None):
        super().__init__()
        self.model = model
        self.model.train()  # loaders hand out models in eval mode, which would switch LoRA dropout off
        self.optimiser = optimiser or OptimiserSettings()
        self.strict_loading = False  # checkpoints hold only the adapter tensors
        self.save_hyperparameters({"optimiser": vars(self.optimiser)})

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    def training_step(self, batch, batch_idx):
        loss = answer_only_loss(self(batch["input_ids"], batch["attention_mask"]), batch["labels"])
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["input_ids"].size(0))
        return loss

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def configure_optimizers(self):
        optimiser = torch.optim.AdamW(
            self.trainable_parameters(), lr=self.optimiser.learning_rate, weight_decay=self.optimiser.weight_decay
        )
        warmup = max(int(self.optimiser.warmup_steps), 0)
        if not warmup:
            return optimiser
        schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: min(1.0, (step + 1) / warmup))
        return {"optimizer": optimiser, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        """Keep only trainable tensors: a checkpoint stays megabytes even for a 70B base."""
        trainable = {name for name, p in self.named_parameters() if p.requires_grad}
        checkpoint["state_dict"] = {k: v for k, v in checkpoint["state_dict"].items() if k in trainable}


def save_adapter(peft_model, directory: str | Path) -> Path:
    """``adapter_model.safetensors`` + ``adapter_config.json`` in ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(directory), safe_serialization=True)
    return directory


def load_adapter(base_model, directory: str | Path, trainable: bool = False):
    """The base model with the saved adapters attached (weights read from safetensors)."""
    from peft import PeftModel

    directory = Path(directory)
    if not (directory / "adapter_config.json").is_file():
        raise UserError(
            "no LoRA adapter here (adapter_config.json is missing).",
            path=directory,
            fix="pass the adapter folder a fine-tuning run wrote (results/<name>/fold<k>/adapter).",
        )
    return PeftModel.from_pretrained(base_model, str(directory), is_trainable=trainable)


def merge_adapter(peft_model):
    """Fold the adapters into the base weights (a plain transformers model, no peft needed to run it)."""
    if getattr(getattr(peft_model, "base_model", None), "model", None) is not None and getattr(
        peft_model.base_model.model, "is_loaded_in_4bit", False
    ):
        log.warning(
            "merging LoRA into a 4-bit base rounds the merged weights; for exact merged weights "
            "reload the base in bf16 (llm.load_in_4bit=false) and merge the saved adapter."
        )
    return peft_model.merge_and_unload()


def count_parameters(model) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    return sum(p.numel() for p in model.parameters() if p.requires_grad), total

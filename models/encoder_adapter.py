"""LoRA adapters on the shared encoder, and a state dict that holds them without the frozen base weights.

With ``encoder.peft=lora`` the encoder's own weights stay frozen (peft); the adapters, the heads and the CRFs
train. Every file this project writes from a model's ``state_dict`` (a fold's ``model.safetensors``, the best-epoch
weights, Lightning's ``last.ckpt``, an exported folder) then holds the adapter and the heads only: a 7B base would
otherwise be copied into each of them. The base weights come back from where they were loaded (``model.json``
names the base by hub id or folder); loading such a state dict leaves them as they are.
"""

from __future__ import annotations

from torch import nn

from models.encoder_settings import LoraBlock


def add_encoder_lora(model: nn.Module, lora: LoraBlock, quantized: bool, gradient_checkpointing: bool) -> nn.Module:
    """``model`` wrapped in peft's LoRA for feature extraction (its forward is the base model's)."""
    from models.llm.lora_lm import LoraSettings, add_lora

    settings = LoraSettings(rank=lora.rank, alpha=lora.alpha, dropout=lora.dropout, target_modules=lora.target_modules)
    return add_lora(
        model,
        settings,
        quantized=quantized,
        gradient_checkpointing=gradient_checkpointing,
        task_type="FEATURE_EXTRACTION",
        settings_key="encoder.lora",
    )


class BaseWeightsLeftOut:
    """State-dict hooks on ``owner`` (the encoder module): its frozen base parameters ``names`` (relative to it) are
    left out of every state dict it is part of, and a state dict without them loads (they keep their values)."""

    def __init__(self, owner: nn.Module, names: set[str]):
        self.names = frozenset(names)
        self._prefixes: list[str] = []
        # torch marks each hook it is given, which a bound method does not allow: plain functions around them
        owner.register_state_dict_post_hook(lambda *args: self._leave_out(*args))
        owner.register_load_state_dict_pre_hook(lambda *args: self._remember_prefix(*args))
        owner.register_load_state_dict_post_hook(lambda *args: self._forgive_base(*args))

    def parameters_of(self, owner: nn.Module) -> set[int]:
        """The ``id`` of each base parameter of ``owner`` (those that never train)."""
        return {id(parameter) for name, parameter in owner.named_parameters() if name in self.names}

    def _leave_out(self, module, state_dict, prefix, local_metadata) -> None:
        for name in self.names:
            state_dict.pop(prefix + name, None)

    def _remember_prefix(self, module, state_dict, prefix, *args) -> None:
        self._prefixes.append(prefix)

    def _forgive_base(self, module, incompatible_keys) -> None:
        prefixes, self._prefixes = self._prefixes, []
        base = {prefix + name for prefix in prefixes for name in self.names}
        incompatible_keys.missing_keys[:] = [key for key in incompatible_keys.missing_keys if key not in base]


def frozen_parameter_names(module: nn.Module) -> set[str]:
    """The names (relative to ``module``) of its parameters that do not train."""
    return {name for name, parameter in module.named_parameters() if not parameter.requires_grad}

"""Removing the causal mask of a decoder LLM used as the encoder, in every layer or only in the top K.

LS-unLLaMA (Li et al., 2023) removes Llama's causal mask so that every token's vector sees the whole post, which
helps token labelling; Dukić & Šnajder (2024) remove it only in some layers. transformers builds one mask per
forward pass (``create_causal_mask``, shared by every layer), so a per-layer choice is made where each chosen
layer is called: a forward pre-hook hands it the padding-only mask that transformers' own
``create_bidirectional_mask`` builds for the model's attention implementation (eager, sdpa, ...) from the 2D
padding mask of the call, and the layer's attention modules are marked ``is_causal = False`` (sdpa and flash
attention otherwise apply causality themselves when the mask is empty). Layers below the chosen ones keep the
model's causal mask.
"""

from __future__ import annotations

from torch import nn

from common.errors import UserError
from models.layer_groups import layer_list


def is_causal_model(model: nn.Module) -> bool:
    """Whether ``model``'s attention is causal (any attention module marked ``is_causal``; BERT's are not)."""
    return any(getattr(module, "is_causal", False) is True for module in model.modules())


class BidirectionalTop:
    """The hooks that make the top ``count`` layers of ``model`` (``None``: all of them) attend both ways."""

    def __init__(self, model: nn.Module, count: int | None, where: str):
        from transformers.masking_utils import create_bidirectional_mask

        self._create = create_bidirectional_mask
        self.config = model.config
        layers = layer_list(model)
        if layers is None:
            raise UserError(
                f"{where}: cannot find the layer list of this model, so the causal mask cannot be removed",
                fix="use encoder.attention=null with this model",
            )
        owner, layer_modules = layers
        total = len(layer_modules)
        if count is not None and count > total:
            raise UserError(
                f"encoder.attention=bidirectional-top-{count} asks for more layers than the model's {total}",
                fix=f"use bidirectional-top-K with K ≤ {total}, or bidirectional for every layer",
            )
        self.layers = list(layer_modules) if count is None else list(layer_modules)[total - count :]
        self.padding = self.mask = None
        self.handles = [owner.register_forward_pre_hook(self._remember_padding, with_kwargs=True)]
        for layer in self.layers:
            for module in layer.modules():
                if hasattr(module, "is_causal"):
                    module.is_causal = False
            self.handles.append(layer.register_forward_pre_hook(self._bidirectional_mask, with_kwargs=True))

    def _remember_padding(self, module, args, kwargs):
        self.padding = kwargs.get("attention_mask")
        self.mask = None  # built once per forward pass, by the first chosen layer

    def _bidirectional_mask(self, module, args, kwargs):
        if self.mask is None:
            hidden = args[0] if args else kwargs["hidden_states"]
            self.mask = self._create(config=self.config, inputs_embeds=hidden, attention_mask=self.padding)
        kwargs["attention_mask"] = self.mask
        return args, kwargs


def set_attention(model: nn.Module, mode: str | None, bidirectional_layers: int | None) -> BidirectionalTop | None:
    """Apply ``encoder.attention`` (``mode``; ``bidirectional_layers``: how many top layers, ``None`` all, 0 none) to
    the base transformer ``model``; one message for a model whose attention is not causal."""
    if mode is None:
        return None
    if not is_causal_model(model):
        raise UserError(
            f"encoder.attention={mode} is for a causal (decoder) model; this encoder "
            f"({type(model).__name__}) already attends both ways",
            fix="remove encoder.attention (encoder.attention=null), or choose a decoder LLM as the encoder",
        )
    if bidirectional_layers == 0:
        return None
    return BidirectionalTop(model, bidirectional_layers, f"encoder.attention={mode}")

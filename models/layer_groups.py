"""Parameter groups of a transformer encoder, bottom (embeddings) to top (last layer).

Discriminative fine-tuning (a lower learning rate for lower layers) and gradual unfreezing (top layers
first) both need to know which parameters form which layer, for any Hugging Face encoder. The layers
are the ``ModuleList`` whose length is ``config.num_hidden_layers``; everything before it (embeddings)
is group 0, layer ``i`` is group ``i + 1``, and what comes after (pooler, final norm) joins the top group.
"""

from __future__ import annotations

from torch import nn


def _layer_list_name(model: nn.Module) -> str | None:
    count = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    candidates = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, nn.ModuleList) and count is not None and len(module) == count
    ]
    if not candidates:
        return None
    name, _ = max(candidates, key=lambda item: sum(p.numel() for p in item[1].parameters()))
    return name


def layer_list(model: nn.Module) -> tuple[nn.Module, nn.ModuleList] | None:
    """The module that runs the layers (e.g. ``LlamaModel``) and its layer list, or ``None`` when not recognisable."""
    name = _layer_list_name(model)
    if name is None:
        return None
    parent = name.rpartition(".")[0]
    return (model.get_submodule(parent) if parent else model), model.get_submodule(name)


def encoder_layer_groups(model: nn.Module) -> list[list[nn.Parameter]]:
    """``L + 1`` lists of parameters: ``[embeddings, layer 1, …, layer L (+ anything above)]``.

    A model without a recognisable layer list is one group (so both techniques degrade gracefully).
    """
    layers = _layer_list_name(model)
    if layers is None:
        return [list(model.parameters())]
    count = len(model.get_submodule(layers))
    groups: list[list[nn.Parameter]] = [[] for _ in range(count + 1)]
    prefix = layers + "."
    seen_layers = False
    for name, parameter in model.named_parameters():
        if name.startswith(prefix):
            index = int(name[len(prefix) :].split(".", 1)[0])
            groups[index + 1].append(parameter)
            seen_layers = True
        elif not seen_layers:
            groups[0].append(parameter)
        else:
            groups[count].append(parameter)
    return groups

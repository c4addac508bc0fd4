"""Loading a ``model.safetensors`` into a model built from its config, with the file checked first.

safetensors holds tensors only (no pickles), and its header lists every tensor's name and shape, so the file
is compared with the model the config describes before a single tensor is read: a file of another
architecture, label set or encoder ends in one message naming the tensor, not in a half-loaded model or a
shape error deep inside torch. Loaded tensors must be finite (a NaN weight predicts garbage silently).
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file

from common.errors import UserError


def tensor_shapes(path: str | Path, fix: str) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor in a safetensors file, from its header alone."""
    try:
        with safe_open(str(path), framework="pt") as handle:
            return {name: tuple(handle.get_slice(name).get_shape()) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"not a readable safetensors file ({reason})", path=path, fix=fix) from None


def check_weights_fit(path: str | Path, model: torch.nn.Module, fix: str) -> None:
    """Every tensor of the file is one of the model's, with the model's shape (missing ones: see ``load_weights``)."""
    expected = {name: tuple(value.shape) for name, value in model.state_dict().items()}
    for name, shape in tensor_shapes(path, fix).items():
        if name not in expected:
            raise UserError(
                f"the weights hold the tensor {name!r}, which the model described by the config does not have",
                path=path,
                fix=fix,
            )
        if shape != expected[name]:
            raise UserError(
                f"the tensor {name!r} has shape {list(shape)}, the model described by the config needs "
                f"{list(expected[name])}",
                path=path,
                fix=fix,
            )


def load_weights(path: str | Path, model: torch.nn.Module, fix: str, device: str | torch.device = "cpu") -> None:
    """Check the file against ``model``, then load it (strictly: a tensor the model needs must be there)."""
    check_weights_fit(path, model, fix)
    try:
        state = load_file(str(path), device=str(device))
    except (SafetensorError, OSError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"cannot read the weights ({reason})", path=path, fix=fix) from None
    for name, tensor in state.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise UserError(f"the tensor {name!r} holds NaN or infinite values", path=path, fix=fix)
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        first = " ".join(line.strip() for line in str(err).strip().splitlines()[:2])
        raise UserError(
            f"the weights do not fit the model described by the config ({first})", path=path, fix=fix
        ) from None

"""Building MVML/MVMD from config, and saving/loading trained models without pickles.

A trained fold is exported as ``model.safetensors`` (weights) plus ``model.json`` (the architecture, optimiser
and schedule by name with their plain settings, the encoder, labels, views, level and grain), so
``python -m faina.predict`` can rebuild the model and never needs the training code's pickled objects.
Training builds the model from ``conf/`` with Hydra (``faina.training.model_building``); reading a model back never does: the
file is checked (``faina.serving.saved_files``) and its names are mapped through ``models.registry``.
Lightning checkpoints are read with ``weights_only=True``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from safetensors.torch import save

from common.errors import UserError
from common.io import atomic_write_bytes, atomic_write_json
from faina.formats.labels import LabelInventory
from faina.serving.saved_files import FOLD_FIX, check_labels, fold_model_json, read_fold_model_file
from models.encoder_settings import encoder_settings


def load_tokenizer(encoder: Mapping):
    """The tokenizer of an ``encoder`` block (a run's config, a saved model's), or one message naming the folder or
    hub id, what is missing and the fix."""
    from models.encoder import encoder_reference
    from models.encoder_tokenizer import load_encoder_tokenizer

    settings = encoder_settings(encoder)
    return load_encoder_tokenizer(encoder_reference(settings), settings.trust_remote_code)


def export_model(
    model,
    task_name: str,
    level: str,
    grain: str,
    labels,
    num_views: int,
    labels_inventory: str,
    named_model,
    encoder_block: Mapping,
    fold_dir: Path,
    context: Sequence[str] = (),
) -> Path:
    """The fold's ``model.safetensors`` and ``model.json``: ``named_model``, the model block as names (checked when
    the run started), ``encoder_block`` the run's encoder settings, ``context`` the header fields the model reads
    (``TaskData.context``, checked when the run read its data)."""
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    atomic_write_bytes(fold_dir / "model.safetensors", save(state))
    meta = fold_model_json(
        task_name, level, grain, labels, num_views, labels_inventory, named_model, dict(encoder_block), context
    )
    return atomic_write_json(fold_dir / "model.json", meta)


def check_fold_folder(model_dir: str | Path, trust_remote_code: bool = False):
    """Everything ``load_exported`` checks in a fold folder before it builds anything: ``(model.json, checked
    model block, encoder block, label inventory)``. The fuzz tests call it on hostile folders without a model."""
    model_dir = Path(model_dir)
    meta_path, weights = model_dir / "model.json", model_dir / "model.safetensors"
    for path in (meta_path, weights):
        if not path.is_file():
            raise UserError(
                "not an exported model folder (missing file)",
                path=path,
                fix="point to a fold folder of a finished run, e.g. results/<name>/fold0, or to a "
                "folder written by python -m faina.export",
            )
    from models.weights_file import tensor_shapes

    top, named, encoder_block = read_fold_model_file(meta_path, trust_remote_code)
    inventory = LabelInventory.load(top.labels_inventory)
    check_labels(top.labels, top.grain, inventory, meta_path, FOLD_FIX)
    tensor_shapes(weights, FOLD_FIX)  # a file that is not safetensors is refused before the encoder loads
    return top, named, encoder_block, inventory


def load_exported(model_dir: str | Path, trust_remote_code: bool = False):
    """Rebuild an exported model for prediction: ``(model, meta)``.

    ``model_dir`` is a fold folder of a run (``model.json`` + ``model.safetensors``) or a self-contained
    model folder written by ``python -m faina.export`` (``config.json``; see ``faina.serving.model_folder``).
    Every field is checked before anything is built (``check_fold_folder``); ``trust_remote_code`` (the
    caller's, never the file's) allows an encoder whose model.json asks for custom code.
    """
    model_dir = Path(model_dir)
    from faina.data.levels import LEVELS
    from faina.serving.model_folder import CONFIG_FILE, load_model_folder
    from models.encoder import ChunkedEncoder
    from models.saved_model import build_model as build_named_model
    from models.weights_file import load_weights

    if (model_dir / CONFIG_FILE).is_file() and not (model_dir / "model.json").is_file():
        return load_model_folder(model_dir)  # checks that config.json is a Faina model's, with one message
    top, named, encoder_block, inventory = check_fold_folder(model_dir, trust_remote_code)
    meta_path = model_dir / "model.json"
    encoder = ChunkedEncoder(**encoder_block.model_dump(), dropout=named.dropout)
    model = build_named_model(
        named, encoder, top.num_views, top.labels, LEVELS[top.level].metric(inventory, top.num_views), path=meta_path
    )
    load_weights(model_dir / "model.safetensors", model, FOLD_FIX)
    model.eval()
    meta = fold_model_json(
        top.task,
        top.level,
        top.grain,
        top.labels,
        top.num_views,
        top.labels_inventory,
        named,
        encoder_block.model_dump(),
        tuple(top.context),
    )
    return model, meta

"""Building MVML/MVMD from config, and saving/loading trained models without pickles.

A trained fold is exported as ``model.safetensors`` (weights) plus ``model.json`` (the architecture, optimiser
and schedule by name with their plain settings, the encoder, labels, views, level and grain), so
``python -m faina.predict`` can rebuild the model and never needs the training code's pickled objects.
Training builds the model from ``conf/`` with Hydra (``build_model``); reading a model back never does: the
file is checked (``faina.serving.saved_files``) and its names are mapped through ``models.registry``.
Lightning checkpoints are read with ``weights_only=True``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf
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


def build_model(
    model_cfg: DictConfig,
    encoder_cfg: DictConfig,
    level: str,
    labels,
    num_views: int,
    inventory: LabelInventory,
    gold_views: int | None = None,
    soft_targets: bool = False,
    encoder=None,
):
    """Instantiate the LightningModule of ``model_cfg`` over a fresh encoder (or ``encoder``, one that other heads
    share: a multi-task run's), with the level's dev metric.

    ``num_views``: the model's views of heads/decoders; ``gold_views``: the dev data's annotator views (default
    the same; more for ``data.targets=soft``, whose one view is scored against each); ``soft_targets``: train the
    one view on the soft labels of every view (``data.targets=soft``)."""
    from faina.data.levels import LEVELS
    from models.encoder import ChunkedEncoder

    gold_views = gold_views or num_views
    weights = model_cfg.module.get("view_weights")
    if weights is not None and (not soft_targets or len(weights) != gold_views):
        raise UserError(
            f"model.module.view_weights has {len(weights)} weight(s); it weighs the views of data.targets=soft "
            f"(this run: data.targets={'soft' if soft_targets else 'not soft'}, {gold_views} view(s))",
            fix="give one weight per annotator view with data.targets=soft, or model.module.view_weights=null",
        )
    settings = encoder_settings(OmegaConf.to_container(encoder_cfg, resolve=True))
    if encoder is None:
        encoder = ChunkedEncoder(**settings.model_dump(), dropout=model_cfg.get("dropout", 0.2))
    metric = LEVELS[level].metric(inventory, gold_views)
    extra = {"soft_targets": True} if soft_targets else {}
    model = hydra.utils.instantiate(
        model_cfg.module, encoder=encoder, num_views=num_views, labels=list(labels), val_metric=metric, **extra
    )
    # from_pretrained leaves the encoder in eval mode; Lightning keeps modules' modes, so dropout would be off
    return model.train()


MODEL_CONFIG = "the model config (conf/model)"


def check_model_config(model_cfg: DictConfig):
    """The run's model block checked field by field before anything is read or trained: a wrong value
    (``model.module.decision.scope=bogus``) ends in one message naming the key, not in a traceback from the model's
    constructor or in a refusal at export after every fold has trained."""
    from faina.training.loss_weights import check_scheme
    from models.saved_model import check_model_block

    block = OmegaConf.to_container(model_cfg, resolve=True)
    where = f"conf/model/{model_cfg.get('name')}.yaml"
    module = block.get("module") or {}
    if isinstance(module.get("loss_weights"), str):  # a scheme: each fold computes the numbers (loss_weights.py)
        check_scheme(module["loss_weights"], where)
        module["loss_weights"] = None
    return check_model_block(
        block,
        MODEL_CONFIG,
        fix=f"correct it on the command line (model.module.KEY=VALUE) or in {where}",
        translate=False,
    )


def export_model(
    model, cfg: DictConfig, level: str, grain: str, labels, num_views: int, fold_dir: Path, context: Sequence[str] = ()
) -> Path:
    """The fold's ``model.safetensors`` and ``model.json``; ``context``: the header fields the model reads
    (``TaskData.context``, checked when the run read its data)."""
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    atomic_write_bytes(fold_dir / "model.safetensors", save(state))
    # the Hydra config of the run, saved as names (checked when the run started: ``check_model_config``)
    named = check_model_config(cfg.model)
    meta = fold_model_json(
        cfg.task.name,
        level,
        grain,
        labels,
        num_views,
        str(cfg.data.labels),
        named,
        OmegaConf.to_container(cfg.encoder, resolve=True),
        context,
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

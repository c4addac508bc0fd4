"""Building MVML/MVMD from config, and saving/loading trained models without pickles.

A trained fold is exported as ``model.safetensors`` (weights) plus ``model.json`` (the resolved model
and encoder configs, labels, views, level and grain), so ``python -m faina.predict`` can rebuild the
model and never needs the training code's pickled objects. Lightning checkpoints are read with
``weights_only=True``.
"""
from __future__ import annotations

import json
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf
from safetensors.torch import load_file, save

from common.errors import UserError
from common.io import atomic_write_bytes, atomic_write_json
from faina.formats.labels import LabelInventory


def load_tokenizer(name_or_path: str, trust_remote_code: bool = False):
    """The encoder's tokenizer, or one message naming the folder or hub id, what is missing and the fix."""
    from models.encoder_tokenizer import load_encoder_tokenizer

    return load_encoder_tokenizer(name_or_path, trust_remote_code)


def build_model(model_cfg: DictConfig, encoder_cfg: DictConfig, level: str, labels, num_views: int,
                inventory: LabelInventory):
    """Instantiate the LightningModule of ``model_cfg`` over a fresh encoder, with the level's dev metric."""
    from faina.data.levels import LEVELS
    from models.encoder import ChunkedEncoder

    encoder = ChunkedEncoder(name_or_path=encoder_cfg.name_or_path, max_length=encoder_cfg.max_length,
                             dropout=model_cfg.get("dropout", 0.2),
                             trust_remote_code=encoder_cfg.get("trust_remote_code", False))
    metric = LEVELS[level].metric(inventory, num_views)
    model = hydra.utils.instantiate(model_cfg.module, encoder=encoder, num_views=num_views, labels=list(labels),
                                    val_metric=metric)
    # from_pretrained leaves the encoder in eval mode; Lightning keeps modules' modes, so dropout would be off
    return model.train()


def export_model(model, cfg: DictConfig, level: str, grain: str, labels, num_views: int, fold_dir: Path) -> Path:
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    atomic_write_bytes(fold_dir / "model.safetensors", save(state))
    meta = {"task": cfg.task.name, "level": level, "grain": grain, "labels": list(labels), "num_views": num_views,
            "labels_inventory": str(cfg.data.labels),
            "model": OmegaConf.to_container(cfg.model, resolve=True),
            "encoder": OmegaConf.to_container(cfg.encoder, resolve=True)}
    return atomic_write_json(fold_dir / "model.json", meta)


def load_exported(model_dir: str | Path):
    """Rebuild an exported model for prediction: ``(model, meta)``.

    ``model_dir`` is a fold folder of a run (``model.json`` + ``model.safetensors``) or a self-contained
    model folder written by ``python -m faina.export`` (``config.json``; see ``faina.serving.model_folder``).
    """
    model_dir = Path(model_dir)
    from faina.serving.model_folder import CONFIG_FILE, load_model_folder

    if (model_dir / CONFIG_FILE).is_file() and not (model_dir / "model.json").is_file():
        return load_model_folder(model_dir)  # checks that config.json is a Faina model's, with one message
    meta_path, weights = model_dir / "model.json", model_dir / "model.safetensors"
    for path in (meta_path, weights):
        if not path.is_file():
            raise UserError("not an exported model folder (missing file)", path=path,
                            fix="point to a fold folder of a finished run, e.g. results/<name>/fold0, or to a "
                                "folder written by python -m faina.export")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    inventory = LabelInventory.load(meta["labels_inventory"])
    model = build_model(OmegaConf.create(meta["model"]), OmegaConf.create(meta["encoder"]), meta["level"],
                        meta["labels"],
                        meta["num_views"], inventory)
    model.load_state_dict(load_file(str(weights)))
    model.eval()
    return model, meta

"""A self-contained model folder: everything needed to predict, nothing from the training run or the repo.

Layout (written by ``python -m faina.export``, read by ``FallacyTagger.load`` and ``faina.serving.fold_model.load_exported``)::

    config.json         model type (for transformers' Auto classes: faina.serving.auto_classes), architecture,
                        task, level, grain, labels, views, decision thresholds, encoder settings (no local paths)
    model.safetensors   all weights (encoder and task heads); with LoRA on the encoder (``encoder.peft``) the adapter
                        and the heads only: the base weights load from ``encoder.source`` (a hub id, a packaged
                        model, or a folder of that name in the current directory)
    labels.yaml         the label inventory (labels, short ids, taxonomy), so Faina files can be read and checked
    encoder/            the encoder's Hugging Face ``config.json`` and tokenizer files (no weights: they are
                        in model.safetensors), so the encoder is rebuilt from the folder alone
    README.md           the model card (faina.serving.model_card)

The architecture is looked up in ``models.registry.ARCHITECTURES`` (a fixed list of this project's models), never
imported from a name in the file, and every field of config.json is checked first (``faina.serving.saved_files``):
a model folder from someone else cannot make the loader run code, and a wrong one ends in one message.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import yaml
from safetensors.torch import save

from common.errors import UserError
from common.io import atomic_write_bytes, atomic_write_json, atomic_write_text
from faina.formats.labels import LabelInventory
from models.encoder_settings import DecoderSettings

FORMAT = "faina-model"
# what transformers' AutoConfig / AutoModel know the folder as once faina.serving.auto_classes is imported
MODEL_TYPE = "fallacy-framework"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
LABELS_FILE = "labels.yaml"
ENCODER_DIR = "encoder"
ARCHITECTURES = ("MVML", "MVMD")  # the names of models.registry.ARCHITECTURES that an export may hold
# module arguments that only matter while training (Hydra partials, not JSON)
TRAINING_ONLY = ("_target_", "optimizer", "scheduler")


def is_model_folder(path: str | Path) -> bool:
    config = Path(path) / CONFIG_FILE
    if not config.is_file():
        return False
    try:
        return json.loads(config.read_text(encoding="utf-8")).get("format") == FORMAT
    except (ValueError, AttributeError):
        return False


def view_names(num_views: int) -> list[str]:
    """``a1``, ``a2``, ...: the annotator views as the evaluator and the files' columns name them."""
    return [f"a{v + 1}" for v in range(num_views)]


def inventory_spec(inventory: LabelInventory) -> dict:
    """The inventory as the mapping ``LabelInventory.from_dict`` reads (the layout of faina_labels.yaml)."""
    return {
        "name": inventory.name,
        "fine": dict(inventory.short_ids),
        "parents": {label: list(parents) for label, parents in inventory.parents.items() if parents},
        "coarse": list(inventory.coarse),
    }


def decision_rules(model) -> dict:
    """The model's prediction thresholds/biases as plain numbers (for config.json and the card).

    The global ``threshold`` of MVML, and any buffer whose name says threshold or bias (tuned per view and
    label on dev); the weights file is what prediction uses, this is for people reading the folder.
    """
    rules: dict = {}
    threshold = getattr(model, "threshold", None)
    if isinstance(threshold, (int, float)):
        rules["threshold"] = float(threshold)
    for name, buffer in model.named_buffers():
        leaf = name.rsplit(".", 1)[-1]
        if ("threshold" in leaf or "bias" in leaf) and not name.startswith("encoder."):
            rules[name] = buffer.detach().cpu().tolist()
    return rules


def write_model_folder(model, meta: dict, out_dir: str | Path, card: str | None = None) -> Path:
    """Write ``model`` (with the fold's ``meta`` from model.json) as a self-contained folder."""
    from faina.serving.saved_files import FOLDER_FORMAT_VERSION

    out = Path(out_dir)
    architecture = type(model).__name__
    if architecture not in ARCHITECTURES:
        raise UserError(f"cannot export a {architecture} model", fix=f"export one of {sorted(ARCHITECTURES)}")
    if out.exists() and any(out.iterdir()) and not is_model_folder(out):
        raise UserError(
            "the output folder exists and is not a model folder",
            path=out,
            fix="choose a new or empty folder (an earlier export there is overwritten)",
        )
    out.mkdir(parents=True, exist_ok=True)
    encoder = model.encoder
    encoder_dir = out / ENCODER_DIR
    encoder.tokenizer.save_pretrained(str(encoder_dir))
    encoder.model.config.save_pretrained(str(encoder_dir))
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    # written like every other file of the folder (safetensors' own writer leaves it readable by its owner only)
    atomic_write_bytes(out / WEIGHTS_FILE, save(state, metadata={"format": "pt"}))
    inventory = LabelInventory.load(meta["labels_inventory"])
    atomic_write_text(out / LABELS_FILE, yaml.safe_dump(inventory_spec(inventory), sort_keys=False, allow_unicode=True))
    module = {k: v for k, v in meta["model"].get("module", {}).items() if k not in TRAINING_ONLY}
    config = {
        "format": FORMAT,
        "format_version": FOLDER_FORMAT_VERSION,
        "model_type": MODEL_TYPE,
        "architecture": architecture,
        "task": meta["task"],
        "level": meta["level"],
        "grain": meta["grain"],
        "labels": list(meta["labels"]),
        "views": view_names(meta["num_views"]),
        "num_views": meta["num_views"],
        "thresholds": decision_rules(model),
        **({"context": list(meta["context"])} if meta.get("context") else {}),
        "module": module,
        "dropout": meta["model"].get("dropout", 0.2),
        "encoder": {
            "name": meta["encoder"].get("name"),
            "source": public_encoder_name(str(meta["encoder"].get("name_or_path"))),
            "max_length": encoder.max_length,
            "model_type": encoder.model.config.model_type,
            "path": ENCODER_DIR,
            **encoder.settings.model_dump(include=set(DecoderSettings.model_fields)),
        },
    }
    atomic_write_json(out / CONFIG_FILE, config)
    if card is not None:
        atomic_write_text(out / "README.md", card)
    return out


def adapter_base(encoder, folder: Path) -> str:
    """Where the base weights of an adapter folder load from: ``encoder.source`` as a packaged model, a GGUF file's
    converted copy, a hub id, or a folder of that name in the current directory or beside the adapter folder (how a
    folder exported with a local base travels: the base's folder next to it); else one message saying so."""
    from faina.serving.saved_files import FOLDER_FIX
    from models.encoder import encoder_reference
    from models.encoder_settings import EncoderSettings

    if not encoder.source:
        raise UserError(
            "the folder holds LoRA adapters but names no base model (encoder.source)",
            path=folder / CONFIG_FILE,
            fix=FOLDER_FIX,
        )
    from common.model_availability import ensure_model_available

    source = encoder.source
    beside = Path(folder).parent / source
    if source not in (".", "..") and Path(source).name == source and not Path(source).exists() and beside.is_dir():
        source = str(beside)
    try:
        reference = encoder_reference(EncoderSettings(name_or_path=source, gguf_file=encoder.gguf_file))
        return ensure_model_available(reference, "encoder")
    except UserError as err:
        raise UserError(
            f"the folder holds LoRA adapters, not its base encoder {encoder.source!r}, and that base is not "
            f"available here ({err.message})",
            path=folder / CONFIG_FILE,
            fix=f"download {encoder.source!r} into the Hugging Face cache, or put its folder under that name in the "
            "current directory or beside the model folder",
        ) from None


def public_encoder_name(name_or_path: str) -> str:
    """The encoder as a folder others receive may name it: a hub id as it is; the offline MiniLM by its hub id; any
    other local folder by its last component only (the exporting machine's paths stay on that machine)."""
    from models.encoder import hub_id_of

    return hub_id_of(name_or_path)


def read_config(folder: str | Path) -> dict:
    """``config.json`` of the folder, checked field by field (see ``faina.serving.saved_files``)."""
    from faina.serving.saved_files import read_folder_config

    return read_folder_config(Path(folder) / CONFIG_FILE).model_dump()


def check_model_folder(folder: str | Path):
    """Everything ``load_model_folder`` checks before it builds anything: ``(config, checked model block,
    label inventory)``. The fuzz tests call it on hostile folders without a model."""
    from faina.serving.saved_files import FOLDER_FIX, check_folder_model, check_labels, read_folder_config
    from models.weights_file import tensor_shapes

    folder = Path(folder)
    config = read_folder_config(folder / CONFIG_FILE)
    for name in (WEIGHTS_FILE, LABELS_FILE, f"{config.encoder.path}/config.json"):
        if not (folder / name).is_file():
            raise UserError(f"the model folder lacks {name}", path=folder / name, fix=FOLDER_FIX)
    named = check_folder_model(config, folder / CONFIG_FILE)
    inventory = LabelInventory.load(folder / LABELS_FILE)
    check_labels(config.labels, config.grain, inventory, folder / CONFIG_FILE, FOLDER_FIX)
    tensor_shapes(folder / WEIGHTS_FILE, FOLDER_FIX)  # not safetensors: refused before the encoder is built
    return config, named, inventory


def load_model_folder(folder: str | Path, device: str | torch.device = "cpu"):
    """``(model, meta)`` from a self-contained folder; ``meta`` has the keys of a fold's model.json."""
    from faina.serving.saved_files import FOLDER_FIX
    from models.encoder import ChunkedEncoder
    from models.saved_model import build_model
    from models.weights_file import load_weights

    folder = Path(folder)
    config, named, _ = check_model_folder(folder)
    encoder_path = folder / config.encoder.path
    # the folder's encoder/ holds the config and tokenizer: a GGUF file only ever names the base of an adapter
    settings = config.encoder.model_dump(include=set(DecoderSettings.model_fields) - {"gguf_file"})
    encoder = ChunkedEncoder(
        name_or_path=str(encoder_path),
        max_length=config.encoder.max_length,
        dropout=config.dropout,
        name=config.encoder.name,
        pretrained_weights=False,
        base_reference=adapter_base(config.encoder, folder) if config.encoder.peft else None,
        **settings,
    )
    model = build_model(named, encoder, config.num_views, config.labels, path=folder / CONFIG_FILE)
    load_weights(folder / WEIGHTS_FILE, model, FOLDER_FIX, device)
    model.to(device).eval()
    meta = {
        "task": config.task,
        "level": config.level,
        "grain": config.grain,
        "labels": list(config.labels),
        "num_views": config.num_views,
        "labels_inventory": str(folder / LABELS_FILE),
        "model": {"architecture": config.architecture, "module": named.module.model_dump(), "dropout": config.dropout},
        "encoder": {
            "name": config.encoder.name,
            "name_or_path": str(encoder_path),
            "max_length": config.encoder.max_length,
            "trust_remote_code": False,
        },
        "thresholds": config.thresholds,
        **({"context": list(config.context)} if config.context else {}),  # as a fold's model.json has it
        "folder": str(folder),
    }
    return model, meta

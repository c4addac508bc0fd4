"""Valid saved artefacts for the fuzz tests, made with the project's own writers and no training.

* ``model_blocks()`` draws the ``model`` block of a fold's ``model.json`` in today's named form;
  ``hydra_form(block)`` is the same block as earlier releases wrote it (Hydra ``_target_`` / ``_partial_`` nodes),
  ``flat_module(block)`` its module with the decision rule as the flat keys of earlier releases.
* ``tiny_model()`` is an MVMD model over a 2-layer random BERT (built once per session, never trained); its
  ``model.safetensors`` and an exported folder written by ``faina.serving.model_folder.write_model_folder`` are
  what the weights and ``config.json`` fuzz tests start from.
* ``hostile_nodes()`` draws what a hostile file would plant: a Hydra node of every family in
  ``helpers.hostile``, a ``_partial_`` / ``_args_`` key, an OmegaConf ``${...}`` interpolation.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from hypothesis import assume
from hypothesis import strategies as st

from fuzz.missci_files import json_paths, replaced
from fuzz.support import SCRATCH, json_junk, nested_junk
from helpers.hostile import FAMILIES

FAINA_INVENTORY = "faina"  # faina.formats.labels reads the packaged inventory under this name
unit = st.floats(0.01, 0.99, allow_nan=False)
rates = st.floats(1e-6, 10, allow_nan=False)


def adam_settings(name: str) -> st.SearchStrategy:
    return st.fixed_dictionaries(
        {
            "name": st.just(name),
            "lr": rates,
            "betas": st.lists(st.floats(0, 0.999), min_size=2, max_size=2),
            "eps": st.floats(1e-12, 1),
            "weight_decay": st.floats(0, 10),
            "amsgrad": st.booleans(),
        }
    )


optimizers = (
    adam_settings("adamw")
    | adam_settings("adam")
    | st.fixed_dictionaries(
        {
            "name": st.just("sgd"),
            "lr": rates,
            "momentum": st.floats(0, 0.99),
            "dampening": st.floats(0, 1),
            "weight_decay": st.floats(0, 10),
            "nesterov": st.booleans(),
        }
    )
)
schedulers = st.fixed_dictionaries(
    {"name": st.just("slanted_triangular"), "cut_frac": unit, "ratio": st.floats(1, 10**6)}
) | st.fixed_dictionaries({"name": st.sampled_from(("constant", "none"))})
shared = {
    "discriminative_decay": st.none() | st.floats(0.01, 1),
    "gradual_unfreezing": st.booleans(),
}
rule = {
    "tuned": st.booleans(),
    "scope": st.sampled_from(("own", "shared", "shrunk")),
    "shrinkage": st.floats(0, 10**6),
    "confirm": st.booleans(),
    "min_evidence": st.integers(0, 100),
}
calibration = {
    "scope": st.sampled_from(("own", "shared")),
    "min_evidence": st.integers(0, 100),
    "fallback": st.sampled_from(("none", "prior")),
    "fallback_folds": st.integers(2, 100),
    "fallback_margin": st.floats(0, 100),
}
mvml_modules = st.fixed_dictionaries(
    {
        **shared,
        "head_lr": st.none() | rates,
        "decision": st.fixed_dictionaries({**rule, "fixed": unit, "floor": st.none() | st.floats(0, 0.99)}),
        "calibration": st.fixed_dictionaries(
            {"method": st.sampled_from(("none", "temperature", "platt")), **calibration}
        ),
    }
)
mvmd_modules = st.fixed_dictionaries(
    {
        **shared,
        "head_lr": st.none() | rates,
        "loss_weights": st.none(),
        "o_bias": st.floats(-1000, 1000),
        "decision": st.fixed_dictionaries(
            {**rule, "fixed": st.just(0.0) | st.floats(-1000, 1000), "floor": st.none() | st.floats(-1000, 1000)}
        ),
        "view_weights": st.none() | st.lists(st.floats(0, 10), min_size=1, max_size=6),
        "calibration": st.fixed_dictionaries({"method": st.sampled_from(("none", "temperature")), **calibration}),
    }
)


def flat_module(block: dict) -> dict | None:
    """The module of ``block`` with its decision rule as the flat keys earlier releases wrote (``None`` when the
    rule has no such form: a fixed MVMD bias other than 0, an MVMD floor, an MVML without a floor)."""
    module = {key: value for key, value in block["module"].items() if key != "decision"}
    decision = block["module"]["decision"]
    common = {
        "tuning_scope": decision["scope"],
        "tuning_shrinkage": decision["shrinkage"],
        "tuning_confirm": decision["confirm"],
    }
    if block["architecture"] == "MVMD":
        if decision["fixed"] != 0.0 or decision["floor"] is not None or (decision["tuned"] and module["o_bias"] != 0):
            return None
        tuned = {"o_bias": "tuned"} if decision["tuned"] else {}
        return {**module, **common, **tuned, "min_dev_spans": decision["min_evidence"]}
    if decision["floor"] is None:
        return None
    threshold = "tuned" if decision["tuned"] else decision["fixed"]
    return {
        **module,
        **common,
        "threshold": threshold,
        "fallback_threshold": decision["fixed"],
        "min_dev_positives": decision["min_evidence"],
        "threshold_floor": decision["floor"],
    }


@st.composite
def model_blocks(draw) -> dict:
    """A named model block as ``CheckedModel.saved()`` writes it (every setting present)."""
    architecture = draw(st.sampled_from(("MVML", "MVMD")))
    return {
        "name": draw(st.none() | st.sampled_from(("mvml", "mvmd", "mine"))),
        "architecture": architecture,
        "dropout": draw(st.floats(0, 0.9)),
        "module": draw(mvml_modules if architecture == "MVML" else mvmd_modules),
        "optimizer": draw(optimizers),
        "scheduler": draw(schedulers),
    }


LEGACY_TARGETS = {
    "MVML": "models.mvml.MVML",
    "MVMD": "models.mvmd.MVMD",
    "adamw": "torch.optim.AdamW",
    "adam": "torch.optim.Adam",
    "sgd": "torch.optim.SGD",
    "slanted_triangular": "models.schedules.slanted_triangular",
    "constant": "models.schedules.constant",
}


def hydra_form(block: dict) -> dict:
    """``block`` as an earlier release saved it: the resolved Hydra config, its parts as ``_target_`` partials."""

    def partial(part: dict) -> dict | None:
        if part["name"] == "none":
            return None
        return {
            "_target_": LEGACY_TARGETS[part["name"]],
            "_partial_": True,
            **{k: v for k, v in part.items() if k != "name"},
        }

    module = {
        "_target_": LEGACY_TARGETS[block["architecture"]],
        **block["module"],
        "optimizer": partial(block["optimizer"]),
        "scheduler": partial(block["scheduler"]),
    }
    return {"name": block["name"], "dropout": block["dropout"], "module": module}


lora_blocks = st.fixed_dictionaries(
    {
        "rank": st.integers(1, 4096),
        "alpha": st.floats(0.5, 1e6),
        "dropout": st.floats(0, 0.9),
        "target_modules": st.lists(st.sampled_from(("q_proj", "k_proj", "v_proj", "query", "value")), min_size=1),
    }
)
# the settings of a decoder LLM as the encoder (models.encoder_settings); files of earlier releases have none
decoder_settings = st.fixed_dictionaries(
    {},
    optional={
        "gguf_file": st.none() | st.just("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "pooling": st.none() | st.sampled_from(("first", "last", "mean")),
        "attention": st.none() | st.sampled_from(("causal", "bidirectional", "bidirectional-top-4")),
        "peft": st.none() | st.just("lora"),
        "lora": lora_blocks,
        "load_in_4bit": st.booleans(),
        "gradient_checkpointing": st.booleans(),
        "dtype": st.sampled_from(("auto", "float32", "bfloat16", "float16")),
        "random_init": st.booleans(),
    },
)
encoders = st.builds(
    lambda bert, decoder: {**bert, **decoder},
    st.fixed_dictionaries(
        {
            "name": st.none() | st.sampled_from(("minilm", "alberto", "tiny-llama")),
            "name_or_path": st.sampled_from(
                ("m-polignano-uniba/bert_uncased_L-12_H-768_A-12_italian_alb3rt0", "/models/encoder", "minilm")
            ),
            "max_length": st.integers(2, 4096),
            "trust_remote_code": st.just(False),
        }
    ),
    decoder_settings,
)


@functools.cache
def inventory():
    from faina.formats.labels import LabelInventory

    return LabelInventory.load(FAINA_INVENTORY)


# --- what a hostile file plants -----------------------------------------------------------------------------
def hostile_nodes(victim: Path) -> st.SearchStrategy:
    families = [make(victim) for make, _ in FAMILIES.values()]
    return st.sampled_from(families) | st.sampled_from(("${oc.env:HOME}", "${now:%H}", "x${y}"))


@st.composite
def hostile_documents(draw, document: dict, victim: Path) -> dict:
    """``document`` with a hostile node in place of the value at a drawn path, or a Hydra key added to a mapping."""
    paths = json_paths(document)
    mappings = [()] + [path for path in paths if isinstance(_at(document, path), dict)]
    if draw(st.booleans()):
        return replaced(document, draw(st.sampled_from(paths)), draw(hostile_nodes(victim)))
    where = draw(st.sampled_from(mappings))
    key = draw(st.sampled_from(("_target_", "_partial_", "_args_", "_recursive_", "_convert_", "${oc.env:HOME}")))
    value = draw(st.sampled_from(("pathlib.Path.unlink", True, [str(victim)], "all")))
    # an earlier release's optimiser and schedule already say `_partial_: true`: "adding" it again leaves the
    # document as it was, which is not a hostile file (and must load)
    assume(_at(document, where).get(key, object()) != value)
    return replaced(document, where, {**_at(document, where), key: value})


def _at(document, path: tuple):
    for part in path:
        document = document[part]
    return document


@st.composite
def spoiled_documents(draw, document: dict) -> tuple[str, dict | bytes]:
    """``(kind, document or raw bytes)``: junk at a drawn path, a deleted key, or a text JSON must refuse."""
    kind = draw(st.sampled_from(("junk", "junk", "delete", "nan", "huge", "nested", "not-an-object")))
    paths = json_paths(document)
    path = draw(st.sampled_from(paths))
    if kind == "junk":
        return kind, replaced(document, path, draw(json_junk()))
    if kind == "delete":
        return kind, replaced(document, path, None, delete=True)
    if kind == "nan":
        value = draw(st.sampled_from((math.nan, math.inf, -math.inf)))
        return kind, json.dumps(replaced(document, path, value)).encode("utf-8")
    if kind == "huge":
        return kind, replaced(document, path, draw(st.sampled_from((10**400, -(10**400), 1e308, 2**63))))
    if kind == "nested":
        text = json.dumps(replaced(document, path, "NESTED")).replace(
            '"NESTED"', nested_junk(draw(st.sampled_from((50, 3_000, 30_000))))
        )
        return kind, text.encode("utf-8")
    return kind, json.dumps(draw(st.sampled_from(([document], "model", 1, None)))).encode("utf-8")


def as_bytes(document) -> bytes:
    return document if isinstance(document, bytes) else json.dumps(document).encode("utf-8")


# --- a tiny untrained model, its weights and an exported folder (once per session) -------------------------
@functools.cache
def tiny_encoder_dir() -> Path:
    from helpers.trained import save_tiny_encoder

    return save_tiny_encoder(SCRATCH / "tiny-encoder")


def tiny_fold_json(block: dict, labels_inventory: str = FAINA_INVENTORY, num_views: int = 2) -> dict:
    """A fold's model.json (``fold_model_json``) for a span-level fine-grained model over the tiny encoder."""
    from faina.serving.saved_files import fold_model_json
    from models.saved_model import check_model_block

    return fold_model_json(
        "span-f",
        "span",
        "fine",
        inventory().labels_of("fine"),
        num_views,
        labels_inventory,
        check_model_block(block, "the test's model block"),
        {"name": "tiny", "name_or_path": str(tiny_encoder_dir()), "max_length": 64},
    )


TINY_BLOCK = {
    "name": "mvmd",
    "architecture": "MVMD",
    "dropout": 0.1,
    "module": {"head_lr": 0.01},
    "optimizer": {"name": "adamw", "lr": 1e-4},
    "scheduler": {"name": "slanted_triangular"},
}


@functools.cache
def tiny_model():
    """``(model, model.json content)``: the MVMD model the content describes, with random untrained weights."""
    import torch

    from faina.serving.saved_files import read_fold_model_file
    from models.encoder import ChunkedEncoder
    from models.saved_model import build_model

    meta = tiny_fold_json(TINY_BLOCK)
    path = SCRATCH / "tiny-model" / "model.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(meta), encoding="utf-8")
    top, checked, encoder = read_fold_model_file(path)
    torch.manual_seed(0)
    model = build_model(
        checked,
        ChunkedEncoder(name_or_path=encoder.name_or_path, max_length=encoder.max_length),
        top.num_views,
        top.labels,
    )
    return model.eval(), meta


@functools.cache
def tiny_state() -> dict:
    model, _ = tiny_model()
    return {name: value.detach().clone().contiguous() for name, value in model.state_dict().items()}


@functools.cache
def tiny_weights() -> bytes:
    from safetensors.torch import save

    return save(tiny_state(), metadata={"format": "pt"})


@functools.cache
def exported_folder() -> Path:
    """A folder written by ``write_model_folder`` from the tiny model (the config.json fuzz tests' template)."""
    from faina.serving.model_folder import write_model_folder

    model, meta = tiny_model()
    return write_model_folder(model, meta, SCRATCH / "exported")

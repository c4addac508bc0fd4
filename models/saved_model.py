"""A trained model as saved files describe it: closed-set names and plain numbers, checked, then built.

The ``model`` block of a fold's ``model.json`` (and the architecture part of an exported ``config.json``) reads::

    {"name": "mvmd", "architecture": "MVMD", "dropout": 0.2,
     "module": {"head_lr": 0.01, "o_bias": 0.0, ...,           # the architecture's own arguments
                "decision": {"tuned": true, "fixed": 0.0, "scope": "own", ...},   # models.decision_rules
                "calibration": {"method": "temperature", "scope": "own", ...}},  # models.calibration
     "optimizer": {"name": "adamw", "lr": 0.0001, "betas": [0.9, 0.99], "weight_decay": 0.01},
     "scheduler": {"name": "slanted_triangular", "cut_frac": 0.3, "ratio": 32}}

``named_model_block`` turns the resolved Hydra ``model`` config of a run (``_target_`` / ``_partial_`` nodes) into
this form when a model is saved, and turns the blocks that earlier releases saved in the same way, so their
folders still load: only the ``_target_`` paths listed in ``models.registry`` are understood, anything else is
refused with one message naming the file and the key. Earlier releases kept the decision rule's settings as
flat module keys (``o_bias: "tuned"``, ``threshold``, ``fallback_threshold``, ``tuning_*``, ``min_dev_*``,
``threshold_floor``); a block without a ``decision`` is translated into one (``models.former_settings.decision_block``), and a message
about one of its fields names the key the file holds. ``check_model_block`` validates every field (types,
ranges, closed sets) before anything is built; ``build_model`` maps the names through the registries.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from common.errors import UserError
from common.untrusted import Strict, dotted, refuse_code, validated
from models.calibration import PostCalibrationSettings, SpanCalibrationSettings
from models.decision_rules import PostDecisionSettings, SpanDecisionSettings
from models.former_settings import FORMER_DEFAULTS, decision_block, moved_decision_key
from models.registry import ARCHITECTURES, NO_SCHEDULER, OPTIMIZERS, SCHEDULERS

Fraction = Annotated[float, Field(gt=0, lt=1)]
Rate = Annotated[float, Field(gt=0, le=10)]
Count = Annotated[int, Field(ge=0, le=10**9)]
Decay = Annotated[float, Field(gt=0, le=1)]


class AdamSettings(Strict):
    name: Literal["adamw", "adam"]
    # defaults: the project's recipe (MaChAmp's AdamW, models.base.default_optimizer)
    lr: Rate = 1e-4
    betas: Annotated[list[Annotated[float, Field(ge=0, lt=1)]], Field(min_length=2, max_length=2)] = [0.9, 0.99]
    eps: Annotated[float, Field(gt=0, le=1)] = 1e-8
    weight_decay: Annotated[float, Field(ge=0, le=10)] = 0.01
    amsgrad: bool = False


class SgdSettings(Strict):
    name: Literal["sgd"]
    lr: Rate = 1e-3
    momentum: Annotated[float, Field(ge=0, lt=1)] = 0.0
    dampening: Annotated[float, Field(ge=0, le=1)] = 0.0
    weight_decay: Annotated[float, Field(ge=0, le=10)] = 0.0
    nesterov: bool = False


class SlantedTriangularSettings(Strict):
    name: Literal["slanted_triangular"]
    cut_frac: Fraction = 0.3
    ratio: Annotated[float, Field(ge=1, le=10**6)] = 32.0


class PlainScheduleSettings(Strict):
    name: Literal["constant", "none"]


class SharedModuleSettings(Strict):
    discriminative_decay: Decay | None = None
    gradual_unfreezing: bool = False
    head_lr: Rate | None = None


class MvmlSettings(SharedModuleSettings):
    decision: PostDecisionSettings = PostDecisionSettings()
    calibration: PostCalibrationSettings = PostCalibrationSettings()  # absent from older folders: uncalibrated


class MvmdSettings(SharedModuleSettings):
    head_lr: Rate | None = 1e-2
    loss_weights: Annotated[list[Annotated[float, Field(ge=0, le=10**6)]], Field(max_length=10**5)] | None = None
    o_bias: Annotated[float, Field(ge=-1000, le=1000)] = 0.0
    decision: SpanDecisionSettings = SpanDecisionSettings()
    calibration: SpanCalibrationSettings = SpanCalibrationSettings()  # absent from older folders: uncalibrated
    view_weights: Annotated[list[Annotated[float, Field(ge=0, le=10**6)]], Field(max_length=10**4)] | None = None


MODULE_SETTINGS = {"MVML": MvmlSettings, "MVMD": MvmdSettings}
OPTIMIZER_SETTINGS = {"adamw": AdamSettings, "adam": AdamSettings, "sgd": SgdSettings}
SCHEDULER_SETTINGS = {
    "slanted_triangular": SlantedTriangularSettings,
    "constant": PlainScheduleSettings,
    NO_SCHEDULER: PlainScheduleSettings,
}


class ModelBlock(Strict):
    name: Annotated[str, Field(max_length=200)] | None = None
    architecture: Literal["MVML", "MVMD"]
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.2
    module: dict[str, Any] = {}
    optimizer: dict[str, Any] = {"name": "adamw"}
    scheduler: dict[str, Any] = {"name": NO_SCHEDULER}


class CheckedModel(Strict):
    """A validated model block: the architecture and its settings, optimiser and schedule."""

    name: str | None
    architecture: str
    dropout: float
    module: MvmlSettings | MvmdSettings
    optimizer: AdamSettings | SgdSettings
    scheduler: SlantedTriangularSettings | PlainScheduleSettings

    def saved(self) -> dict:
        """The block as it is written (plain JSON, names only)."""
        return {
            "name": self.name,
            "architecture": self.architecture,
            "dropout": self.dropout,
            "module": self.module.model_dump(),
            "optimizer": self.optimizer.model_dump(),
            "scheduler": self.scheduler.model_dump(),
        }


def _named_part(node: Any, registry, path, where: str) -> dict:
    """``{"_target_": ..., "_partial_": true, args}`` of a Hydra partial as ``{"name": ..., args}``."""
    if node is None:
        return {"name": NO_SCHEDULER} if registry is SCHEDULERS else {"name": "adamw"}
    if not isinstance(node, dict):
        raise UserError(
            f"{where} must be a mapping, not {type(node).__name__}",
            path=path,
            fix='write it as {"name": ..., and plain numeric arguments}',
        )
    node = dict(node)
    if "_target_" in node:
        node["name"] = registry.name_of_target(node.pop("_target_"), path, f"{where}._target_")
        if node.get("_partial_", True) is not True:
            raise UserError(f"{where}._partial_ must be true", path=path, fix="remove the key")
        node.pop("_partial_", None)
    return node


def named_model_block(block: Any, path: str | Path | None = None) -> dict:
    """A Hydra-style model config (``module._target_`` etc.; today's conf or an earlier release's model.json)
    as the named block; a block already in named form is returned as it is. Unknown targets are refused."""
    if not isinstance(block, dict):
        raise UserError(
            f"model must be a mapping, not {type(block).__name__}",
            path=path,
            fix='write the model block with "architecture", "module", "optimizer", "scheduler"',
        )
    module = block.get("module")
    if "architecture" in block or not isinstance(module, dict) or "_target_" not in module:
        return block
    module = dict(module)
    named = {key: value for key, value in block.items() if key != "module"}
    named["architecture"] = ARCHITECTURES.name_of_target(module.pop("_target_"), path, "model.module._target_")
    named["optimizer"] = _named_part(module.pop("optimizer", None), OPTIMIZERS, path, "model.module.optimizer")
    named["scheduler"] = _named_part(module.pop("scheduler", None), SCHEDULERS, path, "model.module.scheduler")
    named["module"] = module
    return named


def check_model_block(
    block: Any, path: str | Path | None, prefix: str = "model", fix: str | None = None, translate: bool = True
) -> CheckedModel:
    """The named model block, every field checked; nothing is built, imported or called. ``fix``: the advice
    for a wrong field (default: correct it in the saved file); ``translate``: read an earlier release's decision
    keys (a saved file), or refuse them with their new names (a run's config)."""
    named = named_model_block(block, path)
    parts = dotted(prefix, "module") if named is not block else prefix  # where earlier releases kept the optimiser
    refuse_code(named, path, prefix)
    top = validated(ModelBlock, named, path, prefix, fix)
    module = _checked_module(top.module, top.architecture, path, dotted(prefix, "module"), fix, translate)
    optimizer = _checked_part(top.optimizer, OPTIMIZERS, OPTIMIZER_SETTINGS, path, dotted(parts, "optimizer"), fix)
    scheduler = _checked_part(top.scheduler, SCHEDULERS, SCHEDULER_SETTINGS, path, dotted(parts, "scheduler"), fix)
    return CheckedModel(
        name=top.name,
        architecture=top.architecture,
        dropout=top.dropout,
        module=module,
        optimizer=optimizer,
        scheduler=scheduler,
    )


def _checked_module(module: dict, architecture: str, path, where: str, fix: str | None, translate: bool):
    """The architecture's settings. An earlier release's flat decision keys are translated (``decision_block``)
    when ``translate`` and the block has no ``decision``; otherwise such a key is one message naming its new
    place (a run's config is built as it is written, so it must use today's keys)."""
    former = [key for key in module if key in FORMER_DEFAULTS.get(architecture, {})]
    moved = [message for key in former if (message := moved_decision_key(key, module[key], where)) is not None]
    came_from: dict[str, str] = {}
    if moved and ("decision" in module or not translate):
        raise UserError(moved[0], path=path, fix=fix or "write the setting under its new name")
    if "decision" not in module and translate:
        module, came_from = decision_block(module, architecture)
    return validated(MODULE_SETTINGS[architecture], module, path, where, fix, renamed=came_from)


def _checked_part(node: dict, registry, schemas: dict, path, where: str, fix: str | None = None):
    registry.get(node.get("name"), path, f"{where}.name")  # an unknown name: one message listing the known ones
    return validated(schemas[node["name"]], node, path, where, fix)


def optimizer_factory(settings: AdamSettings | SgdSettings):
    args = settings.model_dump(exclude={"name"})
    if "betas" in args:
        args["betas"] = tuple(args["betas"])
    return functools.partial(OPTIMIZERS.get(settings.name, None, "optimizer.name"), **args)


def scheduler_factory(settings: SlantedTriangularSettings | PlainScheduleSettings):
    schedule = SCHEDULERS.get(settings.name, None, "scheduler.name")
    return None if schedule is None else functools.partial(schedule, **settings.model_dump(exclude={"name"}))


def build_model(
    checked: CheckedModel, encoder, num_views: int, labels, val_metric=None, path: str | Path | None = None
):
    """The LightningModule a checked block describes, over ``encoder`` (the registries give every class)."""
    architecture = ARCHITECTURES.get(checked.architecture, None, "model.architecture")
    module = checked.module.model_dump()
    if (
        checked.architecture == "MVMD"
        and module["loss_weights"] is not None
        and len(module["loss_weights"]) != num_views * len(labels)
    ):
        raise UserError(
            f"model.module.loss_weights has {len(module['loss_weights'])} weights for "
            f"{num_views * len(labels)} decoders (views x labels)",
            path=path,
            fix="give one weight per decoder, or null for all 1",
        )
    return architecture(
        encoder=encoder,
        num_views=num_views,
        labels=list(labels),
        val_metric=val_metric,
        optimizer=optimizer_factory(checked.optimizer),
        scheduler=scheduler_factory(checked.scheduler),
        **module,
    )

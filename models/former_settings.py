"""The decision settings of earlier releases: flat module keys and where each went.

Earlier releases kept the decision rule's settings as flat keys of ``model.module`` (``o_bias: "tuned"``,
``threshold``, ``tuning_scope`` ...). ``models.saved_model`` translates them when it reads an old folder, and
``train.py`` names the new key of one given on the command line before Hydra refuses it as unknown. This module is
plain Python (no torch, no pydantic) so that ``train.py`` can check its overrides, ``--help`` included, without
importing the model stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from common.errors import UserError

# key -> its field in the decision block; the values (and defaults) earlier releases wrote under each key
FORMER_DECISION_KEYS = {
    "tuning_scope": "scope",
    "tuning_shrinkage": "shrinkage",
    "tuning_confirm": "confirm",
    "min_dev_spans": "min_evidence",
    "min_dev_positives": "min_evidence",
    "threshold_floor": "floor",
    "fallback_threshold": "fixed",
    "threshold": "fixed",
}
FORMER_DEFAULTS = {
    "MVMD": {
        "o_bias": 0.0,
        "min_dev_spans": 3,
        "tuning_scope": "own",
        "tuning_shrinkage": 20.0,
        "tuning_confirm": False,
    },
    "MVML": {
        "threshold": 0.7,
        "fallback_threshold": 0.7,
        "min_dev_positives": 3,
        "threshold_floor": 0.0,
        "tuning_scope": "own",
        "tuning_shrinkage": 20.0,
        "tuning_confirm": False,
    },
}


def moved_decision_key(key: str, value: Any, prefix: str = "model.module") -> str | None:
    """What a module key of earlier releases is called now (``None``: it is no former decision key): the one line
    that ``train.py`` and ``check_model_block`` say about ``model.module.tuning_scope=shared`` and the like."""
    tuned = f"{prefix}.{key}=tuned is now {prefix}.decision.tuned=true"
    if value == "tuned" and key == "o_bias":
        return f"{tuned} ({prefix}.o_bias is the initial O bias, a number)"
    if value == "tuned" and key == "threshold":
        return f"{tuned} (a number τ is {prefix}.decision.fixed)"
    if key in FORMER_DECISION_KEYS:
        return f"{prefix}.{key} is now {prefix}.decision.{FORMER_DECISION_KEYS[key]}"
    return None


def moved_override(overrides: Sequence[str]) -> UserError | None:
    """The error for the first command-line override that names a decision key of earlier releases
    (``model.module.tuning_scope=shared``, also with ``+``, ``++`` or ``~``): Hydra itself would only say that the
    key is not in the config, not where it went."""
    for override in overrides:
        key, _, value = override.lstrip("~+").partition("=")
        parts = key.split(".")
        if len(parts) == 3 and parts[:2] == ["model", "module"]:
            moved = moved_decision_key(parts[2], value)
            if moved is not None:
                return UserError(moved, fix="write the setting under its new name (conf/model/mvmd.yaml, mvml.yaml)")
    return None


def decision_block(module: dict, architecture: str) -> tuple[dict, dict[str, str]]:
    """An earlier release's module settings with its flat decision keys turned into a ``decision`` block, and for
    each translated field the key it came from (so a message names what the file says)."""
    if architecture not in FORMER_DEFAULTS:
        return module, {}
    old = {**FORMER_DEFAULTS[architecture], **module}
    module = {key: value for key, value in module.items() if key not in FORMER_DEFAULTS[architecture]}
    common = {"scope": old["tuning_scope"], "shrinkage": old["tuning_shrinkage"], "confirm": old["tuning_confirm"]}
    came_from = {"decision.scope": "tuning_scope", "decision.shrinkage": "tuning_shrinkage"}
    came_from["decision.confirm"] = "tuning_confirm"
    if architecture == "MVMD":
        tuned = old["o_bias"] == "tuned"
        module["o_bias"] = 0.0 if tuned else old["o_bias"]
        decision = {"tuned": tuned, "fixed": 0.0, "min_evidence": old["min_dev_spans"], **common}
        came_from["decision.min_evidence"] = "min_dev_spans"
    else:
        tuned = old["threshold"] == "tuned"
        fixed_key = "fallback_threshold" if tuned else "threshold"
        decision = {"tuned": tuned, "fixed": old[fixed_key], "min_evidence": old["min_dev_positives"], **common}
        decision["floor"] = old["threshold_floor"]
        came_from.update({"decision.fixed": fixed_key, "decision.min_evidence": "min_dev_positives"})
        came_from["decision.floor"] = "threshold_floor"
    return {**module, "decision": decision}, came_from

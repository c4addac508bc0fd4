"""Hostile Hydra nodes for saved files, one per family of target that could harm a user, and tripwires.

Each family is ``(name, node(victim), (module, attribute))``: the node that a hostile ``model.json``, exported
``config.json`` or LoRA bundle would carry, written so that, if anything instantiated it, it would delete,
overwrite, read or send ``victim`` (or leak an environment variable); the last item is the callable the node
names, which ``tripwires`` replaces by a recorder so a test sees a call even when its effect is invisible.
"""

from __future__ import annotations

import copy
import importlib
from pathlib import Path


def issue_payload(victim: Path) -> dict:
    """The exact ``model.module.optimizer`` of the reported attack: a fold's optimizer turned into a file removal."""
    return {"_target_": "pathlib.Path.unlink", "_args_": [{"_target_": "pathlib.Path", "_args_": [str(victim)]}]}


FAMILIES = {
    "pathlib.Path.unlink": (issue_payload, ("pathlib", "Path.unlink")),
    "numpy.save": (lambda v: {"_target_": "numpy.save", "_args_": [str(v), [0]]}, ("numpy", "save")),
    "requests.get": (
        lambda v: {"_target_": "requests.get", "_args_": [f"http://127.0.0.1:9/?{v}"]},
        ("requests", "get"),
    ),
    "torch.load": (lambda v: {"_target_": "torch.load", "_args_": [str(v)], "weights_only": False}, ("torch", "load")),
    "webbrowser.open": (lambda v: {"_target_": "webbrowser.open", "_args_": [f"file://{v}"]}, ("webbrowser", "open")),
    "os.system": (lambda v: {"_target_": "os.system", "_args_": [f"rm -f {v}"]}, ("os", "system")),
    "builtins.eval": (
        lambda v: {"_target_": "builtins.eval", "_args_": [f"__import__('os').remove({str(v)!r})"]},
        ("builtins", "eval"),
    ),
    "subprocess.Popen": (
        lambda v: {"_target_": "subprocess.Popen", "_args_": [["rm", "-f", str(v)]]},
        ("subprocess", "Popen"),
    ),
    # a known name, asked to be built as a partial call with extra positional arguments
    "_partial_": (lambda v: {"name": "adamw", "lr": 1e-4, "_partial_": True, "_args_": [str(v)]}, None),
    # OmegaConf would read an environment variable into the value (a secret, into a file others see)
    "${oc.env}": (lambda v: {"name": "adamw", "lr": "${oc.env:HOME}"}, None),
}


def tripwires(monkeypatch) -> list:
    """Replace every family's callable by a recorder; returns the list the calls land in."""
    calls: list = []
    for family, (_, target) in FAMILIES.items():
        if target is None:
            continue
        module_name, attribute = target
        owner = importlib.import_module(module_name)
        *parents, leaf = attribute.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        monkeypatch.setattr(owner, leaf, lambda *a, _family=family, **k: calls.append((_family, a, k)))
    return calls


def with_node(document: dict, dotted: str, node) -> dict:
    """A deep copy of ``document`` with ``node`` at the dotted key (created when missing)."""
    copied = copy.deepcopy(document)
    *parents, leaf = dotted.split(".")
    place = copied
    for key in parents:
        place = place.setdefault(key, {})
    place[leaf] = node
    return copied

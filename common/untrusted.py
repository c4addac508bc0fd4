"""Reading files that came from elsewhere (model folders, adapter bundles, results): data only, never code.

A saved artefact names what it holds from a closed set (``"architecture": "MVMD"``, ``"optimizer": {"name":
"adamw", "lr": 1e-4}``) and the loader maps each name through one ``Registry`` per kind. Nothing read from such
a file is imported, called or interpolated: Hydra's ``_target_`` / ``_partial_`` / ``_args_`` keys and OmegaConf
``${...}`` strings are refused (``refuse_code``), and the only ``_target_`` strings a loader accepts are the ones
earlier releases of this project wrote, translated to a registry name (``Registry.name_of_target``). Every
refusal is one ``UserError`` naming the file and the field, so the command line exits with status 2.

The schema of each file is a pydantic model (``validated``): types, ranges and closed sets are checked before
any tensor or object is built, and the first problem becomes one message naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from common.errors import UserError
from common.renames import current_name

# the keys with which Hydra imports, calls or configures a call (hydra.utils.instantiate)
HYDRA_KEYS = ("_target_", "_partial_", "_args_", "_recursive_", "_convert_")
INTERPOLATION = "${"

Model = TypeVar("Model")


class Strict(BaseModel):
    """A schema of a saved file: no extra keys, no coercion (``"1"`` is not 1, ``true`` is not 1), no NaN."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


def dotted(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def code_fields(node: Any, prefix: str = "") -> list[str]:
    """The fields of a JSON-like tree that would make Hydra/OmegaConf import, call or interpolate something."""
    found: list[str] = []
    if isinstance(node, Mapping):
        for key, value in node.items():
            where = dotted(prefix, key)
            if str(key) in HYDRA_KEYS or (isinstance(key, str) and INTERPOLATION in key):
                found.append(where)
            found += code_fields(value, where)
    elif isinstance(node, (list, tuple)):
        for index, item in enumerate(node):
            found += code_fields(item, f"{prefix}[{index}]")
    elif isinstance(node, str) and INTERPOLATION in node:
        found.append(prefix)
    return found


def refuse_code(node: Any, path: str | Path | None, prefix: str = "", fix: str | None = None) -> None:
    """One ``UserError`` naming the first field of ``node`` that asks for an import, a call or an interpolation."""
    fields = code_fields(node, prefix)
    if fields:
        raise UserError(
            f"the field {fields[0]} asks to import, call or interpolate something; a saved file may only "
            "name things from this project's closed lists (nothing read from a file is executed)",
            path=path,
            fix=fix or "use a file written by this project, or write the plain name instead",
        )


def read_json_object(path: str | Path, what: str, fix: str) -> dict:
    """A JSON object from ``path``; unreadable text, bad JSON, NaN/Infinity or a non-object end in one message."""
    path = Path(path)

    def no_constants(name: str):
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constants)
    except json.JSONDecodeError as err:
        raise UserError(f"{what} is not valid JSON ({err.msg})", path=path, line=err.lineno, fix=fix) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"cannot read {what} ({reason})", path=path, fix=fix) from None
    if not isinstance(data, dict):
        raise UserError(f"{what} must be a JSON object, not {type(data).__name__}", path=path, fix=fix)
    return data


def require_mapping(node: Any, where: str, path: str | Path | None, fix: str) -> dict:
    """``node`` itself when it is a mapping (a JSON object); anything else is one ``UserError`` naming ``where``."""
    if not isinstance(node, dict):
        raise UserError(f"{where} must be a mapping, not {type(node).__name__}", path=path, fix=fix)
    return node


@dataclass(frozen=True)
class Registry:
    """The closed set of one kind of thing a saved file may name: ``name -> class or factory``.

    ``targets`` lists the Hydra ``_target_`` paths of earlier releases (under today's module layout, see
    ``common.renames``) and the name each one means now, so their folders still load.
    """

    kind: str
    entries: Mapping[str, Any]
    targets: Mapping[str, str] = field(default_factory=dict)

    def names(self) -> list[str]:
        return sorted(self.entries)

    def get(self, name: Any, path: str | Path | None, where: str) -> Any:
        if not isinstance(name, str) or name not in self.entries:
            raise UserError(
                f"{where} names the unknown {self.kind} {name!r}",
                path=path,
                fix=f"use one of: {', '.join(self.names())}",
            )
        return self.entries[name]

    def name_of_target(self, target: Any, path: str | Path | None, where: str) -> str:
        """The registry name an earlier release's ``_target_`` meant; anything else is refused, never imported."""
        name = self.targets.get(current_name(target)) if isinstance(target, str) else None
        if name is None:
            raise UserError(
                f"{where} is {target!r}, not one of the {self.kind} classes this project saves; nothing "
                "named in a saved file is imported or called",
                path=path,
                fix=f'write "name": one of {", ".join(self.names())} instead',
            )
        return name

    def named_partial(self, node: Mapping, path: str | Path | None, where: str) -> dict:
        """An earlier release's Hydra partial ``{"_target_": ..., "_partial_": true, args}`` at ``where`` as
        ``{"name": ..., args}``; an unknown target or ``_partial_`` other than true is refused."""
        options = dict(node)
        name = self.name_of_target(options.pop("_target_"), path, f"{where}._target_")
        if options.pop("_partial_", True) is not True:
            raise UserError(f"{where}._partial_ must be true", path=path, fix="remove the key")
        return {"name": name, **options}

    def name_of_object(self, obj: Any) -> str | None:
        """The registry name of a class or factory (``None`` when it is not in the registry)."""
        return next((name for name, entry in self.entries.items() if entry is obj), None)


def validated(
    schema: Callable[..., Model],
    data: Any,
    path: str | Path,
    prefix: str = "",
    fix: str | None = None,
    renamed: Mapping[str, str] | None = None,
) -> Model:
    """``data`` checked against a pydantic model; the first problem becomes one ``UserError`` naming the field.

    ``renamed``: for data translated from an earlier layout, the dotted field (``decision.fixed``) -> the key the
    file holds (``threshold``), so the message names what the user finds in the file."""
    from pydantic import ValidationError

    try:
        return schema.model_validate(data)  # type: ignore[attr-defined]
    except ValidationError as err:
        errors = err.errors()
        where = _field_name(errors[0], prefix, renamed)
        # a union (a number or "tuned") fails once per member: say every member's demand, not only the first's
        demands = list(dict.fromkeys(e.get("msg") for e in errors if _field_name(e, prefix, renamed) == where))
        value = errors[0].get("input")
        shown = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise UserError(
            f"the field {where or '(top level)'} is wrong: {', or '.join(demands)} (got {shown})",
            path=path,
            fix=fix or "correct that field, or write the file again with this project",
        ) from None


def _field_name(error: dict, prefix: str, renamed: Mapping[str, str] | None = None) -> str:
    where = ""
    for part in error.get("loc", ()):
        if isinstance(part, str) and ("[" in part or "-" in part):
            continue  # pydantic's name of a union member ("constrained-float"), not a field
        where = f"{where}[{part}]" if isinstance(part, int) else dotted(where, part)
    where = (renamed or {}).get(where, where)
    if not where or where.startswith("["):
        return prefix + where
    return dotted(prefix, where)

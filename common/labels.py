"""Label inventory and taxonomy of a span/post dataset, read from a YAML file.

Everything that knows label names reads them from a ``LabelInventory``, so another dataset in the same file format
brings its own labels without code changes. The taxonomy gives the two derived views the Faina paper uses: soft
span credit for a direct parent, and the coarse (macro-category) labels of each fine label. It lives at the floor
because the metrics need it; the Faina default inventory is added by ``faina.formats.labels``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml

from common.errors import UserError


@dataclass(frozen=True)
class LabelInventory:
    """Fine labels (file strings, sorted), their short ids, direct parents and the coarse roots."""

    name: str
    fine: tuple[str, ...]
    short_ids: dict[str, str]
    parents: dict[str, tuple[str, ...]]
    coarse: tuple[str, ...]
    source: str = field(default="<dict>", compare=False)

    @classmethod
    def from_dict(cls, spec: dict, source: str = "<dict>") -> "LabelInventory":
        try:
            fine_spec = spec["fine"]
            coarse = tuple(sorted(spec.get("coarse", [])))
            parents_spec = spec.get("parents", {}) or {}
        except (KeyError, TypeError) as err:
            raise UserError(f"label inventory lacks the key {err}", path=source,
                            fix="give `fine` (label: short id) and optionally `parents` and `coarse`") from None
        fine_map = dict(fine_spec) if isinstance(fine_spec, dict) else {lab: lab for lab in fine_spec}
        fine = tuple(sorted(fine_map))
        known = set(fine) | set(coarse)
        parents: dict[str, tuple[str, ...]] = {}
        for child, ps in parents_spec.items():
            for name in [child, *ps]:
                if name not in known:
                    raise UserError(f"taxonomy names the unknown label {name!r}", path=source,
                                    fix="list it under `fine` or `coarse`, or correct its spelling")
            parents[child] = tuple(ps)
        for label in fine:
            parents.setdefault(label, ())
        inventory = cls(name=str(spec.get("name", Path(source).stem)), fine=fine,
                        short_ids={k: str(v) for k, v in fine_map.items()}, parents=parents,
                        coarse=coarse, source=source)
        inventory._check_acyclic()
        return inventory

    @classmethod
    def load(cls, path: str | Path) -> "LabelInventory":
        """Read an inventory YAML file (a dataset package may add named defaults, as ``faina.formats.labels``)."""
        path = Path(path)
        if not path.is_file():
            raise UserError("label inventory file not found", path=path,
                            fix="give the path of an existing label inventory YAML (docs/faina-format.md describes the layout)")
        try:
            # libyaml's safe loader when PyYAML has it (ten times faster; the same safe subset), else the Python one
            spec = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as err:
            raise UserError(f"not valid YAML ({err})", path=path, fix="correct the YAML syntax") from None
        if not isinstance(spec, dict):
            raise UserError("label inventory must be a mapping", path=path, fix="write `fine:`, `parents:` and `coarse:` keys (docs/faina-format.md)")
        return cls.from_dict(spec, source=str(path))

    def _check_acyclic(self) -> None:
        for label in self.fine:
            seen: set[str] = set()
            stack = [label]
            while stack:
                node = stack.pop()
                for parent in self.parents.get(node, ()):
                    if parent == label:
                        raise UserError(f"taxonomy has a cycle through {label!r}", path=self.source,
                                        fix="remove one parent link of the cycle")
                    if parent not in seen:
                        seen.add(parent)
                        stack.append(parent)

    # --- derived views -------------------------------------------------------------------------
    @cached_property
    def fine_index(self) -> dict[str, int]:
        return {label: i for i, label in enumerate(self.fine)}

    @cached_property
    def roots_of(self) -> dict[str, tuple[str, ...]]:
        """Coarse categories (taxonomy roots) reachable from each fine label, sorted."""
        coarse = set(self.coarse)

        def roots(label: str) -> set[str]:
            if label in coarse:
                return {label}
            found: set[str] = set()
            for parent in self.parents.get(label, ()):
                found |= roots(parent)
            return found

        return {label: tuple(sorted(roots(label))) for label in self.fine}

    def labels_of(self, grain: str) -> tuple[str, ...]:
        """The label strings of a task grain: ``fine`` or ``coarse``."""
        if grain == "fine":
            return self.fine
        if grain == "coarse":
            return self.coarse
        raise UserError(f"unknown label grain {grain!r}", fix="use `fine` or `coarse`")

    def soft_weight(self, predicted: str, gold: str) -> float:
        """Soft span credit: 1 for the same label, 0.5 when the prediction is a direct parent of gold."""
        if predicted == gold:
            return 1.0
        return 0.5 if predicted in self.parents.get(gold, ()) else 0.0

    def grain_of(self, labels) -> str:
        """Which grain a collection of label strings belongs to (``fine`` unless all are coarse)."""
        labels = set(labels)
        if labels and labels <= set(self.coarse):
            return "coarse"
        return "fine"

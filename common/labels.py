"""Label inventory and taxonomy of a span/post dataset, read from a YAML file.

Everything that knows label names reads them from a ``LabelInventory``, so another dataset in the same file format
brings its own labels without code changes. The taxonomy gives the two derived views the Faina paper uses: soft
span credit for a direct parent, and the coarse (macro-category) labels of each fine label. It lives at the floor
because the metrics need it; the Faina default inventory is added by ``faina.formats.labels``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from common.errors import UserError
from common.records import NOT_ANNOTATED
from common.yaml_cache import cached_parse


def _is_label(name) -> bool:
    """A label is part of a file cell: a string with text, without the ``|`` that joins labels or a line/tab break
    (spaces are fine: a Hugging Face dataset's class names may have them)."""
    return isinstance(name, str) and name.strip() != "" and not set(name) & set("|\t\n\r\x00")


@functools.cache
def _unique_key_loader():
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the last one silently).

    Built on first use: PyYAML is imported only when a file is not in ``common.yaml_cache``."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            keys = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    seen = key in keys
                except TypeError:  # an unhashable key: SafeLoader reports it in its own words below
                    break
                if seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} appears twice", key_node.start_mark
                    )
                keys.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def _parse_yaml(text: str, path: Path):
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader subclass
    except yaml.YAMLError as err:
        raise UserError(f"not valid YAML ({err})", path=path, fix="correct the YAML syntax") from None
    except RecursionError:
        raise UserError("not valid YAML (nested too deeply)", path=path, fix="see faina/faina_labels.yaml") from None


@dataclass(frozen=True)
class LabelInventory:
    """Fine labels (file strings, sorted), their short ids, direct parents and the coarse roots."""

    name: str
    fine: tuple[str, ...]
    short_ids: dict[str, str]
    parents: dict[str, tuple[str, ...]]
    coarse: tuple[str, ...]
    source: str = field(default="<dict>", compare=False)
    # the option of the command that chose this inventory (``--labels``, ``data.labels``): what a message about a
    # label outside it tells the user to change (None: a model's or a corpus's own inventory)
    option: str | None = field(default=None, compare=False)

    def chosen_with(self, option: str) -> LabelInventory:
        """The same inventory, remembered as chosen with ``option``."""
        return replace(self, option=option)

    @classmethod
    def from_dict(cls, spec: dict, source: str = "<dict>") -> LabelInventory:
        def bad(
            problem: str,
            fix: str = "give `fine` (label: short id, or a list of labels) and optionally "
            "`parents` (label: [parent, ...]) and `coarse` (a list of labels)",
        ):
            return UserError(problem, path=source, fix=fix)

        if not isinstance(spec, dict) or "fine" not in spec:
            raise bad("label inventory lacks the key 'fine'")
        fine_spec, coarse_spec = spec["fine"], spec.get("coarse") or []
        parents_spec = spec.get("parents") or {}
        for listed in (fine_spec, coarse_spec):
            if isinstance(listed, (dict, list)) and NOT_ANNOTATED in listed:
                raise bad(
                    f"{NOT_ANNOTATED!r} cannot be a label name: it is the marker of a view that did not annotate a post",
                    fix=f"rename the label (files write {NOT_ANNOTATED!r} alone in a cell for a missing annotation)",
                )
        if isinstance(fine_spec, dict):
            fine_map = fine_spec
        elif isinstance(fine_spec, list):
            fine_map = {lab: lab for lab in fine_spec if _is_label(lab)}
            if len(fine_map) != len(fine_spec):
                raise bad("`fine` lists a label twice or an entry that is not a label name")
        else:
            raise bad(f"`fine` must be a mapping or a list, not {type(fine_spec).__name__}")
        if not isinstance(coarse_spec, list) or not isinstance(parents_spec, dict):
            raise bad("`coarse` must be a list and `parents` a mapping")
        for label in [*fine_map, *coarse_spec]:
            if not _is_label(label):
                raise bad(
                    f"{str(label)[:40]!r} is not a label name",
                    fix="label names are non-empty strings without |, tabs or line breaks (they are file cells)",
                )
        if not fine_map:
            raise bad("`fine` holds no labels")
        if len(set(coarse_spec)) != len(coarse_spec) or set(coarse_spec) & set(fine_map):
            raise bad("a coarse label is listed twice or is also a fine label")
        for label, short in fine_map.items():
            if not isinstance(short, (str, int)) or isinstance(short, bool):
                raise bad(f"the short id of {label!r} must be a string")
        fine = tuple(sorted(fine_map))
        coarse = tuple(sorted(coarse_spec))
        known = set(fine) | set(coarse)
        parents: dict[str, tuple[str, ...]] = {}
        for child, ps in parents_spec.items():
            if not isinstance(ps, list):
                raise bad(f"the parents of {str(child)[:40]!r} must be a list of labels")
            for name in [child, *ps]:
                if not isinstance(name, str) or name not in known:
                    raise UserError(
                        f"taxonomy names the unknown label {name!r}",
                        path=source,
                        fix="list it under `fine` or `coarse`, or correct its spelling",
                    )
            parents[child] = tuple(ps)
        for label in fine:
            parents.setdefault(label, ())
        name = spec.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise bad("`name` must be a non-empty string")
        inventory = cls(
            name=name or Path(source).stem,
            fine=fine,
            short_ids={k: str(v) for k, v in fine_map.items()},
            parents=parents,
            coarse=coarse,
            source=source,
        )
        inventory._check_acyclic()
        return inventory

    @classmethod
    def load(cls, path: str | Path) -> LabelInventory:
        """Read an inventory YAML file (a dataset package may add named defaults, as ``faina.formats.labels``)."""
        path = Path(path)
        fix = "give the path of an existing label inventory YAML (docs/faina-format.md describes the layout)"
        try:  # the path may come from a saved model.json: a name too long for the file system is an OSError
            found = path.is_file()
        except (OSError, ValueError) as err:
            raise UserError(
                f"not a usable path ({type(err).__name__}: {err.args[-1] if err.args else err})",
                path=str(path)[:200],
                fix=fix,
            ) from None
        if not found:
            raise UserError("label inventory file not found", path=path, fix=fix)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise UserError(f"cannot read the file ({err.strerror or err})", path=path, fix=fix) from None
        except UnicodeDecodeError as err:
            raise UserError(
                f"not UTF-8 (byte at offset {err.start})",
                path=path,
                fix="re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`",
            ) from None
        spec = cached_parse(text, lambda text: _parse_yaml(text, path))
        if not isinstance(spec, dict):
            raise UserError(
                "label inventory must be a mapping",
                path=path,
                fix="write `fine:`, `parents:` and `coarse:` keys (docs/faina-format.md)",
            )
        return cls.from_dict(spec, source=str(path))

    def _check_acyclic(self) -> None:
        for label in self.fine:
            seen: set[str] = set()
            stack = [label]
            while stack:
                node = stack.pop()
                for parent in self.parents.get(node, ()):
                    if parent == label:
                        raise UserError(
                            f"taxonomy has a cycle through {label!r}",
                            path=self.source,
                            fix="remove one parent link of the cycle",
                        )
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

"""Label definitions, aliases and spelling variants for prompting LLMs (read from a YAML data file).

The text lives in ``faina/fallacy_definitions.yaml`` so that it can be reviewed, translated or replaced
(another dataset in Faina's format brings its own file) without touching code. Loading checks it against
the label inventory: a prompt that silently lacked a definition would make results incomparable.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from common.errors import UserError
from faina.formats.labels import LabelInventory

DEFAULT_DEFINITIONS_FILE = Path(str(resources.files("faina") / "fallacy_definitions.yaml"))


@dataclass(frozen=True)
class LabelDefinitions:
    """One-sentence definitions of fine labels and coarse categories, plus name variants for parsing."""

    fine: dict[str, str]
    coarse: dict[str, str]
    aliases: dict[str, tuple[str, ...]]
    spelling: dict[str, str]
    source: str = "<dict>"

    def of(self, label: str) -> str:
        return self.fine.get(label) or self.coarse[label]


def load_definitions(inventory: LabelInventory, path: str | Path | None = None) -> LabelDefinitions:
    """Read a definitions YAML (``None``/``"faina"``: the packaged one) and check it covers ``inventory``."""
    path = DEFAULT_DEFINITIONS_FILE if path is None or str(path) == "faina" else Path(path)
    if not path.is_file():
        raise UserError(
            "label definitions file not found",
            path=path,
            fix="set task.zero_shot.definitions to `faina` or to a YAML like faina/fallacy_definitions.yaml",
        )
    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise UserError(f"not valid YAML ({err})", path=path, fix="correct the YAML syntax") from None
    if not isinstance(spec, dict):
        raise UserError("the definitions file must be a mapping", path=path, fix="see faina/fallacy_definitions.yaml")
    fine = {str(k): " ".join(str(v).split()) for k, v in (spec.get("fine") or {}).items()}
    coarse = {str(k): " ".join(str(v).split()) for k, v in (spec.get("coarse") or {}).items()}
    for what, given, wanted in (("fine label", fine, inventory.fine), ("coarse category", coarse, inventory.coarse)):
        missing = sorted(set(wanted) - set(given))
        extra = sorted(set(given) - set(wanted))
        if missing or extra:
            raise UserError(
                f"the {what} definitions do not match the inventory {inventory.name!r} "
                f"(missing: {missing or 'none'}; unknown: {extra or 'none'})",
                path=path,
                fix=f"define exactly the labels of {inventory.source}",
            )
    aliases = {str(k): tuple(str(a) for a in (v or ())) for k, v in (spec.get("aliases") or {}).items()}
    unknown = sorted(set(aliases) - set(fine) - set(coarse))
    if unknown:
        raise UserError(
            f"aliases given for unknown labels {unknown}", path=path, fix="use the inventory's label strings"
        )
    spelling = {str(k).lower(): str(v).lower() for k, v in (spec.get("spelling") or {}).items()}
    return LabelDefinitions(fine, coarse, aliases, spelling, source=str(path))

"""The checks every Faina reader makes on what it reads, beyond the text itself (``faina.formats.text_file``).

Which labels a file may hold, the message for one it may not (with the closest known label), one label grain per
file, one line per post id: CoNLL, TSV and any format registered in ``faina.formats.any_file`` apply the same
rules with the same messages.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from common.errors import UserError
from common.unique_keys import UniqueKeys
from faina.formats.labels import LabelInventory


def allowed_labels(inventory: LabelInventory, grain: str | None) -> set[str]:
    """The labels of ``grain`` (``fine``/``coarse``), or of either grain when it is ``None``."""
    return set(inventory.labels_of(grain)) if grain else set(inventory.fine) | set(inventory.coarse)


def unknown_label_error(label: str, allowed: Iterable[str], inventory: LabelInventory, path, line) -> UserError:
    close = difflib.get_close_matches(label, list(allowed), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    other = f", or give {inventory.option} an inventory that has it" if inventory.option else ""
    return UserError(
        f"unknown label {label!r}",
        path=path,
        line=line,
        fix=f"{hint}use a label of the inventory {inventory.name!r} ({inventory.source}){other}",
    )


class LabelGrains:
    """Where a file first uses a fine label and a coarse category, so that a file mixing them is refused."""

    def __init__(self, inventory: LabelInventory):
        self.inventory = inventory
        self.first_line: dict[str, int] = {}

    def saw(self, label: str, line: int) -> None:
        self.first_line.setdefault("coarse" if label in self.inventory.coarse else "fine", line)

    def refuse_mixed(self, path: str) -> None:
        if len(self.first_line) > 1:
            raise UserError(
                "the file mixes fine labels and coarse categories",
                path=path,
                line=max(self.first_line.values()),
                fix="use one label grain per file (coarse files hold only the macro-categories)",
            )


def unique_post_ids(path: str, id_field: str) -> UniqueKeys:
    """The post ids of a file: a second post with the same id is refused, naming the first."""
    return UniqueKeys(path, "duplicate post id {key!r} (first at line {first})", f"give every post a unique {id_field}")

"""Open any Faina-format file by its kind: span-level CoNLL or post-level TSV.

The kind follows the file extension (``.conll`` / ``.tsv``); anything else is refused with a fix, so a
user never gets a CoNLL file parsed as TSV by accident.
"""

from __future__ import annotations

from pathlib import Path

from common.errors import UserError
from faina.formats.conll import read_conll
from faina.formats.labels import LabelInventory
from faina.formats.records import PostCorpus, SpanCorpus
from faina.formats.tsv import read_post_tsv


def file_kind(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".conll", ".txt"):
        return "span"
    if suffix == ".tsv":
        return "post"
    raise UserError(
        f"cannot tell the file kind from the extension {suffix!r}",
        path=path,
        fix="name span-level files *.conll and post-level files *.tsv",
    )


def read_any(
    path: str | Path, inventory: LabelInventory | None = None, *, repair: bool = False, grain: str | None = None
) -> SpanCorpus | PostCorpus:
    if file_kind(path) == "span":
        return read_conll(path, inventory, repair=repair, grain=grain)
    return read_post_tsv(path, inventory, grain=grain)

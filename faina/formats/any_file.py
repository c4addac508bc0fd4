"""The one way in (and out) for Faina-format files: a small registry of file formats, chosen by extension.

Every command and library function that reads a Faina file (scoring, task data, prediction, validation,
statistics, the disagreement page) calls ``read_any``, and every writer of records calls ``write_any``, so a new
format is one module with a reader and a writer producing the same records (``SpanCorpus`` for span-level
formats, ``PostCorpus`` for post-level ones) plus one ``FileFormat`` line in ``FORMATS`` below.

A format is chosen by the file's extension. Where the level is known (a span task, a post-level model), only that
level's formats are asked, and a name none of them claims is read as the level's first format (CoNLL for span
files, TSV for post files), as the official scorers do whatever a file is called. Without a level, an unknown
extension is refused with a fix, so a CoNLL file is never parsed as TSV by accident.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError
from faina.formats.conll import read_conll, write_conll
from faina.formats.labels import LabelInventory
from faina.formats.records import PostCorpus, SpanCorpus
from faina.formats.tsv import read_post_tsv, write_post_tsv

Corpus = SpanCorpus | PostCorpus
LEVEL_RECORDS = {"span": SpanCorpus, "post": PostCorpus}


@dataclass(frozen=True)
class FileFormat:
    """One file format: the records it reads into and writes from, the extensions it claims (the first is what a
    writer names a file of it with), ``read(path, inventory, *, repair, grain)`` and ``write(corpus, path)``."""

    name: str
    level: str  # "span" or "post": a key of LEVEL_RECORDS
    suffixes: tuple[str, ...]
    read: Callable[..., Corpus]
    write: Callable[[Corpus, str | Path], Path]

    @property
    def suffix(self) -> str:
        return self.suffixes[0]


# The registry, in order of preference: the first format of a level is that level's default.
FORMATS: tuple[FileFormat, ...] = (
    FileFormat("conll", "span", (".conll", ".txt"), read_conll, write_conll),
    FileFormat("tsv", "post", (".tsv",), read_post_tsv, write_post_tsv),
)


def level_formats(level: str) -> tuple[FileFormat, ...]:
    return tuple(f for f in FORMATS if f.level == level)


def default_format(level: str) -> FileFormat:
    """The format a level's outputs are written in (the official layout: CoNLL for spans, TSV for posts)."""
    return level_formats(level)[0]


def file_format(path: str | Path, level: str | None = None) -> FileFormat:
    """The format of ``path`` by its extension, among ``level``'s formats when a level is given (then a name none
    of them claims gets the level's default); without a level an unknown extension is a ``UserError``."""
    suffix = Path(path).suffix.lower()
    candidates = level_formats(level) if level is not None else FORMATS
    for candidate in candidates:
        if suffix in candidate.suffixes:
            return candidate
    if level is not None:
        return candidates[0]
    known = ", ".join(f"*{s} ({f.level}-level {f.name})" for f in FORMATS for s in f.suffixes)
    raise UserError(f"cannot tell the file kind from the extension {suffix!r}", path=path, fix=f"name files {known}")


def file_kind(path: str | Path) -> str:
    """``span`` or ``post``: the level of the records ``path`` holds, by its extension."""
    return file_format(path).level


def read_any(
    path: str | Path,
    inventory: LabelInventory | None = None,
    *,
    level: str | None = None,
    repair: bool = False,
    grain: str | None = None,
) -> Corpus:
    """Read and validate ``path`` with its format (``file_format``): a ``SpanCorpus`` or a ``PostCorpus``."""
    return file_format(path, level).read(path, inventory, repair=repair, grain=grain)


def level_of(corpus: Corpus) -> str:
    return next(level for level, records in LEVEL_RECORDS.items() if isinstance(corpus, records))


def write_any(corpus: Corpus, path: str | Path) -> Path:
    """Write ``corpus`` atomically in the format of ``path``'s extension among its level's formats (the level's
    default for any other name)."""
    return file_format(path, level_of(corpus)).write(corpus, path)


def check_readable_by(path: str | Path, level: str, reader: str) -> None:
    """Refuse a file whose extension no format of ``level`` claims, for a ``reader`` that needs that level."""
    suffix = Path(path).suffix.lower()
    formats = level_formats(level)
    if not any(suffix in f.suffixes for f in formats):
        names = " or ".join(suffix for f in formats for suffix in f.suffixes)
        raise UserError(
            f"a {reader} reads {names} files",
            path=path,
            fix=f"give the {' or '.join(f.name.upper() for f in formats)} file of the same posts",
        )

"""``probabilities.jsonl.gz``: a model's probabilities beside its hard prediction file (layout: docs/soft-labels.md).

One JSON object per line and post, in the order of the posts of the hard file:

- post level: ``{"post_id": "17", "probabilities": {"a1": {"Doubt": 0.91, ...}, "a2": {...}}}``: per view and
  label the probability that the view's annotator gives the post the label;
- span level: ``{"post_id": "17", "tokens": ["Ma", ...], "probabilities": {"a1": {"Doubt": [0.01, 0.93, ...]}}}``:
  per view and label a list with one value per token of the file, element ``k - 1`` for the file's token ``k``
  (tokens count from 1, as the files do): the marginal probability that token ``k`` lies inside a span of the label.

Views are named as the files' label columns (``a1`` … ``aN``), so any number of views fits; every line names the
same views and labels in the same order. Values keep 4 significant digits of their distance to the nearer of 0
and 1 (``0.1235``, ``3.217e-06``, ``0.99999681``): as compact as 4 decimals for most values, while a
near-certain token keeps what its log-loss needs (rounded to 4 decimals, ``3.217e-06`` would be ``0.0``, and a
labelled token would cost the log-loss's clamp, 27.6 nats, instead of its 12.6); the hard file was decided, and a fold scored, on the unrounded values.

A run's folds write the lines gzip-compressed (``FILE_NAME``, a sixth of the plain file's size); folders written
before that hold them plain (``FORMER_FILE_NAME``), and ``probability_file_in`` finds either. Any other path is
written and read as its name says: gzip when it ends in ``.gz``, plain text otherwise. The reader validates all of it
and names the file and the line of the first problem.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.errors import UserError
from common.io import atomic_write_bytes

FILE_NAME = "probabilities.jsonl.gz"
FORMER_FILE_NAME = "probabilities.jsonl"
SIGNIFICANT = 4  # digits of min(p, 1 - p) a written value keeps
GZIP_LEVEL = 6  # level 9 saves a few percent more for several times the seconds


@dataclass(frozen=True)
class PostProbabilities:
    """One post's probabilities: ``values`` ``[V, C]`` (post level) or ``[V, C, W]`` with its ``tokens`` (span)."""

    post_id: str
    values: np.ndarray
    tokens: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ProbabilityFile:
    level: str  # "post" or "span"
    views: tuple[str, ...]
    labels: tuple[str, ...]
    posts: tuple[PostProbabilities, ...]
    path: str = "<memory>"

    def __len__(self) -> int:
        return len(self.posts)


def probability_file_in(folder: str | Path) -> Path:
    """The probability file of a fold folder: ``FILE_NAME``, or ``FORMER_FILE_NAME`` in a folder written before
    folds compressed it (``FILE_NAME`` when neither is there, so a reader's error names today's file)."""
    folder = Path(folder)
    former = folder / FORMER_FILE_NAME
    return former if former.is_file() and not (folder / FILE_NAME).is_file() else folder / FILE_NAME


def compressed(path: str | Path) -> bool:
    """Whether ``path`` is (to be) gzip-compressed: its name ends in ``.gz``."""
    return str(path).lower().endswith(".gz")


def compact(values) -> np.ndarray:
    """``values`` rounded to ``SIGNIFICANT`` digits of ``min(p, 1 - p)`` (at least ``SIGNIFICANT`` decimals), as
    float64: the log-loss of a rounded value stays within about 1e-3 of the unrounded one's, however sure."""
    values = np.asarray(values, dtype=np.float64)
    tail = np.minimum(values, 1.0 - values)
    magnitude = np.floor(np.log10(np.where(tail > 0, tail, 1.0)))
    decimals = np.clip(SIGNIFICANT - 1 - magnitude, SIGNIFICANT, 300)
    scale = 10.0**decimals
    return np.round(values * scale) / scale


def probability_line(level: str, views: Sequence[str], labels: Sequence[str], post: PostProbabilities) -> dict:
    """The JSON object of one post (also what ``faina.tag`` attaches to a tagged post)."""
    values = compact(post.values).tolist()  # floats print as their shortest repr: 0.1235
    table = {view: dict(zip(labels, values[v])) for v, view in enumerate(views)}
    if level == "post":
        return {"post_id": post.post_id, "probabilities": table}
    return {"post_id": post.post_id, "tokens": list(post.tokens or ()), "probabilities": table}


def write_probabilities(probabilities: ProbabilityFile, path: str | Path) -> Path:
    """Write the file's lines into ``path``, gzip-compressed when its name ends in ``.gz`` (byte for byte the same
    for the same values: no time stamp in the gzip header)."""
    lines = [
        json.dumps(
            probability_line(probabilities.level, probabilities.views, probabilities.labels, post), ensure_ascii=False
        )
        for post in probabilities.posts
    ]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if compressed(path):
        data = gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
    return atomic_write_bytes(path, data)


def _read_text(path: str) -> str:
    """The file's text, decompressed when its name ends in ``.gz``; a file that cannot be read, decompressed or
    decoded is one ``UserError`` naming it."""
    fix = f"give the {FILE_NAME} (or a plain {FORMER_FILE_NAME}) written beside a prediction file"
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise UserError(f"cannot read the probability file ({err.strerror})", path=path, fix=fix) from None
    if compressed(path):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:  # not gzip, or cut short
            raise UserError(
                f"the probability file is not a complete gzip file ({err or type(err).__name__})",
                path=path,
                fix=f"{fix}; a plain JSON-lines file must not end in .gz",
            ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(
            f"the probability file is not UTF-8 text (byte {err.start})",
            path=path,
            fix=f"{fix}; a gzip file's name must end in .gz" if not compressed(path) else fix,
        ) from None


def read_probabilities(path: str | Path) -> ProbabilityFile:
    """A validated probability file (plain, or gzip when its name ends in ``.gz``); any problem is a ``UserError``
    naming the file, the line and the fix."""
    path = str(path)
    text = _read_text(path)
    posts, level, views, labels = [], None, None, None
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as err:
            raise UserError(
                f"not a JSON object ({err.msg})",
                path=path,
                line=number,
                fix="write one JSON object per line (docs/soft-labels.md)",
            ) from None
        line_level = _level_of(record, path, number)
        line_views, line_labels, values = _table(record, line_level, path, number)
        if level is None:
            level, views, labels = line_level, line_views, line_labels
        elif (line_level, line_views, line_labels) != (level, views, labels):
            raise UserError(
                f"this line's level, views or labels differ from the first line's ({level}, views "
                f"{', '.join(views)}; {len(labels)} labels)",
                path=path,
                line=number,
                fix="write every post with the same views and labels, in the same order",
            )
        tokens = tuple(record["tokens"]) if line_level == "span" else None
        posts.append(PostProbabilities(str(record["post_id"]), values, tokens))
    if level is None:
        raise UserError(
            "the probability file has no posts", path=path, fix="give a probability file with at least one post"
        )
    return ProbabilityFile(level, views, labels, tuple(posts), path)


def _level_of(record, path: str, number: int) -> str:
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("post_id"), str)
        or not isinstance(record.get("probabilities"), dict)
        or not record["probabilities"]
    ):
        raise UserError(
            'each line needs a string "post_id" and a non-empty "probabilities" object',
            path=path,
            line=number,
            fix="write the layout of docs/soft-labels.md",
        )
    if "tokens" not in record:
        return "post"
    tokens = record["tokens"]
    if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
        raise UserError(
            '"tokens" must be a list of strings (the post\'s tokens)',
            path=path,
            line=number,
            fix="write the post's tokens as the CoNLL file has them",
        )
    return "span"


def _table(record: dict, level: str, path: str, number: int) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray]:
    table = record["probabilities"]
    views = tuple(table)
    labels = None
    rows = []
    for view in views:
        per_label = table[view]
        if not isinstance(per_label, dict) or not per_label:
            raise UserError(
                f"view {view!r}: expected an object of labels",
                path=path,
                line=number,
                fix="map each view to {label: probability}",
            )
        if labels is None:
            labels = tuple(per_label)
        elif tuple(per_label) != labels:
            raise UserError(
                f"view {view!r} lists other labels than view {views[0]!r}",
                path=path,
                line=number,
                fix="give every view the same labels in the same order",
            )
        rows.append(
            [
                _values(per_label[label], level, len(record.get("tokens", ())), view, label, path, number)
                for label in labels
            ]
        )
    return views, labels, np.asarray(rows, dtype=np.float64)


def _values(value, level: str, num_tokens: int, view: str, label: str, path: str, number: int):
    where = f"view {view!r}, label {label!r}"
    items = value if level == "span" else [value]
    if level == "span" and (not isinstance(value, list) or len(value) != num_tokens):
        raise UserError(
            f"{where}: expected a list of {num_tokens} probabilities (one per token)",
            path=path,
            line=number,
            fix="give one value per token, in token order",
        )
    for item in items:
        if (
            isinstance(item, bool)
            or not isinstance(item, (int, float))
            or not math.isfinite(item)
            or not 0.0 <= item <= 1.0
        ):
            raise UserError(
                f"{where}: {item!r} is not a probability between 0 and 1",
                path=path,
                line=number,
                fix="write probabilities as numbers in [0, 1]",
            )
    return value if level == "span" else float(value)


def refuse_uncalibrated_alone(args) -> None:
    """``faina.predict`` / ``faina.tag``: ``--uncalibrated`` chooses which probabilities ``--probabilities``
    writes; alone it would do nothing, which is one message, not a silently ignored option."""
    if args.uncalibrated and not args.probabilities:
        raise UserError(
            "--uncalibrated chooses the probabilities that --probabilities writes, and no --probabilities was given",
            fix="add --probabilities PATH, or drop --uncalibrated",
        )

"""Reader and writer of Faina's post-level TSV file (see docs/faina-format.md).

A header line, then one post per line: id, date, topic, text and one labels cell per view (labels
joined by ``|`` in name order, empty when the view marked none, ``?`` alone when the view did not annotate the
post: ``PostRow.labels[v]`` is then ``None``). The number of views is the number of ``labels_*`` columns.
Writing what was read gives the same bytes back for a well-formed file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.errors import UserError
from faina.formats.alignment import check_aligned as check_rows_aligned  # noqa: F401  (re-exported)
from faina.formats.labels import LabelInventory
from faina.formats.reading_checks import LabelGrains, allowed_labels, unique_post_ids, unknown_label_error
from faina.formats.records import NOT_ANNOTATED, PostCorpus, PostRow, SpanCorpus
from faina.formats.text_file import read_lines

FIXED_COLUMNS = ("post_id", "post_date", "post_topic_keywords", "post_text")


def header_for(num_views: int) -> str:
    return "\t".join([*FIXED_COLUMNS, *(f"labels_a{v + 1}" for v in range(num_views))])


def read_post_tsv(
    path: str | Path, inventory: LabelInventory | None = None, *, repair: bool = False, grain: str | None = None
) -> PostCorpus:
    """Read and validate a post-level file. ``grain`` restricts the labels as in ``read_conll``; ``repair`` is
    accepted so that every format's reader has one signature (a TSV cell has no BIO tags to repair)."""
    inventory = inventory or LabelInventory.load()
    path = str(path)
    lines = read_lines(path)
    columns = lines[0].split("\t")
    num_views = len(columns) - len(FIXED_COLUMNS)
    if tuple(columns[:4]) != FIXED_COLUMNS or num_views < 1 or any(not c.startswith("labels_") for c in columns[4:]):
        raise UserError(
            f"the header line is {lines[0][:80]!r}",
            path=path,
            line=1,
            fix=f"start the file with the header '{header_for(2)}' (one labels_* column per annotator)",
        )
    allowed = allowed_labels(inventory, grain)
    rows: list[PostRow] = []
    post_ids = unique_post_ids(path, "post_id")
    grains = LabelGrains(inventory)
    for index, line in enumerate(lines[1:], start=2):
        parts = line.split("\t")
        if len(parts) != len(columns):
            raise UserError(
                f"expected {len(columns)} tab-separated columns as in the header, found {len(parts)}",
                path=path,
                line=index,
                fix="one post per line; no tabs or newlines inside the text; empty cells stay as tabs",
            )
        post_ids.add(parts[0], index)
        labels = []
        for view, cell in enumerate(parts[4:]):
            if cell == NOT_ANNOTATED:
                labels.append(None)
                continue
            items = tuple(cell.split("|")) if cell else ()
            if NOT_ANNOTATED in items:
                raise UserError(
                    f"the not-annotated marker {NOT_ANNOTATED!r} is mixed with labels in the cell {cell!r} "
                    f"of labels column {view + 1}",
                    path=path,
                    line=index,
                    fix=f"write {NOT_ANNOTATED!r} alone when the annotator did not label the post, "
                    "or the labels alone (an empty cell: labelled with no fallacy)",
                )
            for label in items:
                if label == "":
                    raise UserError(
                        f"empty label in the cell {cell!r} of labels column {view + 1}",
                        path=path,
                        line=index,
                        fix="join labels with a single | and no leading/trailing |",
                    )
                if label not in allowed:
                    raise unknown_label_error(label, allowed, inventory, path, index)
                grains.saw(label, index)
            if len(set(items)) != len(items):
                raise UserError(
                    f"a label repeats in the cell {cell!r}",
                    path=path,
                    line=index,
                    fix="list each label of a post once per annotator",
                )
            labels.append(items)
        rows.append(PostRow(parts[0], parts[1], parts[2], parts[3], tuple(labels), line=index))
    if not rows:
        raise UserError("the file has a header but no posts", path=path, line=1, fix="add one line per post")
    grains.refuse_mixed(path)
    return PostCorpus(tuple(rows), num_views, path=path)


def format_post_tsv(corpus: PostCorpus) -> str:
    lines = [header_for(corpus.num_views)]
    for row in corpus.rows:
        lines.append("\t".join([row.post_id, row.date, row.topic, row.text, *(_cell(v) for v in row.labels)]))
    return "\n".join(lines) + "\n"


def _cell(labels) -> str:
    return NOT_ANNOTATED if labels is None else "|".join(labels)


def write_post_tsv(corpus: PostCorpus, path: str | Path) -> Path:
    from common.io import atomic_write_text

    return atomic_write_text(path, format_post_tsv(corpus))


def rows_with_labels(corpus: PostCorpus, labels: Sequence[Sequence[Sequence[str]]]) -> PostCorpus:
    """The same posts with new label sets per view (e.g. predictions), each cell sorted by name."""
    rows = tuple(
        PostRow(
            r.post_id, r.date, r.topic, r.text, tuple(None if v is None else tuple(sorted(set(v))) for v in lab), r.line
        )
        for r, lab in zip(corpus.rows, labels, strict=True)
    )
    return PostCorpus(rows, len(labels[0]) if labels else corpus.num_views, path=corpus.path)


def post_corpus_from_spans(corpus: SpanCorpus) -> PostCorpus:
    """The post-level view of a span-level corpus: each view's label set is the set of its span labels."""
    rows = tuple(
        PostRow(p.post_id, p.date, p.topic, p.text, tuple(p.labels(v) for v in range(corpus.num_views)), p.line)
        for p in corpus.posts
    )
    return PostCorpus(rows, corpus.num_views, path=corpus.path)

"""Reader and writer of Faina's span-level CoNLL file (see docs/faina-format.md).

Reading validates everything the official scorer silently assumes (well-formed BIO, consecutive token
ids, known labels, one label grain) and reports the first problem with its file, line and fix. Writing
what was read gives the same bytes back for a well-formed file; predictions written through
``write_conll`` fill the label cells of an unlabelled file in the official layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.errors import UserError
from faina.formats.alignment import check_aligned  # noqa: F401  (re-exported: the span files' alignment check)
from faina.formats.labels import LabelInventory
from faina.formats.reading_checks import LabelGrains, allowed_labels, unique_post_ids, unknown_label_error
from faina.formats.records import NOT_ANNOTATED, Post, Span, SpanCorpus, span_order
from faina.formats.text_file import read_lines

HEADER_KEYS = ("post_id", "post_date", "post_topic_keywords", "post_text")
OUTSIDE = "O"


class _PostParser:
    """Builds one post's spans token by token, per view, enforcing the BIO rules.

    A view whose first token's cell is ``NOT_ANNOTATED`` did not annotate the post: every token of the post must
    carry the marker in that column, and ``finish`` gives ``None`` for the view.
    """

    def __init__(self, path: str, num_views: int, repair: bool):
        self.path = path
        self.repair = repair
        self.open: list[dict[str, list[int]]] = [{} for _ in range(num_views)]
        self.spans: list[list[Span]] = [[] for _ in range(num_views)]
        self.repairs: list[str] = []
        self.missing: list[bool | None] = [None] * num_views  # set by the post's first token
        self.first_line: int | None = None

    def _check_marker(self, view: int, cell: str, line: int) -> bool:
        """Whether the view's cell is the not-annotated marker, consistently over the post's tokens."""
        marked = cell == NOT_ANNOTATED
        if not marked and NOT_ANNOTATED in cell.split("|"):
            raise UserError(
                f"the not-annotated marker {NOT_ANNOTATED!r} is mixed with tags in label column {view + 1}",
                path=self.path,
                line=line,
                fix=f"write {NOT_ANNOTATED!r} alone on every token of a post the annotator did not label",
            )
        if self.missing[view] is None:
            self.missing[view] = marked
        elif self.missing[view] != marked:
            first = "carries" if self.missing[view] else "does not carry"
            raise UserError(
                f"label column {view + 1} {'carries' if marked else 'does not carry'} the not-annotated marker "
                f"{NOT_ANNOTATED!r} here, but the post's first token (line {self.first_line}) {first} it",
                path=self.path,
                line=line,
                fix=f"a view annotates a whole post or none of it: write {NOT_ANNOTATED!r} on every token of the "
                "post in that column, or tags (O outside spans) on every token",
            )
        return marked

    def add_token(
        self, index: int, cells: Sequence[str], line: int, allowed: set[str], inventory: LabelInventory
    ) -> None:
        if self.first_line is None:
            self.first_line = line
        for view, cell in enumerate(cells):
            tagged: set[str] = set()
            if self._check_marker(view, cell, line):
                continue
            if cell != OUTSIDE:
                for tag in cell.split("|"):
                    bio, sep, label = tag.partition("-")
                    if bio not in ("B", "I") or not sep or not label:
                        raise UserError(
                            f"malformed tag {tag!r} in label column {view + 1}",
                            path=self.path,
                            line=line,
                            fix="write O, or B-Label / I-Label tags joined by | (no spaces)",
                        )
                    if label not in allowed:
                        raise unknown_label_error(label, allowed, inventory, self.path, line)
                    if label in tagged:
                        raise UserError(
                            f"label {label!r} is tagged twice in one cell of label column {view + 1}",
                            path=self.path,
                            line=line,
                            fix="spans of the same label in one view cannot overlap; keep one tag",
                        )
                    tagged.add(label)
                    self._tag(view, bio, label, index, line)
            for label in [lab for lab in self.open[view] if lab not in tagged]:
                self._close(view, label)

    def _tag(self, view: int, bio: str, label: str, index: int, line: int) -> None:
        current = self.open[view].get(label)
        if bio == "I":
            if current is not None and current[1] == index - 1:
                current[1] = index
                return
            if not self.repair:
                raise UserError(
                    f"I-{label} in label column {view + 1} continues no open {label} span "
                    "(the token before has no such tag in this view)",
                    path=self.path,
                    line=line,
                    fix=f"start the span with B-{label}, or read with repair "
                    "(--repair / data.repair=true) to turn it into B-{label}",
                )
            self.repairs.append(
                f"{self.path}:{line}: I-{label} without an open span in label column {view + 1} repaired to B-{label}"
            )
        if current is not None:
            self._close(view, label)
        self.open[view][label] = [index, index]

    def _close(self, view: int, label: str) -> None:
        first, last = self.open[view].pop(label)
        self.spans[view].append(Span(first, last, label))

    def finish(self) -> tuple[tuple[Span, ...] | None, ...]:
        for view in range(len(self.open)):
            for label in list(self.open[view]):
                self._close(view, label)
        return tuple(
            None if missing else tuple(sorted(view, key=span_order)) for view, missing in zip(self.spans, self.missing)
        )


def read_conll(
    path: str | Path, inventory: LabelInventory | None = None, *, repair: bool = False, grain: str | None = None
) -> SpanCorpus:
    """Read and validate a span-level file.

    ``grain`` (``fine``/``coarse``) restricts the labels; by default either grain is accepted but a file
    must not mix them. ``repair`` turns an ``I-X`` with no open ``X`` span into ``B-X`` and records it.
    """
    inventory = inventory or LabelInventory.load()
    path = str(path)
    lines = read_lines(path)
    token_lines = _TokenLines(path, inventory, allowed_labels(inventory, grain), repair)
    post_ids = unique_post_ids(path, "# post_id")
    posts: list[Post] = []
    i = 0
    while i < len(lines):
        if lines[i] == "":
            i += 1
            continue
        start = i + 1
        header, i = read_header(lines, i, path)
        post_ids.add(header["post_id"], start)
        post, i = token_lines.read_post(lines, i, header, start)
        posts.append(post)
    if not posts:
        raise UserError("no posts found", path=path, fix="a post starts with '# post_id = ...'")
    token_lines.grains.refuse_mixed(path)
    return SpanCorpus(
        tuple(posts),
        token_lines.num_views or 0,
        path=path,
        trailing_blank_line=lines[-1] == "",
        repairs=tuple(token_lines.repairs),
        warnings=tuple(token_lines.warnings),
    )


def read_header(lines: Sequence[str], i: int, path: str) -> tuple[dict[str, str], int]:
    """The four ``# key = value`` header lines of the post starting at ``lines[i]``, and the index after them."""
    header: dict[str, str] = {}
    for key in HEADER_KEYS:
        prefix = f"# {key} = "
        if i >= len(lines) or not lines[i].startswith(prefix):
            found = repr(lines[i][:40]) if i < len(lines) else "the end of the file"
            raise UserError(
                f"expected the header line '{prefix}...', found {found}",
                path=path,
                line=i + 1,
                fix="start every post with the four header lines # post_id, # post_date, "
                "# post_topic_keywords, # post_text, and separate posts by one blank line",
            )
        header[key] = lines[i][len(prefix) :]
        i += 1
    return header, i


class _TokenLines:
    """Reads the token lines of each post in turn, with what holds for the whole file: the number of label columns
    (set by the first token line), whether the file is labelled (set by its first post), the label grains it uses,
    and the repairs and warnings of every post."""

    def __init__(self, path: str, inventory: LabelInventory, allowed: set[str], repair: bool):
        self.path = path
        self.inventory = inventory
        self.allowed = allowed
        self.repair = repair
        self.num_views: int | None = None
        self.file_labelled: bool | None = None
        self.grains = LabelGrains(inventory)
        self.repairs: list[str] = []
        self.warnings: list[str] = []

    def read_post(self, lines: Sequence[str], i: int, header: dict[str, str], start: int) -> tuple[Post, int]:
        """The post whose token lines start at ``lines[i]`` (its header read), and the index of the line after."""
        tokens: list[str] = []
        parser: _PostParser | None = None
        post_labelled: bool | None = None
        while i < len(lines) and lines[i] != "":
            line_no = i + 1
            token, cells = self._columns(lines[i].split("\t"), len(tokens) + 1, line_no)
            labelled = self._labelled(cells, line_no)
            if post_labelled is None:
                post_labelled = labelled
                self._check_file_labelled(labelled, line_no)
                parser = _PostParser(self.path, self.num_views, self.repair)
            elif labelled != post_labelled:
                raise UserError(
                    "the post mixes labelled and unlabelled tokens",
                    path=self.path,
                    line=line_no,
                    fix="fill every label cell of the post (O when outside spans)",
                )
            if labelled:
                parser.add_token(len(tokens) + 1, cells, line_no, self.allowed, self.inventory)
                self._note_tags(cells, line_no)
            tokens.append(token)
            i += 1
        if not tokens:
            raise UserError(
                f"post {header['post_id']!r} has no token lines",
                path=self.path,
                line=start,
                fix="add its tokens (index<TAB>token<TAB>labels...) after the four header lines",
            )
        spans = parser.finish() if post_labelled else None
        self.repairs.extend(parser.repairs)
        post = Post(
            header["post_id"],
            header["post_date"],
            header["post_topic_keywords"],
            header["post_text"],
            tuple(tokens),
            spans,
            line=start,
        )
        return post, i

    def _columns(self, parts: list[str], expected: int, line_no: int) -> tuple[str, list[str]]:
        """The token and label cells of a token line, its column count and index (``expected``) checked."""
        if self.num_views is None:
            if len(parts) < 3:
                raise UserError(
                    f"a token line has {len(parts)} tab-separated column(s); expected the index, "
                    "the token and one label column per annotator",
                    path=self.path,
                    line=line_no,
                    fix="separate columns with tabs; leave label cells empty in unlabelled files",
                )
            self.num_views = len(parts) - 2
        if len(parts) != self.num_views + 2:
            raise UserError(
                f"expected {self.num_views + 2} tab-separated columns (index, token, {self.num_views} label "
                f"columns, as on the file's first token line), found {len(parts)}",
                path=self.path,
                line=line_no,
                fix="give every token line the same number of columns",
            )
        if parts[0] != str(expected):
            what = (
                "a post header must follow a blank line"
                if parts[0].startswith("#")
                else "token indices run 1, 2, 3 ... within each post"
            )
            raise UserError(
                f"token index {parts[0]!r} where {expected} was expected ({what})",
                path=self.path,
                line=line_no,
                fix="renumber the tokens of the post consecutively from 1",
            )
        return parts[1], parts[2:]

    def _labelled(self, cells: list[str], line_no: int) -> bool:
        """Whether the token line carries labels: all its cells filled, or none."""
        empty = [cell == "" for cell in cells]
        if any(empty) and not all(empty):
            raise UserError(
                "some label cells are empty and others are not",
                path=self.path,
                line=line_no,
                fix="fill every label cell (O when outside spans) or leave all empty (unlabelled)",
            )
        return not empty[0]

    def _check_file_labelled(self, labelled: bool, line_no: int) -> None:
        """A post's first token line decides whether it is labelled; every post of a file must agree."""
        if self.file_labelled is None:
            self.file_labelled = labelled
        elif self.file_labelled != labelled:
            raise UserError(
                "the file mixes labelled and unlabelled posts",
                path=self.path,
                line=line_no,
                fix="label every post, or leave every label cell of the file empty",
            )

    def _note_tags(self, cells: list[str], line_no: int) -> None:
        """The grain of each tag, and a warning for a cell whose tags are not in label-name order."""
        for cell in cells:
            if cell not in (OUTSIDE, NOT_ANNOTATED):
                tags = cell.split("|")
                for tag in tags:
                    self.grains.saw(tag[2:], line_no)
                if [t[2:] for t in tags] != sorted(t[2:] for t in tags):
                    self.warnings.append(f"{self.path}:{line_no}: tags not ordered by label name ({cell})")


def _cells(post: Post, num_views: int) -> list[list[str]]:
    """The label cell of every token and view, in the official layout."""
    n = len(post.tokens)
    if post.spans is None:
        return [[""] * num_views for _ in range(n)]
    cells = [[[] for _ in range(num_views)] for _ in range(n)]
    missing = set()
    for view, spans in enumerate(post.spans):
        if spans is None:
            missing.add(view)
            continue
        taken: dict[str, int] = {}
        for span in sorted(spans, key=lambda s: (s.label, s.first)):
            if not 1 <= span.first <= span.last <= n:
                raise ValueError(f"post {post.post_id}: span {span} outside tokens 1..{n}")
            if taken.get(span.label, 0) >= span.first:
                raise ValueError(f"post {post.post_id}: overlapping {span.label} spans in view {view + 1}")
            taken[span.label] = span.last
            for t in span.tokens():
                cells[t - 1][view].append(("B-" if t == span.first else "I-") + span.label)
    return [
        [
            NOT_ANNOTATED if v in missing else "|".join(sorted(c, key=lambda tag: tag[2:])) or OUTSIDE
            for v, c in enumerate(row)
        ]
        for row in cells
    ]


def format_conll(corpus: SpanCorpus) -> str:
    blocks = []
    for post in corpus.posts:
        lines = [
            f"# post_id = {post.post_id}",
            f"# post_date = {post.date}",
            f"# post_topic_keywords = {post.topic}",
            f"# post_text = {post.text}",
        ]
        for index, (token, row) in enumerate(zip(post.tokens, _cells(post, corpus.num_views)), start=1):
            lines.append("\t".join([str(index), token, *row]))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" + ("\n" if corpus.trailing_blank_line else "")


def write_conll(corpus: SpanCorpus, path: str | Path) -> Path:
    """Write atomically (a temporary file renamed into place), so readers never see half a file."""
    from common.io import atomic_write_text

    return atomic_write_text(path, format_conll(corpus))

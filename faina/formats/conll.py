"""Reader and writer of Faina's span-level CoNLL file (see docs/faina-format.md).

Reading validates everything the official scorer silently assumes (well-formed BIO, consecutive token
ids, known labels, one label grain) and reports the first problem with its file, line and fix. Writing
what was read gives the same bytes back for a well-formed file; predictions written through
``write_conll`` fill the label cells of an unlabelled file in the official layout.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path

from common.errors import UserError
from faina.formats.labels import LabelInventory
from faina.formats.records import NOT_ANNOTATED, Post, Span, SpanCorpus, span_order
from faina.formats.text_file import read_lines

HEADER_KEYS = ("post_id", "post_date", "post_topic_keywords", "post_text")
OUTSIDE = "O"


def unknown_label_error(label: str, allowed: Iterable[str], inventory: LabelInventory, path, line) -> UserError:
    close = difflib.get_close_matches(label, list(allowed), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return UserError(
        f"unknown label {label!r}",
        path=path,
        line=line,
        fix=f"{hint}use a label of the inventory {inventory.name!r} ({inventory.source}) "
        "or set data.labels to an inventory that has it",
    )


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
    allowed = set(inventory.labels_of(grain)) if grain else set(inventory.fine) | set(inventory.coarse)
    posts: list[Post] = []
    seen_ids: dict[str, int] = {}
    repairs: list[str] = []
    warnings: list[str] = []
    num_views: int | None = None
    file_labelled: bool | None = None
    grain_seen: dict[str, int] = {}
    i, n = 0, len(lines)
    while i < n:
        if lines[i] == "":
            i += 1
            continue
        start = i + 1
        header: dict[str, str] = {}
        for key in HEADER_KEYS:
            prefix = f"# {key} = "
            if i >= n or not lines[i].startswith(prefix):
                found = repr(lines[i][:40]) if i < n else "the end of the file"
                raise UserError(
                    f"expected the header line '{prefix}...', found {found}",
                    path=path,
                    line=i + 1,
                    fix="start every post with the four header lines # post_id, # post_date, "
                    "# post_topic_keywords, # post_text, and separate posts by one blank line",
                )
            header[key] = lines[i][len(prefix) :]
            i += 1
        post_id = header["post_id"]
        if post_id in seen_ids:
            raise UserError(
                f"duplicate post id {post_id!r} (first at line {seen_ids[post_id]})",
                path=path,
                line=start,
                fix="give every post a unique # post_id",
            )
        seen_ids[post_id] = start
        tokens: list[str] = []
        parser: _PostParser | None = None
        post_labelled: bool | None = None
        while i < n and lines[i] != "":
            line_no = i + 1
            parts = lines[i].split("\t")
            if num_views is None:
                if len(parts) < 3:
                    raise UserError(
                        f"a token line has {len(parts)} tab-separated column(s); expected the index, "
                        "the token and one label column per annotator",
                        path=path,
                        line=line_no,
                        fix="separate columns with tabs; leave label cells empty in unlabelled files",
                    )
                num_views = len(parts) - 2
            if len(parts) != num_views + 2:
                raise UserError(
                    f"expected {num_views + 2} tab-separated columns (index, token, {num_views} label "
                    f"columns, as on the file's first token line), found {len(parts)}",
                    path=path,
                    line=line_no,
                    fix="give every token line the same number of columns",
                )
            expected = len(tokens) + 1
            if parts[0] != str(expected):
                what = (
                    "a post header must follow a blank line"
                    if parts[0].startswith("#")
                    else "token indices run 1, 2, 3 ... within each post"
                )
                raise UserError(
                    f"token index {parts[0]!r} where {expected} was expected ({what})",
                    path=path,
                    line=line_no,
                    fix="renumber the tokens of the post consecutively from 1",
                )
            cells = parts[2:]
            empty = [cell == "" for cell in cells]
            if any(empty) and not all(empty):
                raise UserError(
                    "some label cells are empty and others are not",
                    path=path,
                    line=line_no,
                    fix="fill every label cell (O when outside spans) or leave all empty (unlabelled)",
                )
            labelled = not empty[0]
            if post_labelled is None:
                post_labelled = labelled
                if file_labelled is None:
                    file_labelled = labelled
                elif file_labelled != labelled:
                    raise UserError(
                        "the file mixes labelled and unlabelled posts",
                        path=path,
                        line=line_no,
                        fix="label every post, or leave every label cell of the file empty",
                    )
                parser = _PostParser(path, num_views, repair)
            elif labelled != post_labelled:
                raise UserError(
                    "the post mixes labelled and unlabelled tokens",
                    path=path,
                    line=line_no,
                    fix="fill every label cell of the post (O when outside spans)",
                )
            if labelled:
                parser.add_token(expected, cells, line_no, allowed, inventory)
                for cell in cells:
                    if cell not in (OUTSIDE, NOT_ANNOTATED):
                        tags = cell.split("|")
                        for tag in tags:
                            grain_seen.setdefault("coarse" if tag[2:] in inventory.coarse else "fine", line_no)
                        if [t[2:] for t in tags] != sorted(t[2:] for t in tags):
                            warnings.append(f"{path}:{line_no}: tags not ordered by label name ({cell})")
            tokens.append(parts[1])
            i += 1
        if not tokens:
            raise UserError(
                f"post {post_id!r} has no token lines",
                path=path,
                line=start,
                fix="add its tokens (index<TAB>token<TAB>labels...) after the four header lines",
            )
        spans = parser.finish() if post_labelled else None
        if parser is not None:
            repairs.extend(parser.repairs)
        posts.append(
            Post(
                post_id,
                header["post_date"],
                header["post_topic_keywords"],
                header["post_text"],
                tuple(tokens),
                spans,
                line=start,
            )
        )
    if not posts:
        raise UserError("no posts found", path=path, fix="a post starts with '# post_id = ...'")
    if len(grain_seen) > 1:
        raise UserError(
            "the file mixes fine labels and coarse categories",
            path=path,
            line=max(grain_seen.values()),
            fix="use one label grain per file (coarse files hold only the macro-categories)",
        )
    trailing_blank = lines[-1] == ""
    return SpanCorpus(
        tuple(posts),
        num_views or 0,
        path=path,
        trailing_blank_line=trailing_blank,
        repairs=tuple(repairs),
        warnings=tuple(warnings),
    )


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


def check_aligned(gold: SpanCorpus, pred: SpanCorpus) -> None:
    """Raise unless both files hold the same posts, in the same order, with the same tokens."""
    if len(gold.posts) != len(pred.posts):
        raise UserError(
            f"{len(pred.posts)} posts, but the gold file {gold.path} has {len(gold.posts)}",
            path=pred.path,
            fix="predict every post of the gold file, in its order",
        )
    for g, p in zip(gold.posts, pred.posts):
        if g.post_id != p.post_id:
            raise UserError(
                f"post {p.post_id!r} where the gold file has {g.post_id!r} (line {g.line})",
                path=pred.path,
                line=p.line,
                fix="keep the posts in the gold file's order",
            )
        if len(g.tokens) != len(p.tokens):
            raise UserError(
                f"post {p.post_id!r} has {len(p.tokens)} tokens, the gold file {len(g.tokens)}",
                path=pred.path,
                line=p.line,
                fix="keep the gold file's tokenisation",
            )

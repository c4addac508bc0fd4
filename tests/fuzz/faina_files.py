"""Valid Faina files drawn as text, written independently of the project's writers, with their records.

A CoNLL or TSV file is drawn together with the records a correct reader must return for it, so the fuzz
tests can check both directions: read(text) == records and write(read(text)) == text, byte for byte.
"""

from __future__ import annotations

from hypothesis import strategies as st

from faina.formats.records import Post, PostRow, Span
from strategies import INVENTORY, without_same_label_overlap

# characters a header value or post text may hold: everything but the line breaks the format splits on
# (and NUL, which no text file holds); tabs, emojis and Unicode line separators are legal in a header. A fixed
# alphabet of the interesting ones draws far faster than ``st.characters()``.
TOKEN_ALPHABET = "aàbBé0 1#=|-_O:.,@\u00a0\u2028\u2029\x85\x0b\x0c\x1c\U0001f600\u0301\ufeffИ中"
HEADER_CHARS = st.sampled_from(TOKEN_ALPHABET + "\t")
TOKEN_CHARS = st.sampled_from(TOKEN_ALPHABET)
header_values = st.text(HEADER_CHARS, max_size=12)
cell_values = st.text(TOKEN_CHARS, max_size=12)
tokens = st.text(TOKEN_CHARS, min_size=1, max_size=6)
post_ids = st.text(TOKEN_CHARS, min_size=1, max_size=6)


def cells_of(spans_per_view, num_tokens: int) -> list[list[str]]:
    """The label cell of every token and view: B-/I- tags of the spans covering it, ordered by label name."""
    rows = []
    for t in range(1, num_tokens + 1):
        row = []
        for spans in spans_per_view:
            tags = sorted(
                (s.label, ("B-" if t == s.first else "I-") + s.label) for s in spans if s.first <= t <= s.last
            )
            row.append("|".join(tag for _, tag in tags) or "O")
        rows.append(row)
    return rows


# strategies built once: building them inside a composite on every draw costs more than the draw itself
GRAINS = st.sampled_from(("fine", "fine", "coarse"))
RAW_SPANS = {
    grain: st.lists(
        st.tuples(
            st.integers(0, 255), st.sampled_from((0, 0, 1, 2, 4, 8, 30)), st.sampled_from(INVENTORY.labels_of(grain))
        ),
        max_size=4,
    )
    for grain in ("fine", "coarse")
}
TOKEN_LISTS = st.lists(tokens, min_size=1, max_size=12)
LABEL_SETS = {
    grain: st.lists(st.sampled_from(INVENTORY.labels_of(grain)), unique=True, max_size=4)
    for grain in ("fine", "coarse")
}


def spans_from(raw, num_tokens: int) -> tuple[Span, ...]:
    """One view's spans from drawn (start, extra length, label) triples, clipped to the post."""
    spans = []
    for start, extra, label in raw:
        first = 1 + start % num_tokens
        spans.append(Span(first, min(num_tokens, first + extra), label))
    return without_same_label_overlap(spans)


@st.composite
def conll_files(draw, max_posts: int = 4) -> tuple[str, list[Post], int]:
    """``(text, posts, num_views)`` of a valid span-level file (labelled or not, one grain)."""
    num_views = draw(st.integers(1, 3))
    labelled = draw(st.booleans()) or draw(st.booleans())
    grain = draw(GRAINS)
    ids = draw(st.lists(post_ids, min_size=1, max_size=max_posts, unique=True))
    blocks, posts = [], []
    for post_id in ids:
        toks = tuple(draw(TOKEN_LISTS))
        date, topic, text = draw(header_values), draw(header_values), draw(header_values)
        spans = tuple(spans_from(draw(RAW_SPANS[grain]), len(toks)) for _ in range(num_views)) if labelled else None
        cells = cells_of(spans, len(toks)) if labelled else [[""] * num_views for _ in toks]
        lines = [
            f"# post_id = {post_id}",
            f"# post_date = {date}",
            f"# post_topic_keywords = {topic}",
            f"# post_text = {text}",
        ]
        lines += ["\t".join([str(i), tok, *row]) for i, (tok, row) in enumerate(zip(toks, cells), start=1)]
        blocks.append("\n".join(lines))
        posts.append(Post(post_id, date, topic, text, toks, spans))
    text = "\n\n".join(blocks) + "\n" + draw(st.sampled_from(("", "\n")))
    return text, posts, num_views


@st.composite
def tsv_files(draw, max_posts: int = 6) -> tuple[str, list[PostRow], int]:
    """``(text, rows, num_views)`` of a valid post-level file (FadeIT's layout: a header, one post per line)."""
    num_views = draw(st.integers(1, 3))
    grain = draw(GRAINS)
    ids = draw(st.lists(post_ids, min_size=1, max_size=max_posts, unique=True))
    header = "\t".join(
        ["post_id", "post_date", "post_topic_keywords", "post_text", *(f"labels_a{v + 1}" for v in range(num_views))]
    )
    lines, rows = [header], []
    for post_id in ids:
        date, topic, text = draw(cell_values), draw(cell_values), draw(cell_values)
        views = tuple(tuple(draw(LABEL_SETS[grain])) for _ in range(num_views))
        lines.append("\t".join([post_id, date, topic, text, *("|".join(v) for v in views)]))
        rows.append(PostRow(post_id, date, topic, text, views))
    return "\n".join(lines) + "\n", rows, num_views

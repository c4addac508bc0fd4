"""Hypothesis strategies for random *valid* Faina data, shared by the tests of every area.

Everything drawn here can be written with ``faina.formats.conll.write_conll`` / ``faina.formats.tsv.write_post_tsv`` and
read back without an error: same-label spans of one view never overlap (they may touch), spans of
different labels overlap freely, post ids are unique, texts hold no tabs or newlines. Pairs of corpora
(gold, prediction) share their posts and tokens, and predictions are drawn partly as perturbed copies of
the gold spans so that overlaps, exact matches and near misses are all common.

Import it as ``from strategies import ...``: pytest puts ``tests/`` on ``sys.path`` because of
``tests/conftest.py`` (``tests.strategies`` would clash with a ``tests`` package some libraries install).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from faina.formats.labels import LabelInventory
from faina.formats.records import Post, PostCorpus, PostRow, Span, SpanCorpus

INVENTORY = LabelInventory.load()
FINE_LABELS = INVENTORY.fine
COARSE_LABELS = INVENTORY.coarse
TOPICS = ("migration", "climate change", "public health")

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzàèéìòù@#!?.,", min_size=1, max_size=8)


def labels_of(grain: str) -> tuple[str, ...]:
    return INVENTORY.labels_of(grain)


def without_same_label_overlap(spans: Sequence[Span]) -> tuple[Span, ...]:
    """Keep spans in the given order, dropping any that shares a token with a kept span of its label."""
    kept: list[Span] = []
    for span in spans:
        if all(k.label != span.label or k.last < span.first or span.last < k.first for k in kept):
            kept.append(span)
    return tuple(sorted(kept, key=lambda s: (s.first, s.label)))


@st.composite
def spans_of_view(draw, num_tokens: int, labels: Sequence[str] = FINE_LABELS, max_spans: int = 6) -> tuple[Span, ...]:
    """One view's spans over tokens 1..num_tokens (possibly none)."""
    raw = []
    for _ in range(draw(st.integers(0, max_spans))):
        first = draw(st.integers(1, num_tokens))
        last = draw(st.integers(first, min(num_tokens, first + draw(st.sampled_from((0, 1, 2, 4, 8, 30))))))
        raw.append(Span(first, last, draw(st.sampled_from(tuple(labels)))))
    return without_same_label_overlap(raw)


@st.composite
def perturbed_view(
    draw, gold: Sequence[Span], num_tokens: int, labels: Sequence[str] = FINE_LABELS, max_extra: int = 3
) -> tuple[Span, ...]:
    """A prediction for one view: gold spans kept, moved, relabelled or dropped, plus a few random ones."""
    out = []
    for span in gold:
        action = draw(st.sampled_from(("keep", "shift", "relabel", "drop")))
        if action == "drop":
            continue
        first, last, label = span.first, span.last, span.label
        if action == "shift":
            first = min(max(1, first + draw(st.integers(-2, 2))), num_tokens)
            last = min(max(first, last + draw(st.integers(-2, 2))), num_tokens)
        elif action == "relabel":
            related = [p for p in INVENTORY.parents.get(label, ()) if p in labels]
            label = draw(st.sampled_from(tuple(related) + tuple(labels)))
        out.append(Span(first, last, label))
    out.extend(draw(spans_of_view(num_tokens, labels, max_spans=max_extra)))
    return without_same_label_overlap(out)


@st.composite
def post_skeletons(draw, min_posts: int = 1, max_posts: int = 6, max_tokens: int = 25) -> list[tuple]:
    """(post_id, date, topic, tokens) of a few posts with unique ids."""
    ids = draw(st.lists(st.integers(1, 10_000), min_size=min_posts, max_size=max_posts, unique=True))
    posts = []
    for post_id in ids:
        tokens = tuple(draw(st.lists(words, min_size=1, max_size=max_tokens)))
        date = f"20{draw(st.integers(19, 22))}-{draw(st.integers(1, 12)):02d}"
        posts.append((str(post_id), date, draw(st.sampled_from(TOPICS)), tokens))
    return posts


@st.composite
def span_corpus_pairs(
    draw,
    num_views: int = 2,
    grain: str = "fine",
    pred_views: int | None = None,
    max_posts: int = 6,
    empty_post_chance: bool = True,
) -> tuple[SpanCorpus, SpanCorpus]:
    """(gold, prediction) span corpora over the same posts; ``pred_views`` defaults to ``num_views``."""
    labels = labels_of(grain)
    pred_views = num_views if pred_views is None else pred_views
    gold_posts, pred_posts = [], []
    for post_id, date, topic, tokens in draw(post_skeletons(max_posts=max_posts)):
        n = len(tokens)
        empty = empty_post_chance and draw(st.integers(0, 4)) == 0
        gold = [() if empty else draw(spans_of_view(n, labels)) for _ in range(num_views)]
        pred = [draw(perturbed_view(gold[v % num_views], n, labels)) for v in range(pred_views)]
        text = " ".join(tokens)
        gold_posts.append(Post(post_id, date, topic, text, tokens, tuple(gold)))
        pred_posts.append(Post(post_id, date, topic, text, tokens, tuple(pred)))
    return SpanCorpus(tuple(gold_posts), num_views), SpanCorpus(tuple(pred_posts), pred_views)


@st.composite
def label_sets(draw, labels: Sequence[str] = FINE_LABELS, max_size: int = 4) -> tuple[str, ...]:
    return tuple(sorted(draw(st.sets(st.sampled_from(tuple(labels)), max_size=max_size))))


@st.composite
def post_corpus_pairs(
    draw, num_views: int = 2, grain: str = "fine", pred_views: int | None = None, max_posts: int = 8
) -> tuple[PostCorpus, PostCorpus]:
    """(gold, prediction) post-level corpora over the same posts; empty label cells are frequent."""
    labels = labels_of(grain)
    pred_views = num_views if pred_views is None else pred_views
    gold_rows, pred_rows = [], []
    for post_id, date, topic, tokens in draw(post_skeletons(max_posts=max_posts, max_tokens=8)):
        text = " ".join(tokens)
        gold = tuple(draw(label_sets(labels)) for _ in range(num_views))
        pred = []
        for v in range(pred_views):
            if draw(st.booleans()):  # start from the gold set and flip a few labels
                flip = draw(st.sets(st.sampled_from(tuple(labels)), max_size=2))
                pred.append(tuple(sorted(set(gold[v % num_views]) ^ flip)))
            else:
                pred.append(draw(label_sets(labels)))
        gold_rows.append(PostRow(post_id, date, topic, text, gold))
        pred_rows.append(PostRow(post_id, date, topic, text, tuple(pred)))
    return PostCorpus(tuple(gold_rows), num_views), PostCorpus(tuple(pred_rows), pred_views)

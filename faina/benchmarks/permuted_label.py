"""A control corpus for the calibration's prior fallback: a copy of a span corpus with one label made unlearnable.

Each post gets, in place of its own spans of the label, the spans of that label of another post (a fixed-seed
permutation of the posts; every view's spans come from the same source post, so the annotators' agreement on the
label is kept), each moved to the same relative place in its new post: token positions scaled by the ratio of the
two posts' lengths, at least one token, one view's spans of the label merged where they come to overlap. Whether
and where a post carries the label then depends on another post's text only, so no model can learn it from the
text, by construction; its share of posts per view stays the file's, its share of tokens nearly so. The other
labels are untouched. ``train-dev.conll`` and ``test.conll`` are each permuted within themselves, so the test's
prior is the train part's share as for a real label. A view that did not annotate a post (``?``) stays so; one
whose source post's view did not annotate gets no span of the label.

``scripts/permuted_label_control.py`` writes such a copy, trains a model on it and scores its probabilities under
each calibration (docs/soft-labels.md#the-prior-fallback). Data files are never committed: the copy goes where its
caller says (e.g. under /tmp).
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Sequence
from pathlib import Path

from common.records import Span
from faina.formats.records import Post, SpanCorpus

FILES = ("train-dev.conll", "test.conll")


def moved_spans(spans: Sequence[Span], source_length: int, target_length: int) -> list[Span]:
    """``spans`` of one view and label, from a post of ``source_length`` tokens to the same relative places in a post
    of ``target_length``; spans that come to overlap are merged."""
    ratio = target_length / max(source_length, 1)
    placed = []
    for span in sorted(spans, key=lambda s: s.first):
        first = min(max(1 + int((span.first - 1) * ratio), 1), target_length)
        last = min(max(first, round(span.last * ratio)), target_length)
        placed.append(Span(first, last, span.label))
    merged: list[Span] = []
    for span in placed:
        if merged and span.first <= merged[-1].last:
            merged[-1] = Span(merged[-1].first, max(merged[-1].last, span.last), span.label)
        else:
            merged.append(span)
    return merged


def permuted_corpus(corpus: SpanCorpus, label: str, seed: int) -> SpanCorpus:
    """``corpus`` with ``label``'s spans of each post replaced by those of another post (module docstring)."""
    order = list(range(len(corpus.posts)))
    random.Random(seed).shuffle(order)
    posts = []
    for post, source in zip(corpus.posts, (corpus.posts[i] for i in order)):
        posts.append(_with_spans_of(post, source, label))
    return corpus.replace_posts(posts)


def _with_spans_of(post: Post, source: Post, label: str) -> Post:
    if post.spans is None:
        return post
    views = []
    for view, spans in enumerate(post.spans):
        if spans is None:
            views.append(None)
            continue
        kept = [span for span in spans if span.label != label]
        given = [span for span in (source.spans[view] or ()) if span.label == label] if source.spans else []
        views.append(kept + moved_spans(given, len(source.tokens), len(post.tokens)))
    return post.with_spans(views)


def write_permuted_corpus(corpus_dir: Path, out: Path, label: str, seed: int = 0) -> Path:
    """A copy of the corpus folder ``corpus_dir`` (``train-dev.conll``, ``test.conll``, ``labels.yaml``) in ``out``
    with ``label`` permuted in both files; ``out``."""
    from faina.formats.any_file import read_any, write_any
    from faina.formats.labels import LabelInventory

    inventory = LabelInventory.load(corpus_dir / "labels.yaml")
    if label not in inventory.fine:
        raise ValueError(f"{label!r} is not a fine label of {corpus_dir / 'labels.yaml'}: {sorted(inventory.fine)}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus_dir / "labels.yaml", out / "labels.yaml")
    for offset, name in enumerate(FILES):
        corpus = read_any(corpus_dir / name, inventory, level="span")
        write_any(permuted_corpus(corpus, label, seed + offset), out / name)
    return out

"""The permuted-label control corpus (``faina.benchmarks.permuted_label``): one label's annotations move to other
posts (every view from the same source post, at the same relative place), its share of posts per view is kept, the
other labels are untouched, and the folder copy is readable by the project's readers."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from common.records import Span
from faina.benchmarks.permuted_label import moved_spans, permuted_corpus, write_permuted_corpus
from faina.formats.conll import read_conll, write_conll
from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
from faina.sample import default_sample_dir

INVENTORY = LabelInventory.load(DEFAULT_LABELS_FILE)


@pytest.fixture(scope="module")
def sample():
    return read_conll(default_sample_dir() / "sample.conll", INVENTORY)


def most_frequent_label(corpus) -> str:
    counts = Counter(span.label for post in corpus.posts for view in post.spans for span in view)
    return counts.most_common(1)[0][0]


def label_views(post, label):
    return [tuple((s.first, s.last) for s in view if s.label == label) for view in post.spans]


def test_one_label_moves_to_other_posts_whole_and_the_others_stay(sample):
    label = most_frequent_label(sample)
    permuted = permuted_corpus(sample, label, seed=0)
    assert [p.tokens for p in permuted.posts] == [p.tokens for p in sample.posts]
    moved = 0
    for before, after in zip(sample.posts, permuted.posts):
        for old, new in zip(before.spans, after.spans):
            assert [s for s in old if s.label != label] == [s for s in new if s.label != label]
        moved += label_views(before, label) != label_views(after, label)
    assert moved > len(sample.posts) // 3
    for v in range(sample.num_views):  # each view's share of posts with the label is the file's
        had = sum(any(s.label == label for s in p.spans[v]) for p in sample.posts)
        assert had == sum(any(s.label == label for s in p.spans[v]) for p in permuted.posts)
    # every post's label annotation, all views together, is one source post's (the views' agreement kept)
    assert Counter(tuple(bool(view) for view in label_views(p, label)) for p in permuted.posts) == Counter(
        tuple(bool(view) for view in label_views(p, label)) for p in sample.posts
    )
    assert permuted_corpus(sample, label, seed=0) == permuted and permuted_corpus(sample, label, seed=1) != permuted


def test_spans_keep_their_relative_place_and_merge_where_they_meet():
    assert moved_spans([Span(5, 6, "X")], 10, 20) == [Span(9, 12, "X")]
    assert moved_spans([Span(9, 10, "X")], 10, 3) == [Span(3, 3, "X")]
    assert moved_spans([Span(1, 2, "X"), Span(3, 4, "X")], 10, 2) == [Span(1, 1, "X")]


def test_the_copy_is_a_corpus_folder_the_readers_accept(sample, tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    write_conll(sample, source / "train-dev.conll")
    write_conll(sample, source / "test.conll")
    shutil.copy(DEFAULT_LABELS_FILE, source / "labels.yaml")
    label = most_frequent_label(sample)
    out = write_permuted_corpus(source, tmp_path / "permuted", label)
    train, test = (read_conll(out / name, INVENTORY) for name in ("train-dev.conll", "test.conll"))
    assert train.posts == permuted_corpus(read_conll(source / "train-dev.conll", INVENTORY), label, 0).posts
    assert train.posts != test.posts  # each file its own permutation
    with pytest.raises(ValueError, match="not a fine label"):
        write_permuted_corpus(source, tmp_path / "bad", "No-such-label")

"""Per-item losses of a probability file (``faina.scoring.soft_scores.item_losses`` / ``item_posts``): each item's
cross-entropy, of the model and of the prior, whose means are the cross-entropies ``soft_scores`` reports, and the
post of every item, the unit paired differences are grouped by."""

from __future__ import annotations

import numpy as np
import pytest

from faina.data.levels import subset
from faina.formats.conll import read_conll
from faina.formats.labels import DEFAULT_LABELS_FILE, LabelInventory
from faina.formats.probability_file import PostProbabilities, ProbabilityFile
from faina.formats.tsv import post_corpus_from_spans
from faina.sample import default_sample_dir
from faina.scoring.soft_scores import item_losses, item_posts, soft_scores


@pytest.fixture(scope="module")
def corpora():
    inventory = LabelInventory.load(DEFAULT_LABELS_FILE)
    spans = read_conll(default_sample_dir() / "sample.conll", inventory)
    return subset(spans, range(40)), subset(spans, range(40, 100)), list(inventory.fine)


def random_probabilities(corpus, labels, level: str, seed: int) -> ProbabilityFile:
    rng = np.random.default_rng(seed)
    views = tuple(f"a{v + 1}" for v in range(corpus.num_views))
    if level == "post":
        posts = tuple(
            PostProbabilities(row.post_id, rng.uniform(size=(len(views), len(labels)))) for row in corpus.rows
        )
    else:
        posts = tuple(
            PostProbabilities(post.post_id, rng.uniform(size=(len(views), len(labels), len(post.tokens))), post.tokens)
            for post in corpus.posts
        )
    return ProbabilityFile(level, views, tuple(labels), posts)


@pytest.mark.parametrize("level", ["post", "span"])
def test_the_mean_of_the_item_losses_is_the_reported_cross_entropy_of_the_model_and_of_the_prior(corpora, level):
    test, train, labels = corpora
    if level == "post":
        test, train = post_corpus_from_spans(test), post_corpus_from_spans(train)
    probabilities = random_probabilities(test, labels, level, seed=1)
    losses = item_losses(test, probabilities, labels, train)
    reported = soft_scores(test, probabilities, labels, None, train)["per_label"]
    for name in ("model", "prior"):
        assert losses[name].shape == (len(item_posts(test)), len(labels))
        for c, label in enumerate(labels):
            expected = reported[label][name]["cross_entropy"]
            assert np.nanmean(losses[name][:, c]) == pytest.approx(expected, abs=1e-6), (name, label)


def test_the_items_of_a_span_corpus_are_grouped_by_their_post_and_a_post_corpus_is_one_item_a_post(corpora):
    test, _, _ = corpora
    groups = item_posts(test)
    lengths = [len(post.tokens) for post in test.posts]
    assert groups.tolist() == [p for p, length in enumerate(lengths) for _ in range(length)]
    assert item_posts(post_corpus_from_spans(test)).tolist() == list(range(len(test.posts)))

"""Per-decoder loss weights computed from a fold's training spans (``model.module.loss_weights=inverse_sqrt``)."""

from __future__ import annotations

import math

import pytest
from omegaconf import OmegaConf

from common.errors import UserError
from faina.data.task_data import TaskData
from faina.formats.labels import LabelInventory
from faina.formats.records import Post, Span, SpanCorpus
from faina.training.loss_weights import decoder_span_counts, fold_loss_weights, inverse_sqrt

LABELS = ("A", "B")


def post(i: int, *views) -> Post:
    tokens = ("w",) * 6
    return Post(f"p{i}", "2020-01", "t", " ".join(tokens), tokens, tuple(views))


# three posts, two views: view 0 marks A three times and B once; view 1 marks B twice and skips post 2
CORPUS = SpanCorpus(
    (
        post(0, (Span(1, 2, "A"), Span(4, 4, "A")), (Span(1, 1, "B"),)),
        post(1, (Span(2, 3, "A"), Span(5, 6, "B")), ()),
        post(2, (), None),
        post(3, (Span(1, 1, "A"),), (Span(2, 2, "B"),)),
    ),
    num_views=2,
)


def test_counts_are_view_major_over_the_labels_and_only_of_the_given_posts():
    assert decoder_span_counts(CORPUS, [0, 1, 2, 3], LABELS, model_views=2) == [4, 1, 0, 2]
    assert decoder_span_counts(CORPUS, [1, 2], LABELS, model_views=2) == [1, 1, 0, 0]  # train posts only


def test_a_one_view_model_of_several_views_pools_them_per_label():
    # data.targets=soft: one decoder per label, trained on every view's spans
    assert decoder_span_counts(CORPUS, [0, 1, 2, 3], LABELS, model_views=1) == [4, 3]


def test_inverse_sqrt_has_mean_one_and_follows_one_over_root_n():
    weights = inverse_sqrt([100, 25, 4, 0])
    assert sum(weights) / len(weights) == pytest.approx(1.0, abs=1e-6)
    # ratios are those of 1/sqrt(n); a decoder without spans counts as one span
    assert weights[1] / weights[0] == pytest.approx(2.0, rel=1e-5)
    assert weights[2] / weights[0] == pytest.approx(5.0, rel=1e-5)
    assert weights[3] / weights[0] == pytest.approx(10.0, rel=1e-5)
    assert inverse_sqrt([7, 7, 7]) == [1.0, 1.0, 1.0]


def task_data() -> TaskData:
    inventory = LabelInventory.from_dict({"fine": {"A": "a", "B": "b"}})
    return TaskData("span", "fine", LABELS, inventory, CORPUS, None)


def module(value):
    return OmegaConf.create({"loss_weights": value})


def test_fold_weights_of_the_scheme_come_from_the_train_posts():
    weights = fold_loss_weights(module("inverse_sqrt"), task_data(), [0, 1, 2, 3])
    raw = [1 / math.sqrt(n) for n in (4, 1, 1, 2)]  # the 0 of view 1's A counts as 1
    assert weights == pytest.approx([w / (sum(raw) / 4) for w in raw], abs=1e-6)


def test_fold_weights_pass_a_list_through_and_none_stays_none():
    assert fold_loss_weights(module(None), task_data(), [0]) is None
    assert fold_loss_weights(module([1, 2, 3, 4]), task_data(), [0]) == [1.0, 2.0, 3.0, 4.0]


def test_a_list_of_the_wrong_length_names_the_key_and_the_decoders():
    with pytest.raises(UserError, match=r"loss_weights has 3 weight\(s\) for 4 decoders \(2 view\(s\) x 2 labels\)"):
        fold_loss_weights(module([1, 2, 3]), task_data(), [0])


def test_an_unknown_scheme_is_refused_with_the_known_ones():
    with pytest.raises(UserError, match="'inverse' is not a weighting scheme .*inverse_sqrt"):
        fold_loss_weights(module("inverse"), task_data(), [0])

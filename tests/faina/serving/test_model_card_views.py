"""The model card says what a model's views are: one per annotator, or one trained on all of them."""

from __future__ import annotations

import pytest

from faina.serving.model_card import _views_line


def test_views_models_predict_each_annotator():
    assert _views_line(2, ["a1", "a2"], "views").startswith("2 annotator views (a1, a2), each predicted separately")


@pytest.mark.parametrize(
    ("targets", "words"), [("soft", "share of annotator views"), ("majority", "majority"), ("union", "union")]
)
def test_aggregated_and_soft_models_say_they_predict_once(targets, words):
    line = _views_line(1, ["a1"], targets)
    assert line.startswith("one prediction") and words in line and f"data.targets={targets}" in line
    assert "separately" not in line

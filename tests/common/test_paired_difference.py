"""The paired difference and its standard error (``common/paired_difference.py``): the usual ``std / sqrt(N)``
for independent items, a group of items counted once, NaN items left out, groups of unequal size by hand."""

from __future__ import annotations

import numpy as np
import pytest

from common.paired_difference import paired_difference


def test_paired_difference_of_independent_items_is_the_mean_and_its_standard_error():
    # differences 0.1, 0.3, -0.1, 0.5: mean 0.2, sample std sqrt(0.2 / 3), so se sqrt(0.2 / 3) / 2 = 0.129099
    first, second = np.array([[0.4], [0.6], [0.2], [0.8]]), np.full((4, 1), 0.3)
    mean, error = paired_difference(first, second)
    assert mean[0] == pytest.approx(0.2) and error[0] == pytest.approx(0.129099, abs=1e-6)
    same, none = paired_difference(first, first)
    assert same[0] == 0 and none[0] == 0


def test_paired_difference_counts_a_group_of_items_once_and_leaves_out_nan_items():
    # two posts of two tokens each, every token of a post the same difference, and a third post's token ungraded:
    # as two items of differences 0.1 and 0.3 (the tokens of a post are one observation, not two)
    first = np.array([[0.4], [0.4], [0.6], [0.6], [np.nan]])
    grouped_mean, grouped_error = paired_difference(first, np.full((5, 1), 0.3), groups=[0, 0, 1, 1, 2])
    mean, error = paired_difference(np.array([[0.4], [0.6]]), np.full((2, 1), 0.3))
    assert grouped_mean[0] == pytest.approx(mean[0]) and grouped_error[0] == pytest.approx(error[0])
    ungrouped = paired_difference(first, np.full((5, 1), 0.3))[1]
    assert ungrouped[0] < grouped_error[0]  # tokens taken as independent would claim more certainty
    assert np.isnan(paired_difference(np.array([[0.4]]), np.array([[0.3]]))[1][0])  # one item: no error to give
    # groups of unequal size, by hand: one token of difference 0.5, three of 0.1; D = (0.5, 0.3), n = (1, 3),
    # mean 0.8 / 4 = 0.2, residuals D - mean · n = (0.3, -0.3), se = sqrt(2 / 1 · 0.18) / 4 = 0.15
    unequal = np.array([[0.8], [0.4], [0.4], [0.4]])
    mean, error = paired_difference(unequal, np.full((4, 1), 0.3), groups=["a", "b", "b", "b"])
    assert mean[0] == pytest.approx(0.2) and error[0] == pytest.approx(0.15)

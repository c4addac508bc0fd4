"""The LeWiDi soft-label and perspectivist metrics against values computed by hand (in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.soft_labels import (
    cross_entropy,
    entropy,
    error_rates,
    expected_calibration_error,
    item_cross_entropy,
    manhattan_distance,
    prior,
    soft_label_report,
    soft_labels,
)

# two items, one label: gold soft labels 1 and 0.5, predictions 0.8 and 0.5
GOLD = np.array([[1.0], [0.5]])
PRED = np.array([[0.8], [0.5]])


def test_soft_label_is_the_share_of_views():
    votes = np.array([[[1, 0], [1, 1], [0, 0]]])  # one item, three views, two labels
    # label 0: 2 of 3 views; label 1: 1 of 3
    assert soft_labels(votes)[0].tolist() == pytest.approx([2 / 3, 1 / 3])
    # view 3 did not annotate: label 0 in 2 of 2, label 1 in 1 of 2; an item nobody annotated is NaN
    annotated = np.array([[True, True, False]])
    assert soft_labels(votes, annotated)[0].tolist() == pytest.approx([1.0, 0.5])
    assert np.isnan(soft_labels(votes, np.zeros((1, 3), bool))).all()


def test_cross_entropy_by_hand():
    # item 1: -(1·ln 0.8 + 0·ln 0.2) = 0.223144; item 2: -(0.5 ln 0.5 + 0.5 ln 0.5) = ln 2 = 0.693147
    # mean: (0.223144 + 0.693147) / 2 = 0.458145
    assert cross_entropy(PRED, GOLD)[0] == pytest.approx(0.458145, abs=1e-6)
    # p = 0 for a label every annotator gave: clipped at 1e-12, -ln(1e-12) = 27.631021
    assert cross_entropy([[0.0]], [[1.0]])[0] == pytest.approx(27.631021, abs=1e-6)
    assert cross_entropy([[1.0]], [[1.0]])[0] == pytest.approx(0.0, abs=1e-9)


def test_item_cross_entropy_holds_the_terms_cross_entropy_averages_and_nan_where_nobody_annotated():
    terms = item_cross_entropy([[0.8], [0.5], [0.3]], [[1.0], [0.5], [np.nan]])
    assert terms[:2, 0].tolist() == pytest.approx([0.223144, 0.693147], abs=1e-6) and np.isnan(terms[2, 0])
    assert cross_entropy([[0.8], [0.5], [0.3]], [[1.0], [0.5], [np.nan]])[0] == pytest.approx(0.458145, abs=1e-6)


def test_entropy_is_the_cross_entropy_floor():
    # t = 1: 0 nats; t = 0.5: ln 2 = 0.693147; mean 0.346574
    assert entropy(GOLD)[0] == pytest.approx(0.346574, abs=1e-6)
    assert cross_entropy(GOLD, GOLD)[0] == pytest.approx(entropy(GOLD)[0], abs=1e-9)
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 4, size=(50, 3)) / 3
    for _ in range(20):  # no prediction does better than the gold soft labels themselves
        assert (cross_entropy(rng.uniform(size=(50, 3)), gold) >= entropy(gold) - 1e-12).all()


def test_manhattan_distance_by_hand():
    # item 1: |0.8 - 1| + |0.2 - 0| = 0.4; item 2: 0; mean 0.2
    assert manhattan_distance(PRED, GOLD)[0] == pytest.approx(0.2)
    # two labels: label 0 as above; label 1: |0.1 - 0| · 2 = 0.2 and |0.7 - 1/3| · 2 = 0.733333 → 0.466667
    two = manhattan_distance([[0.8, 0.1], [0.5, 0.7]], [[1.0, 0.0], [0.5, 1 / 3]])
    assert two.tolist() == pytest.approx([0.2, 0.466667], abs=1e-6)


def test_expected_calibration_error_by_hand():
    # p = 0.8 in bin [0.8, 0.9) with mean t 1: gap 0.2; p = 0.5 in [0.5, 0.6) with t 0.5: gap 0; ECE = ½·0.2 = 0.1
    assert expected_calibration_error(PRED, GOLD)[0] == pytest.approx(0.1)
    # bin [0.1, 0.2): p 0.12, 0.18 (mean 0.15), t 0, 0.5 (mean 0.25): gap 0.1, weight 2/4 → 0.05
    # bin [0.9, 1.0]: p 0.91, 1.0 (mean 0.955; 1.0 falls in the last bin), t 1, 1: gap 0.045, weight 2/4 → 0.0225
    p = [[0.12], [0.18], [0.91], [1.0]]
    t = [[0.0], [0.5], [1.0], [1.0]]
    assert expected_calibration_error(p, t)[0] == pytest.approx(0.0725)


def test_prior_and_report_with_reference_points():
    train = np.array([[1.0, 0.0], [0.5, 0.0], [0.0, 0.5], [0.5, 0.5]])
    assert prior(train).tolist() == pytest.approx([0.5, 0.25])
    gold = np.array([[1.0, 0.0], [0.5, 0.5]])
    predicted = np.array([[0.8, 0.1], [0.5, 0.4]])
    report = soft_label_report(predicted, gold, prior(train), ["A", "B"])
    # prior on label A: p = 0.5 for both items; Manhattan: 2·0.5 = 1 and 0 → 0.5
    assert report["per_label"]["A"]["prior"]["manhattan"] == pytest.approx(0.5)
    # oracle: cross-entropy = entropy (A: (0 + ln 2)/2 = 0.346574; B: (0 + ln 2)/2), distances 0
    assert report["oracle"]["cross_entropy"] == pytest.approx(0.346574, abs=1e-6)
    assert report["oracle"]["manhattan"] == 0.0 and report["oracle"]["ece"] == 0.0
    # model, label B: CE -(ln 0.9) = 0.105361 and -(0.5 ln 0.4 + 0.5 ln 0.6) = 0.713558 → 0.409459
    assert report["per_label"]["B"]["model"]["cross_entropy"] == pytest.approx(0.409459, abs=1e-6)
    # average over labels: A 0.458145 (test above), B 0.409459 → 0.433802
    assert report["model"]["cross_entropy"] == pytest.approx(0.433802, abs=1e-6)


def test_items_without_gold_are_left_out():
    gold = np.array([[1.0], [np.nan]])
    assert cross_entropy([[0.8], [0.0]], gold)[0] == pytest.approx(-math.log(0.8))
    assert manhattan_distance([[0.8], [0.0]], gold)[0] == pytest.approx(0.4)


def test_perspectivist_error_rate_by_hand():
    # 2 items × 2 views × 2 labels
    gold = np.array([[[1, 0], [1, 1]], [[0, 0], [0, 1]]])
    predicted = np.array([[[1, 1], [1, 1]], [[0, 0], [0, 0]]])
    # view 1: item 1 differs on label 2 (1 of 2), item 2 on none → 1/4; view 2: item 2 differs on label 2 → 1/4
    assert error_rates(predicted, gold).tolist() == pytest.approx([0.25, 0.25])
    # view 2 did not annotate item 2: its rate is over item 1 alone, where it is right
    annotated = np.array([[True, True], [True, False]])
    assert error_rates(predicted, gold, annotated).tolist() == pytest.approx([0.25, 0.0])
    with pytest.raises(ValueError):
        error_rates(predicted[:, :1], gold)


def test_importing_the_metrics_needs_no_torch():
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys, metrics.soft_labels; sys.exit('torch' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], check=False).returncode
        == 0
    )

"""The permuted-label control's table over seeds: the permuted label's gaps to its prior counted against the
tolerance, and each real label's change against today's calibration judged by the benchmarks' seed-spread rule."""

from __future__ import annotations

import pytest

from faina.benchmarks.permuted_label_report import TOLERANCE, across_seeds, seeds_markdown
from faina.benchmarks.seed_spread import ONE_SEED


def _run(permuted: dict[str, float], real: dict[str, dict[str, float]]) -> dict:
    """A run's control table as ``control_table`` writes it, reduced to what the summary reads: per label the
    cross-entropy of each calibration and of the prior, and the permuted label's gap to its prior."""
    per_label = {"Insult": {"prior": 0.69, **permuted}, **{label: dict(row) for label, row in real.items()}}
    return {"per_label": per_label, "gap_to_prior": {name: value - 0.69 for name, value in permuted.items()}}


def test_the_permuted_label_counts_the_seeds_within_the_tolerance_of_its_prior():
    runs = {
        1: _run({"temperature": 0.6941, "fallback": 0.6900 + TOLERANCE / 2}, {}),
        2: _run({"temperature": 0.6991, "fallback": 0.6982}, {}),
        3: _run({"temperature": 0.6900, "fallback": 0.6900 - TOLERANCE / 2}, {}),
    }
    summary = across_seeds(runs, "Insult", "temperature")["calibrations"]["fallback"]["permuted"]
    assert summary["gaps"] == pytest.approx([TOLERANCE / 2, 0.0082, -TOLERANCE / 2])
    assert summary["within"] == 2  # seed 2's gap is 0.0082, above the tolerance; a gap below the prior counts too
    assert summary["mean_std"][0] == pytest.approx(0.0082 / 3)


def test_a_real_label_is_worse_only_beyond_the_larger_seed_spread_of_the_two_rows():
    steady = {"prior": 0.2, "temperature": 0.20, "fallback": 0.21}  # worse by 0.01 on every seed
    noisy = {1: 0.19, 2: 0.23, 3: 0.21}  # the reference's row spreads by 0.02
    runs = {
        seed: _run(
            {"temperature": 0.69, "fallback": 0.69},
            {
                "Threat": {**steady, "temperature": 0.20 + seed / 1000, "fallback": 0.21 + seed / 1000},
                "Other": {"prior": 0.2, "temperature": noisy[seed], "fallback": noisy[seed] + 0.002},
                "Profane": {"prior": 0.2, "temperature": 0.20 + seed / 1000, "fallback": 0.19 + seed / 1000},
            },
        )
        for seed in (1, 2, 3)
    }
    real = across_seeds(runs, "Insult", "temperature")["calibrations"]["fallback"]["real"]
    assert real["Threat"]["verdict"] == "loss" and real["Threat"]["worse"] == 3
    assert real["Threat"]["changes"] == pytest.approx([0.01] * 3)
    # worse on every seed, but by less than the spread of the seeds themselves: no verdict of a loss
    assert real["Other"]["worse"] == 3 and real["Other"]["verdict"] == "within spread"
    assert real["Profane"]["verdict"] == "gain" and real["Profane"]["worse"] == 0
    # today's calibration against itself changes nothing
    today = across_seeds(runs, "Insult", "temperature")["calibrations"]["temperature"]["real"]
    assert {row["verdict"] for row in today.values()} == {"within spread"}


def test_one_seed_gets_its_figures_and_no_verdict():
    runs = {
        4: _run(
            {"temperature": 0.70, "fallback": 0.69}, {"Threat": {"prior": 0.1, "temperature": 0.1, "fallback": 0.2}}
        )
    }
    summary = across_seeds(runs, "Insult", "temperature")
    assert summary["seeds"] == [4]
    assert summary["calibrations"]["fallback"]["real"]["Threat"]["verdict"] == ONE_SEED
    text = seeds_markdown(summary, "Insult", "temperature")
    assert "Over seeds 4" in text and "(1/1 within)" in text and f"(1/1 worse, {ONE_SEED})" in text

"""The model card says how long its model trained: the epochs, at most that many with early stopping (and how many
the model trained), and a step budget when one was set."""

from __future__ import annotations

from faina.serving.model_card import _length


def test_a_fixed_length_is_its_epochs():
    assert _length({"max_epochs": 20, "max_steps": -1}, {"early_stopping": {"patience": None}}, {}) == "20"


def test_an_early_stopped_model_says_its_cap_its_patience_and_what_it_trained():
    line = _length({"max_epochs": 20}, {"early_stopping": {"patience": 3}}, {"early_stopping": {"epochs_trained": 12}})
    assert line == "at most 20, early stopping after 3 without a better dev F1 (this model: 12)"


def test_a_step_budget_is_named():
    assert _length({"max_epochs": None, "max_steps": 600}, {}, {}) == "600 optimiser steps"
    assert _length({"max_epochs": 20, "max_steps": 600}, {}, {}) == "20 (and at most 600 optimiser steps)"

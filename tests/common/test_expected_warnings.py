"""Warnings a run expects are one plain line per run; every other warning still goes through Python's machinery."""

from __future__ import annotations

import logging
import warnings

from omegaconf import open_dict

from common.expected_warnings import Expected, said_once
from metrics.faina_scores import ZeroDenominatorWarning, f1_score
from models.collapse_warning import CollapseWarning


def _noisy_runner(cfg) -> dict[str, float]:
    """A runner that warns like the first epochs of a short run: zero denominators in several places, collapses."""
    for view in ("a1", "a2"):
        f1_score(0.0, 0.0, f"span strict score, view {view}")
    warnings.warn("val: the span decoders may have collapsed (epoch 0)", CollapseWarning, stacklevel=1)
    warnings.warn("val: the span decoders may have collapsed (epoch 1)", CollapseWarning, stacklevel=1)
    warnings.warn("an unexpected thing", UserWarning, stacklevel=1)
    return {"ran": 1.0}


def test_each_rule_is_said_once_as_a_plain_line_and_other_warnings_pass(caplog, capsys):
    rules = [Expected(ZeroDenominatorWarning, why="normal early"), Expected(CollapseWarning, level=logging.WARNING)]
    log = logging.getLogger("train")
    with warnings.catch_warnings(record=True) as passed, caplog.at_level(logging.INFO, logger="train"):
        warnings.simplefilter("always")
        with said_once(rules, log) as counts:
            for _ in range(3):
                f1_score(0.0, 0.0, "span soft score, view a1")
            warnings.warn("val: collapsed", CollapseWarning, stacklevel=1)
            warnings.warn("test: collapsed", CollapseWarning, stacklevel=1)
            warnings.warn("something else", RuntimeWarning, stacklevel=1)
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert lines == [
        (
            logging.INFO,
            "span soft score, view a1: precision + recall is 0, so it is reported as 0 (the official scorer would "
            "crash here); normal early",
        ),
        (logging.WARNING, "val: collapsed"),
    ]
    assert counts == {rules[0]: 3, rules[1]: 2}
    assert [str(w.message) for w in passed] == ["something else"]  # not swallowed
    assert "faina_scores.py" not in capsys.readouterr().err  # no source line printed


def test_after_the_block_warnings_behave_as_before():
    with said_once([Expected(ZeroDenominatorWarning)], logging.getLogger("train")):
        pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f1_score(0.0, 0.0, "after")
    assert [w.category for w in caught] == [ZeroDenominatorWarning]


def test_train_run_says_an_early_collapse_and_zero_denominators_once(caplog, capsys):
    from helpers.configs import compose_train
    from train import run

    cfg = compose_train("experiment=demo")
    with open_dict(cfg):
        cfg.task.runners.finetune = {"_target_": f"{__name__}._noisy_runner", "_partial_": True}
    with warnings.catch_warnings(record=True) as passed, caplog.at_level(logging.INFO):
        warnings.simplefilter("default")
        assert run(cfg) == {"ran": 1.0}
    said = [r.getMessage() for r in caplog.records if r.name == "train"]
    assert len(said) == 2, said
    assert said[0].startswith("span strict score, view a1: precision + recall is 0") and "normal" in said[0]
    assert said[1].startswith("val: the span decoders may have collapsed (epoch 0)")
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "train")
    assert [str(w.message) for w in passed] == ["an unexpected thing"]
    assert "Warning" not in capsys.readouterr().err


def test_a_collapse_of_the_kept_model_stays_a_warning_said_once(caplog):
    from train import expected_warnings

    with caplog.at_level(logging.INFO, logger="train"), said_once(expected_warnings(), logging.getLogger("train")):
        for _ in range(2):
            warnings.warn("test: the span decoders may have collapsed", CollapseWarning, stacklevel=1)
    [record] = caplog.records
    assert record.levelno == logging.WARNING and record.getMessage().startswith("test: the span decoders")

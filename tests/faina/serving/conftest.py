"""``trained``: the session's shared tiny span-f run (2 folds) and the export of its fold0, as the loader tests
here read them (``helpers.trained``); a test copies what it damages."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def trained(trained_runs) -> dict:
    return {
        "root": trained_runs.root,
        "encoder": trained_runs.encoder,
        "sample": trained_runs.sample,
        "run": trained_runs.span,
        "exported": trained_runs.exports["span-fold0"],
    }

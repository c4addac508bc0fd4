"""Fixtures for Missci tests: the data folder (the packaged synthetic sample) and small records.

``data_dir`` is the synthetic sample, so these tests run on any clone; tests of the paper's own figures take
``real_missci`` (tests/conftest.py) instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def data_dir(missci_sample) -> Path:
    return missci_sample


def make_argument(arg_id: str = "arg-1", fallacies=None) -> dict:
    """A minimal valid argument line in the official layout."""
    fallacies = (
        fallacies
        if fallacies is not None
        else [
            {
                "id": f"{arg_id}:1",
                "fallacy_context": "Only one patient.",
                "consolidation_comment": "",
                "interchangeable_fallacies": [
                    {"id": f"{arg_id}:1:1", "premise": "One patient is enough.", "class": "Hasty Generalization"}
                ],
            }
        ]
    )
    return {
        "id": arg_id,
        "meta": {},
        "study": {"url": "u"},
        "argument": {
            "claim": "Turmeric cures cancer.",
            "hidden_premises": [],
            "accurate_premise_p0": {"premise": "Curcumin stabilised myeloma."},
            "fallacies": fallacies,
        },
    }


@pytest.fixture
def write_jsonl(tmp_path):
    def write(name: str, objects, raw_lines=()):
        path = tmp_path / name
        lines = [json.dumps(o) for o in objects] + list(raw_lines)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write

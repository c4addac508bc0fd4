"""Fixtures of the zero-shot tests: Faina's inventory and definitions, and parsers for each task level."""

from __future__ import annotations

import pytest

from faina.formats.labels import LabelInventory
from faina.zero_shot.definitions import load_definitions
from faina.zero_shot.parser import LabelMatcher, build_parser


@pytest.fixture(scope="session")
def inventory() -> LabelInventory:
    return LabelInventory.load()


@pytest.fixture(scope="session")
def definitions(inventory):
    return load_definitions(inventory)


@pytest.fixture
def make_parser(inventory, definitions):
    def _make(level: str = "span", grain: str = "fine", out_of_range: str = "clip"):
        return build_parser(level, LabelMatcher(inventory.labels_of(grain), definitions), out_of_range)

    return _make

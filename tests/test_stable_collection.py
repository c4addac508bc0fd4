"""Two collections of every tier name the same tests in the same order.

pytest-xdist (CI runs ``-n auto``) collects in every worker and refuses the run when the workers' lists differ,
so a parameter built from the clock (a gzip header's time stamp), an unseeded random draw or a set's hash order
breaks CI only when the workers happen to disagree. Here two child collections run at different times (more
than a second apart) and with different hash seeds; a difference names the first test id that moved.
"""

from __future__ import annotations

import time

import pytest

from helpers.collection import collect_only

pytestmark = pytest.mark.slow


def collected_ids(hash_seed: str) -> list[str]:
    output = collect_only("--tiers", "all", PYTHONHASHSEED=hash_seed)
    return [line for line in output.splitlines() if "::" in line]


def test_two_collections_name_the_same_tests_in_the_same_order():
    first = collected_ids("1")
    time.sleep(1.1)  # a time stamp in seconds changes between the two
    second = collected_ids("2")
    assert first, "the collection listed no test ids"
    moved = next((pair for pair in zip(first, second) if pair[0] != pair[1]), None)
    assert moved is None, f"a test id differs between two collections (xdist refuses such a run): {moved}"
    assert len(first) == len(second), f"{len(first)} tests in one collection, {len(second)} in the other"

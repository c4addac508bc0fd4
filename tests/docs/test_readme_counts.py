"""The README's test counts are the collection's: the fast tier and every tier, as ``pytest --collect-only -q``
counts them.

A session that collected every test (``pytest``, ``pytest --tiers all``: ``tiers.tier_counts``) already knows
both; any other session runs one collection in a child process: with the default tier, pytest reports ``KEPT/ALL
tests collected``, the fast tier's count and the count of every tier (what ``--tiers all`` collects). A failure
names the number to write.
"""

from __future__ import annotations

import re

from helpers.collection import collect_only
from tests_paths import REPO
from tiers import tier_counts

README = REPO / "README.md"
COUNTS = re.compile(r"The fast tier holds ([\d,]+) tests and every tier ([\d,]+)")
COLLECTED = re.compile(r"^(\d+)/(\d+) tests collected", re.MULTILINE)


def readme_counts(text: str) -> tuple[int, int]:
    """(fast tier, every tier) as the README's sentence names them."""
    found = COUNTS.findall(text)
    assert len(found) == 1, "README.md names the tiers' counts once: 'The fast tier holds N tests and every tier M'"
    fast, every = found[0]
    return int(fast.replace(",", "")), int(every.replace(",", ""))


def collected_counts() -> tuple[int, int]:
    """(fast tier, every tier) as one ``pytest --collect-only -q`` of the fast tier reports them."""
    output = collect_only("--tiers", "fast")
    match = COLLECTED.search(output)
    assert match, f"no 'KEPT/ALL tests collected' line in the collection's output: {output[-500:]}"
    return int(match.group(1)), int(match.group(2))


def test_the_readme_counts_are_the_collected_counts(request):
    fast, every = readme_counts(README.read_text(encoding="utf-8"))
    collected_fast, collected_every = tier_counts(request.config) or collected_counts()
    assert fast == collected_fast, (
        f"README.md says the fast tier holds {fast:,} tests; `pytest --collect-only -q` collects {collected_fast:,}: "
        f"write {collected_fast:,} in README.md"
    )
    assert every == collected_every, (
        f"README.md says every tier holds {every:,} tests; `pytest --collect-only -q --tiers all` collects "
        f"{collected_every:,}: write {collected_every:,} in README.md"
    )


def test_the_counts_sentence_is_read_with_thousands_separators():
    assert readme_counts("x The fast tier holds 1,169 tests and every tier 1,347 (...)") == (1169, 1347)
    assert readme_counts("The fast tier holds 98 tests and every tier 120") == (98, 120)

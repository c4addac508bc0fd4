"""``UniqueKeys``: the repeated-key check the Faina and Missci readers share."""

from __future__ import annotations

import pytest

from common.errors import UserError
from common.unique_keys import UniqueKeys


def test_a_repeated_key_names_its_line_and_the_first_one():
    keys = UniqueKeys("data.jsonl", "duplicate id {key!r} (first at line {first})", "give every item its own id")
    keys.add("a", 1)
    keys.add("b", 2)
    with pytest.raises(UserError, match=r"duplicate id 'a' \(first at line 1\)") as info:
        keys.add("a", 7)
    assert info.value.line == 7 and info.value.fix == "give every item its own id"
    assert str(info.value.path) == "data.jsonl"


def test_distinct_keys_pass():
    keys = UniqueKeys("data.jsonl", "duplicate id {key!r}", "fix")
    for line, key in enumerate(("a", "b", ("c", 1)), 1):
        keys.add(key, line)
    assert keys.first_line == {"a": 1, "b": 2, ("c", 1): 3}

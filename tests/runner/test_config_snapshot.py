"""Every selectable configuration resolves as the committed snapshot says (``config_snapshot.json``).

The snapshot was taken before ``conf/`` was rebuilt from shared bases (``conf/task/base/faina.yaml``,
``conf/experiment/faina/base/paper.yaml``) and before the modules moved into rooms; module paths it names are
read through ``common.renames``, as old results folders are. A change to ``conf/`` that is meant to change a
resolved value regenerates the file: ``python tests/runner/config_snapshot.py tests/runner/config_snapshot.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.renames import with_current_targets
from runner.config_snapshot import selections, snapshot

SNAPSHOT = Path(__file__).with_name("config_snapshot.json")


def differences(before, after, prefix: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            found += differences(before.get(key, "<absent>"), after.get(key, "<absent>"), f"{prefix}.{key}")
        return found
    return [] if before == after else [f"{prefix}: {before!r} -> {after!r}"]


@pytest.fixture(scope="module")
def today():
    return snapshot()


def test_snapshot_covers_every_selection():
    assert set(json.loads(SNAPSHOT.read_text(encoding="utf-8"))) == set(selections())


@pytest.mark.parametrize("selection", sorted(selections()))
def test_config_resolves_as_before(selection, today):
    before = with_current_targets(json.loads(SNAPSHOT.read_text(encoding="utf-8"))[selection])
    assert differences(before, today[selection]) == []


def test_a_changed_value_is_reported():
    assert differences({"a": {"b": 1}}, {"a": {"b": 2, "c": 3}}) == [".a.b: 1 -> 2", ".a.c: '<absent>' -> 3"]

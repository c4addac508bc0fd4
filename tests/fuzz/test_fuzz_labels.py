"""Fuzzing the label-inventory reader (``faina.formats.labels.LabelInventory.load``, the ``labels.yaml`` a dataset
brings): valid inventories read to exactly their labels, ids and taxonomy; junk values, deleted keys, keys
given twice, cycles, label names that cannot be file cells and broken bytes end in one ``UserError``."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st

from faina.formats.labels import LabelInventory
from fuzz.missci_files import json_paths, replaced
from fuzz.support import fuzz_settings, json_junk, outcome, scratch_file, spoiled_bytes, tried

READER = "faina.formats.labels.LabelInventory.load"
label_names = st.text(st.sampled_from("abcXYZ-_éИ0"), min_size=1, max_size=8)


def read(data: bytes):
    tried(READER)
    return outcome(lambda: LabelInventory.load(scratch_file("labels.yaml", data)))


@st.composite
def inventories(draw) -> dict:
    names = draw(st.lists(label_names, min_size=1, max_size=8, unique=True))
    split = draw(st.integers(0, len(names) - 1))
    coarse, fine = names[:split], names[split:]
    order = draw(st.permutations(fine))
    parents = {}
    for i, child in enumerate(order):  # parents come from the coarse roots or earlier labels: no cycle
        pool = coarse + list(order[:i])
        if pool and draw(st.booleans()):
            parents[child] = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))
    spec = {
        "name": draw(label_names),
        "fine": {label: draw(label_names) for label in fine} if draw(st.booleans()) else list(fine),
    }
    if coarse or draw(st.booleans()):
        spec["coarse"] = coarse
    if parents or draw(st.booleans()):
        spec["parents"] = parents
    return spec


def expected(spec: dict) -> tuple:
    fine = spec["fine"] if isinstance(spec["fine"], dict) else {label: label for label in spec["fine"]}
    parents = {label: () for label in fine}
    parents.update({k: tuple(v) for k, v in (spec.get("parents") or {}).items()})
    return (
        spec.get("name") or "labels",
        tuple(sorted(fine)),
        {k: str(v) for k, v in fine.items()},
        parents,
        tuple(sorted(spec.get("coarse") or ())),
    )


def fields(inventory: LabelInventory) -> tuple:
    return inventory.name, inventory.fine, inventory.short_ids, inventory.parents, inventory.coarse


def dump(spec) -> bytes:
    return yaml.safe_dump(spec, allow_unicode=True, sort_keys=False).encode("utf-8")


@fuzz_settings(390)
@given(inventories())
def test_valid_inventories_read_to_their_labels(spec):
    inventory, err = read(dump(spec))
    assert err is None, err
    assert fields(inventory) == expected(spec)


@fuzz_settings(160)
@given(inventories(), st.data())
def test_spoiled_bytes_end_in_one_user_error(spec, data):
    for _ in range(4):
        kind, spoiled = data.draw(spoiled_bytes(dump(spec)))
        inventory, err = read(spoiled)
        if kind in {"utf-16", "invalid-utf8", "empty", "blank"}:
            assert err is not None, kind
        elif kind in ("bom", "crlf"):  # YAML reads both as the harmless things they are
            assert err is None and fields(inventory) == expected(spec)


@fuzz_settings(260)
@given(inventories(), st.data())
def test_wrong_values_end_in_one_user_error(spec, data):
    """A value replaced by junk or a key deleted: an error, or an inventory of exactly what the file says."""
    for _ in range(4):
        path = data.draw(st.sampled_from(json_paths(spec)))
        delete = data.draw(st.booleans())
        spoiled = replaced(spec, path, None if delete else data.draw(json_junk()), delete)
        inventory, err = read(dump(spoiled))
        if inventory is not None:
            assert fields(inventory) == expected(spoiled)


YAML_JUNK = (
    "!!python/object/apply:os.system ['true']",
    "[" * 5000,
    "{a: [" * 3000,
    "fine: &a [*a]",
    "- a\n- b",
    "fine: {a: x}\nfine: {b: y}",
    "fine:\n  a: x\n  a: y",
    "fine: [a, a]",
    'fine: ["a\\tb"]',
    "fine: [' ']",
    "fine: ['a|b']",
    "fine: [a]\nparents: {a: [a]}",
    "fine: [a, b]\nparents: {a: [b], b: [a]}",
    "fine: [a]\ncoarse: [a]",
    "fine: {}",
    "fine: []",
    "fine: [~]",
    "fine: [.nan]",
    "fine: {a: .inf}",
    "fine: [a]\nparents: {a: b}",
    "\t- x",
    "fine: [a]\ncoarse: [[b]]",
    "fine: [a]\nparents: {a: [[b]]}",
    "fine: {[a]: x}",
)


@fuzz_settings(40)
@given(st.sampled_from(YAML_JUNK))
def test_junk_yaml_ends_in_one_user_error(text):
    inventory, err = read(text.encode("utf-8"))
    assert err is not None, text

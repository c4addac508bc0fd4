"""Fuzzing ``heads.json`` of a multi-task fold (``faina.serving.heads``): a valid file gives the heads' folders inside
the fold folder, and anything else (broken bytes, any JSON shape, folder names that leave the fold folder) is one
``UserError``: never a traceback, never a path outside."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fuzz.support import SCRATCH, fuzz_settings, json_junk, outcome, spoiled_bytes, tried

READER = "heads.json (head_folders)"
FOLDERS = ("span_f", "post_f")
VALID = {"target": "span_f", "heads": {name: {"folder": name, "head": name} for name in FOLDERS}}


def fold_with(data: bytes):
    from faina.serving.heads import HEADS_FILE

    fold = SCRATCH / "heads-fold"
    for name in FOLDERS:
        (fold / name).mkdir(parents=True, exist_ok=True)
    (fold / HEADS_FILE).write_bytes(data)
    return fold


def check(data: bytes):
    from faina.serving.heads import head_folders

    tried(READER)
    fold = fold_with(data)
    result, error = outcome(lambda: head_folders(fold))
    if error is None:
        assert all(folder.parent == fold and folder.is_dir() for _, folder in result)
    return result, error


@fuzz_settings(150)
@given(spoiled_bytes(json.dumps(VALID).encode()))
def test_spoiled_bytes_are_read_or_refused(spoiled):
    kind, data = spoiled
    result, error = check(data)
    if kind == "same":  # a BOM is refused, as every JSON file this project reads (common.untrusted)
        assert error is None and [name for name, _ in result] == list(FOLDERS)


folder_names = st.sampled_from(["..", ".", "", "/etc", "../x", "a/b", "span_f/..", "C:\\x", "span_f"]) | st.text(
    max_size=8
)


@fuzz_settings(300)
@given(st.dictionaries(st.text(max_size=6), st.fixed_dictionaries({"folder": folder_names}), max_size=4) | json_junk())
def test_any_json_is_read_or_refused_and_never_leaves_the_fold(heads):
    document = {"heads": heads} if isinstance(heads, dict) else heads
    check(json.dumps(document).encode())

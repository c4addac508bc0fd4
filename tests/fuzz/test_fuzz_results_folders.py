"""Fuzzing the readers of results folders: ``missci.report.load_rows`` (``results.json``, ``metrics-<split>.json``,
``baseline-<split>.json``, ``row.json``) and ``common.experiments.read_finished_fold`` (a fold's
``metrics.json`` on a rerun). Valid folders read to exactly their numbers; junk at any JSON path, deleted
keys and broken bytes end in one ``UserError`` (the report) or in "run the fold again" (a rerun), never in a
traceback."""

from __future__ import annotations

import json
import math
import shutil

from hypothesis import given
from hypothesis import strategies as st

from common.experiments import read_finished_fold
from fuzz.missci_files import json_paths, replaced
from fuzz.support import SCRATCH, fuzz_settings, json_junk, nested_junk, outcome, scratch_file, spoiled_bytes, tried
from missci.report import COLUMNS, load_rows

REPORT = "missci.report.load_rows"
FOLD = "common.experiments.read_finished_fold"
METRICS = st.dictionaries(
    st.sampled_from([key for key, _ in COLUMNS]), st.floats(0, 1, allow_nan=False), min_size=1, max_size=6
)
counts = st.fixed_dictionaries({"fallacies": st.integers(0, 500), "arguments": st.integers(0, 200)})


@st.composite
def results_folders(draw) -> dict[str, dict]:
    """File name -> JSON object of a results folder (a LoRA run, or zero-shot metrics and/or a baseline)."""
    files = {}
    if draw(st.booleans()):
        files["results.json"] = {
            "pooled": {"test": draw(METRICS), "all": draw(METRICS)},
            "evaluated": {"test": draw(counts)},
            "unavailable": {"meteor": "no model"},
            "models": {"bertscore": "x"},
        }
    else:
        files["metrics-test.json"] = {"metrics": draw(METRICS), "counts": draw(counts), "unavailable": {}}
        if draw(st.booleans()):
            files["baseline-test.json"] = {
                "kind": "random",
                "mean": draw(METRICS),
                "seeds": {"1": {}, "2": {}},
                "counts": draw(counts),
            }
    if draw(st.booleans()):
        files["row.json"] = {
            "command": "python -m missci.zero_shot.reconstruction",
            "seconds": draw(st.integers(0, 10**6)),
        }
    return files


def write_folder(files: dict[str, object], raw: dict[str, bytes] | None = None):
    folder = SCRATCH / "results" / "run"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, obj in files.items():
        (folder / name).write_text(json.dumps(obj), encoding="utf-8")
    for name, data in (raw or {}).items():
        (folder / name).write_bytes(data)
    return folder


def read_report(folder):
    tried(REPORT)
    return outcome(lambda: load_rows(folder))


def expected_metrics(files) -> list[dict]:
    def finite(scores):
        return {
            k: float(v)
            for k, v in scores.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        }

    if "results.json" in files:
        pooled = files["results.json"]["pooled"]
        rows = [finite(pooled[view]) for view in ("test", "all") if pooled.get(view)]
    else:
        rows = []
    if "metrics-test.json" in files:
        rows.append(finite(files["metrics-test.json"].get("metrics") or {}))
    if "baseline-test.json" in files:
        rows.append(finite(files["baseline-test.json"].get("mean") or {}))
    return rows


@fuzz_settings(260)
@given(results_folders())
def test_valid_folders_read_to_their_numbers(files):
    rows, err = read_report(write_folder(files))
    assert err is None, err
    assert [row.metrics for row in rows] == expected_metrics(files)


@fuzz_settings(260)
@given(results_folders(), st.data())
def test_junk_in_any_results_file_ends_in_one_user_error(files, data):
    for _ in range(3):
        name = data.draw(st.sampled_from(sorted(files)))
        path = data.draw(st.sampled_from(json_paths(files[name]) or [()]))
        delete = bool(path) and data.draw(st.booleans())
        spoiled = dict(files, **{name: replaced(files[name], path, None if delete else data.draw(json_junk()), delete)})
        rows, err = read_report(write_folder(spoiled))
        if rows is not None and name != "row.json":
            assert [row.metrics for row in rows] == expected_metrics(spoiled)


@fuzz_settings(130)
@given(results_folders(), st.data())
def test_broken_bytes_in_any_results_file_end_in_one_user_error(files, data):
    for _ in range(3):
        name = data.draw(st.sampled_from(sorted(files)))
        kind, spoiled = data.draw(spoiled_bytes(json.dumps(files[name], ensure_ascii=False).encode("utf-8")))
        rows, err = read_report(write_folder({k: v for k, v in files.items() if k != name}, {name: spoiled}))
        if kind in ("bom", "crlf"):
            assert err is None, err


@fuzz_settings(200)
@given(st.integers(0, 9), METRICS, st.data())
def test_a_damaged_fold_metrics_file_means_running_the_fold_again(index, metrics, data):
    result = {"fold": index, **metrics}
    for _ in range(4):
        choice = data.draw(st.sampled_from(("valid", "junk", "bytes", "nested")))
        if choice == "valid":
            raw = json.dumps(result).encode("utf-8")
        elif choice == "junk":
            path = data.draw(st.sampled_from(json_paths(result)))
            raw = json.dumps(replaced(result, path, data.draw(json_junk()))).encode("utf-8")
        elif choice == "nested":
            raw = nested_junk(data.draw(st.sampled_from((2_000, 20_000)))).encode("utf-8")
        else:
            raw = data.draw(spoiled_bytes(json.dumps(result).encode("utf-8")))[1]
        file = scratch_file("fold/metrics.json", raw)
        tried(FOLD)
        finished, err = outcome(lambda file=file: read_finished_fold(file, index))
        assert err is None
        if choice == "valid":
            assert finished == result
        elif finished is None:
            assert not file.exists()  # a damaged file is deleted, so the rerun does not meet it again
        else:
            assert finished.get("fold") == index

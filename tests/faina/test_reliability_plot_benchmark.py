"""scripts/benchmark_reliability_plot.py: its made-up diagram data are what the drawing reads, and one short run
prints a row per label count with a figure of that many panels (no timing is judged: it depends on the machine)."""

from __future__ import annotations

from helpers.scripts import load_script


def benchmark_script():
    return load_script("benchmark_reliability_plot")


def test_the_made_up_diagram_has_both_curves_for_every_label():
    data = benchmark_script().diagram(3)
    assert list(data["labels"]) == ["Label-0", "Label-1", "Label-2"] and data["folds"] == 5
    for row in data["labels"].values():
        assert set(row) == {"items", "prior", "reported", "uncalibrated"}
        assert len(row["reported"]["points"]) == 10 and row["reported"]["ece"] is not None


def test_a_short_run_prints_one_row_per_label_count(capsys):
    benchmark_script().main(["--labels", "1", "6", "--rounds", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["| labels | seconds per figure (median) | bytes |", "|---|---|---|"]
    rows = [line.strip("|").split("|") for line in lines[2:]]
    assert [int(row[0]) for row in rows] == [1, 6]
    one, six = (int(row[2].replace(",", "")) for row in rows)
    assert 10_000 < one < six  # six panels draw a larger figure than one

"""The experiment's table keeps one row order (strict, soft, exact) whether the folds' scores come from the
evaluator or from finished folds read back from their metrics.json (keys sorted there)."""

from __future__ import annotations

import json

from faina.training.results_table import markdown_table, summarise


def fold(base: float) -> dict:
    scores = {"precision": base, "recall": base / 2, "f1": base / 3}
    return {mode: {"a1": dict(scores), "avg": dict(scores)} for mode in ("strict", "soft", "exact")}


def rows(table: str) -> list[str]:
    return [
        line.split(" | ")[0].strip("| ") for line in table.splitlines() if line.startswith("| ") and "view" not in line
    ]


def test_the_rows_keep_their_order_for_folds_read_back_with_sorted_keys():
    fresh = [fold(0.5), fold(0.7)]
    read_back = [json.loads(json.dumps(scores, sort_keys=True)) for scores in fresh]
    assert list(read_back[0]) == ["exact", "soft", "strict"]
    expected = ["strict", "strict", "soft", "soft", "exact", "exact"]
    assert rows(markdown_table(summarise(fresh), "t", 2)) == expected
    assert markdown_table(summarise(read_back), "t", 2) == markdown_table(summarise(fresh), "t", 2)


def test_a_scoring_the_table_does_not_know_follows_the_known_ones():
    scores = {"zeta": fold(0.5)["strict"], "exact": fold(0.5)["exact"], "strict": fold(0.5)["strict"]}
    assert list(summarise([scores])) == ["strict", "exact", "zeta"]

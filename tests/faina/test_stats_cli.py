"""``python -m faina.stats``: counts, overlaps, agreement and human ceiling of hand-made files, plots, errors."""

from __future__ import annotations

import json
import math
import sys

import pytest

from faina.stats import main

D, S = "Doubt", "Slogan"


def _post(post_id: str, cells: list[tuple[str, ...]]) -> str:
    lines = [
        f"# post_id = {post_id}",
        "# post_date = 2021-06",
        "# post_topic_keywords = migration",
        "# post_text = " + " ".join(f"w{i}" for i in range(1, len(cells) + 1)),
    ]
    lines += ["\t".join([str(i), f"w{i}", *row]) for i, row in enumerate(cells, start=1)]
    return "\n".join(lines) + "\n"


# post 1: a1 Doubt(1-2) + Slogan(2-3), a2 Doubt(1-2); post 2: a1 nothing, a2 Slogan(1)
HAND = (
    _post("1", [(f"B-{D}", f"B-{D}"), (f"I-{D}|B-{S}", f"I-{D}"), (f"I-{S}", "O"), ("O", "O")])
    + "\n"
    + _post("2", [("O", f"B-{S}"), ("O", "O"), ("O", "O")])
    + "\n"
)


def _json(capsys, *args) -> dict:
    main([*args, "--json"])
    return json.loads(capsys.readouterr().out)


def test_counts_lengths_and_overlap_of_a_hand_made_file(write_file, capsys):
    stats = _json(capsys, str(write_file("hand.conll", HAND)), "--no-gamma")
    assert (stats["posts"], stats["tokens"]) == (2, 7)
    a1, a2, pooled = stats["views"]["a1"], stats["views"]["a2"], stats["views"]["all"]
    assert a1["spans"] == 2 and a1["posts_without_labels"] == 1
    assert (a1["spans_per_post_mean"], a1["spans_per_post_std"]) == (1.0, 1.0)
    assert a1["labels"][D] == {"spans": 1, "length_mean": 2.0, "length_std": 0.0, "share_of_posts": 0.5}
    assert a2["labels"][S]["length_mean"] == 1.0 and a2["spans_per_post_std"] == 0.0
    assert pooled["spans"] == 4 and pooled["posts_without_labels"] == 0
    assert pooled["labels"][S] == {"spans": 2, "length_mean": 1.5, "length_std": 0.5, "share_of_posts": 1.0}
    assert pooled["spans_per_post_std"] == pytest.approx(math.sqrt(0.5))  # (post, view) counts 2, 1, 0, 1
    assert stats["overlap"]["a1"] == {D: {D: 50.0, S: 50.0}, S: {D: 50.0, S: 50.0}}
    assert stats["overlap"]["a2"] == {D: {D: 100.0, S: 0.0}, S: {D: 0.0, S: 100.0}}
    assert stats["overlap"]["all"][D] == {D: 75.0, S: 25.0}
    assert stats["overlap"]["all"][S] == pytest.approx({D: 100 / 3, S: 200 / 3})


def test_kappa_and_human_ceiling_of_a_hand_made_file(write_file, capsys):
    agreement = _json(capsys, str(write_file("hand.conll", HAND)), "--no-gamma")["agreement"]
    assert agreement["kappa_method"] == "cohen"
    assert agreement["kappa"] == {D: pytest.approx(1.0), S: pytest.approx(-1.0)}
    assert agreement["gamma"] is None and "--no-gamma" in agreement["unavailable"]
    ceiling = agreement["human_ceiling"]
    # span strict: a1 as prediction of a2 -> Doubt pair overlaps fully, P = R = 1/2, and the same reversed
    assert ceiling["span-fine"]["strict"] == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    assert ceiling["span-fine"]["exact"] == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    # post micro with the empty-post pseudo-label: a1 vs a2 TP 1 FP 2 FN 1 (P 1/3, R 1/2); reversed P 1/2, R 1/3
    assert ceiling["post-fine"]["strict"] == pytest.approx({"precision": 5 / 12, "recall": 5 / 12, "f1": 0.4})
    assert set(ceiling) == {"span-fine", "span-coarse", "post-fine", "post-coarse"}


@pytest.mark.slow
def test_gamma_is_one_for_identical_views_and_lower_when_they_differ(write_file, capsys):
    same = (
        _post("1", [(f"B-{D}", f"B-{D}"), (f"I-{D}", f"I-{D}"), ("O", "O"), (f"B-{S}", f"B-{S}")])
        + "\n"
        + _post("2", [("O", "O"), (f"B-{S}", f"B-{S}"), (f"I-{S}", f"I-{S}")])
        + "\n"
    )
    agreement = _json(capsys, str(write_file("same.conll", same)))["agreement"]
    assert agreement["gamma"] == pytest.approx(1.0) and agreement["gamma_cat"] == pytest.approx(1.0)
    assert agreement["settings"]["alpha"] == 1.0 and agreement["settings"]["samples"] == 30
    differ = _json(capsys, str(write_file("hand.conll", HAND)))["agreement"]
    assert differ["gamma"] < 1.0


def test_gamma_without_the_package_says_how_to_get_it(write_file, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pygamma_agreement", None)
    agreement = _json(capsys, str(write_file("hand.conll", HAND)))["agreement"]
    assert agreement["gamma"] is None and "pip install pygamma-agreement" in agreement["unavailable"]
    assert agreement["kappa"]  # the rest is still there


def test_one_view_file_has_no_agreement_and_asking_for_it_is_one_clear_error(write_file, capsys):
    one = write_file("one.conll", _post("1", [(f"B-{D}",), (f"I-{D}",)]) + "\n")
    stats = _json(capsys, str(one))
    assert stats["agreement"] is None and set(stats["views"]) == {"a1"}
    main([str(one)])
    assert "agreement: needs two or more annotator views" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main([str(one), "--agreement", "yes"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: ") and "one.conll" in err and "needs two or more annotator views, the file has 1" in err
    )


def test_post_file_counts_labels_and_writes_plots(write_file, capsys, tmp_path):
    tsv = write_file(
        "posts.tsv",
        "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2\n"
        f"1\t2021-06\tmigration\tw\t{D}|{S}\t{D}\n2\t2021-06\tmigration\tw\t\t{S}\n",
    )
    stats = _json(capsys, str(tsv), "--plots", str(tmp_path / "plots"))
    assert stats["tokens"] is None and stats["views"]["a1"]["labels"][D]["length_mean"] is None
    assert stats["overlap"]["a1"][D] == {D: 0.0, S: 100.0}
    assert stats["agreement"]["human_ceiling"]["post-fine"]["strict"]["f1"] == pytest.approx(0.4)
    assert stats["agreement"]["gamma"] is None
    for name in ("overlap-a1.png", "overlap-a2.png", "overlap-all.png", "spans-per-label.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 1000

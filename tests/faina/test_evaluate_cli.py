"""``python -m faina.evaluate``: JSON and table output, -O, coarse derivation, per-label, clean errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from faina.data.coarse import coarse_corpus
from faina.evaluate import main
from faina.formats.conll import read_conll, write_conll
from faina.formats.labels import LabelInventory
from faina.scoring.official import evaluate_files

INV = LabelInventory.load()
LL, AE, ST, DO, SL = "Loaded-language", "Appeal-to-emotion", "Strawman", "Doubt", "Slogan"
VIEWS = {"a1", "a2", "avg"}
FIGURES = {"precision", "recall", "f1"}


def conll_post(post_id: str, rows: list[tuple[str, ...]]) -> str:
    """A post in the official layout; each row holds the label cells of one token."""
    tokens = [f"w{i}" for i in range(1, len(rows) + 1)]
    lines = [
        f"# post_id = {post_id}",
        "# post_date = 2021-06",
        "# post_topic_keywords = migration",
        f"# post_text = {' '.join(tokens)}",
    ]
    lines += ["\t".join([str(i), token, *cells]) for i, (token, cells) in enumerate(zip(tokens, rows), start=1)]
    return "\n".join(lines) + "\n"


# Gold: post 1 a1 LL(1-2) and ST(2-4), a2 AE(1-4); post 2 a1 DO(2-2), a2 nothing.
GOLD = (
    conll_post(
        "1", [(f"B-{LL}", f"B-{AE}"), (f"I-{LL}|B-{ST}", f"I-{AE}"), (f"I-{ST}", f"I-{AE}"), (f"I-{ST}", f"I-{AE}")]
    )
    + "\n"
    + conll_post("2", [("O", "O"), (f"B-{DO}", "O")])
    + "\n"
)
# Prediction: a1 LL(1-1), ST(3-4); a2 LL(1-2) (a child of AE: 0 strict, 0 soft), AE(3-3).
PRED = (
    conll_post("1", [(f"B-{LL}", f"B-{LL}"), ("O", f"I-{LL}"), (f"B-{ST}", f"B-{AE}"), (f"I-{ST}", "O")])
    + "\n"
    + conll_post("2", [("O", "O"), ("O", "O")])
    + "\n"
)
# a1: LL(1) vs LL(1-2): C_p 1/1, C_r 1/2; ST(3-4) vs ST(2-4): C_p 2/2, C_r 2/3 -> P = 2/2, R = (1/2 + 2/3)/3
# a2: AE(3) vs AE(1-4): C_p 1, C_r 1/4; LL earns nothing -> P = 1/2, R = 1/4
EXPECTED_STRICT = {"a1": (1.0, (1 / 2 + 2 / 3) / 3), "a2": (0.5, 0.25)}


@pytest.fixture
def span_files(write_file):
    return str(write_file("gold.conll", GOLD)), str(write_file("pred.conll", PRED))


def run_json_and_stderr(capsys, *args: str) -> tuple[dict, str]:
    main([*args, "--json"])
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def run_json(capsys, *args: str) -> dict:
    return run_json_and_stderr(capsys, *args)[0]


def test_json_has_the_documented_keys_and_fractions(span_files, capsys):
    gold, pred = span_files
    result = run_json(capsys, "-T", "span-fine", "-G", gold, "-P", pred)
    assert set(result) == {"strict", "soft"}
    for mode in result.values():
        assert set(mode) == VIEWS and all(set(row) == FIGURES for row in mode.values())
    for view, (precision, recall) in EXPECTED_STRICT.items():
        assert result["strict"][view]["precision"] == pytest.approx(precision, abs=1e-12)
        assert result["strict"][view]["recall"] == pytest.approx(recall, abs=1e-12)
    assert result["strict"]["avg"]["f1"] == pytest.approx(
        (result["strict"]["a1"]["f1"] + result["strict"]["a2"]["f1"]) / 2
    )
    assert result["soft"] == result["strict"]  # no direct-parent prediction here (LL is AE's child)


def test_table_prints_percentages_with_two_decimals(span_files, capsys):
    gold, pred = span_files
    main(["-T", "span-fine", "-G", gold, "-P", pred])
    out = capsys.readouterr().out
    assert "[strict evaluation]" in out and "[soft evaluation]" in out
    a2_line = next(line for line in out.splitlines() if line.startswith("a2"))
    assert a2_line.split()[1:] == ["50.00", "25.00", f"{2 * 0.5 * 0.25 / 0.75 * 100:.2f}"]
    assert "Predicted spans: a1: 2; a2: 2" in out


def test_span_coarse_task_has_no_soft_scores(span_files, capsys):
    gold, pred = span_files
    assert set(run_json(capsys, "-T", "span-coarse", "-G", gold, "-P", pred)) == {"strict"}


def test_fine_files_on_a_coarse_task_are_derived_through_the_taxonomy(span_files, tmp_path):
    gold, pred = span_files
    for name, path in (("gold", gold), ("pred", pred)):
        write_conll(coarse_corpus(read_conll(path, INV), INV), tmp_path / f"{name}.coarse.conll")
    derived = evaluate_files("span-coarse", gold, pred)
    from_coarse_files = evaluate_files("span-coarse", tmp_path / "gold.coarse.conll", tmp_path / "pred.coarse.conll")
    assert derived == from_coarse_files
    # Everything here is Distraction: a2's LL(1-2) and AE(3) merge with nothing and both lie in AE(1-4).
    assert derived["strict"]["a2"]["recall"] == pytest.approx(3 / 4)


def test_a_coarse_file_on_a_fine_task_is_an_error(span_files, tmp_path, capsys):
    gold, _ = span_files
    write_conll(coarse_corpus(read_conll(gold, INV), INV), tmp_path / "coarse.conll")
    with pytest.raises(SystemExit) as exit_info:
        main(["-T", "span-fine", "-G", gold, "-P", str(tmp_path / "coarse.conll")])
    assert exit_info.value.code == 2
    assert "coarse" in capsys.readouterr().err


def test_one_prediction_column_is_scored_against_every_view(span_files, write_file, capsys):
    gold, pred = span_files
    one_column = "\n".join(
        "\t".join(line.split("\t")[:3]) if line and not line.startswith("#") else line for line in PRED.split("\n")
    )
    single = str(write_file("single.conll", one_column))
    result, err = run_json_and_stderr(capsys, "-T", "span-fine", "-G", gold, "-P", single, "-O")
    # the 4-column file in -O mode uses its first label column only, like the official scorer
    assert run_json(capsys, "-T", "span-fine", "-G", gold, "-P", pred, "-O") == result
    # a2 scored with a1's prediction LL(1), ST(3-4): nothing matches AE(1-4)
    assert result["strict"]["a1"]["precision"] == pytest.approx(EXPECTED_STRICT["a1"][0])
    assert result["strict"]["a2"]["precision"] == 0.0
    assert "warning:" in err and "view a2" in err  # a2: P + R = 0


def test_post_level_one_prediction_and_empty_cell_quirk(write_file, capsys):
    header = "post_id\tpost_date\tpost_topic_keywords\tpost_text\tlabels_a1\tlabels_a2\n"
    gold = write_file("gold.tsv", header + f"1\t2021-06\tmigration\tx\t{LL}\t\n2\t2021-06\tmigration\ty\t\t{DO}|{SL}\n")
    pred = write_file(
        "pred.tsv", header.replace("\tlabels_a2", "") + f"1\t2021-06\tmigration\tx\t{LL}\n2\t2021-06\tmigration\ty\t\n"
    )
    result, err = run_json_and_stderr(capsys, "-T", "post-fine", "-G", str(gold), "-P", str(pred), "-O")
    assert set(result) == {"strict"}
    assert result["strict"]["a1"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}  # "" on "" is a TP
    # a2: post 1 pred {LL} vs gold {""}: FP 1, FN 1; post 2 pred {""} vs {DO, SL}: FP 1, FN 2
    assert result["strict"]["a2"]["precision"] == 0.0
    assert "warning:" in err


def test_per_label_breakdown_in_json_and_table(span_files, capsys):
    gold, pred = span_files
    result = run_json(capsys, "-T", "span-fine", "-G", gold, "-P", pred, "--per-label")
    rows = result["per_label"]["strict"]["a1"]
    assert rows[ST] == {
        "precision": 1.0,
        "recall": pytest.approx(2 / 3),
        "f1": pytest.approx(0.8),
        "predicted": 1,
        "gold": 1,
    }
    assert rows[DO]["gold"] == 1 and rows[DO]["recall"] == 0.0
    main(["-T", "span-fine", "-G", gold, "-P", pred, "--per-label"])
    assert "per label, a2:" in capsys.readouterr().out


def test_zero_denominator_warns_and_reports_zero(span_files, write_file, capsys):
    gold, _ = span_files
    nothing = "\n".join(
        line if not line or line.startswith("#") else "\t".join(line.split("\t")[:2] + ["O", "O"])
        for line in GOLD.split("\n")
    )
    pred = str(write_file("nothing.conll", nothing))
    result, err = run_json_and_stderr(capsys, "-T", "span-fine", "-G", gold, "-P", pred)
    assert result["strict"]["avg"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert "warning:" in err and "predicted spans is 0" in err


@pytest.mark.parametrize(
    "pred_text, message",
    [
        (conll_post("2", [("O", "O")]), "posts, but the gold file"),
        (PRED.replace("# post_id = 2", "# post_id = 3"), "post '3' where the gold file has '2'"),
        (PRED.replace(f"B-{ST}", "B-Strawmen", 1), "unknown label 'Strawmen'"),
        (PRED.replace("\tO\n", "\n", 1), "columns"),
    ],
)
def test_bad_prediction_files_end_in_one_error_line(span_files, write_file, capsys, pred_text, message):
    gold, _ = span_files
    pred = str(write_file("bad.conll", pred_text))
    with pytest.raises(SystemExit) as exit_info:
        main(["-T", "span-fine", "-G", gold, "-P", pred])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.startswith("error: ") and message in err and pred in err
    assert "Traceback" not in err


def test_view_count_mismatch_suggests_one_prediction_mode(span_files, write_file, capsys):
    gold, _ = span_files
    one_column = "\n".join(
        "\t".join(line.split("\t")[:3]) if line and not line.startswith("#") else line for line in PRED.split("\n")
    )
    with pytest.raises(SystemExit):
        main(["-T", "span-fine", "-G", gold, "-P", str(write_file("single.conll", one_column))])
    assert "-O" in capsys.readouterr().err


def test_the_module_runs_as_a_command_and_fails_cleanly(span_files, write_file, repo_root):
    gold, _ = span_files
    bad = str(write_file("bad.conll", conll_post("1", [("B-Nonsense", "O")])))
    done = subprocess.run(
        [sys.executable, "-m", "faina.evaluate", "-T", "span-fine", "-G", gold, "-P", bad, "--json"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert done.stdout == "" and done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.fixture
def probability_file(tmp_path):
    """Probabilities of the two posts of ``GOLD`` (span level, two views, every fine label)."""
    import numpy as np

    from faina.formats.probability_file import PostProbabilities, ProbabilityFile, write_probabilities

    labels = tuple(INV.fine)
    posts = tuple(
        PostProbabilities(pid, np.full((2, len(labels), words), 0.2), tuple(f"w{i}" for i in range(1, words + 1)))
        for pid, words in (("1", 4), ("2", 2))
    )
    return str(write_probabilities(ProbabilityFile("span", ("a1", "a2"), labels, posts), tmp_path / "p.jsonl"))


def test_probabilities_are_scored_under_their_new_key_and_the_former_one(span_files, probability_file, capsys):
    gold, pred = span_files
    result, err = run_json_and_stderr(
        capsys, "-T", "span-fine", "-G", gold, "-P", pred, "--probabilities", probability_file
    )
    assert result["probability_scores"]["items"] == 6 and result["probability_scores"]["level"] == "span"
    assert result["soft_labels"] == result["probability_scores"]  # the former key, for one release
    assert result["soft"] == result["strict"] and err == ""  # the official "soft" F1 is another thing
    main(["-T", "span-fine", "-G", gold, "-P", pred, "--probabilities", probability_file])
    assert "[probability scores] 6 tokens" in capsys.readouterr().out


def test_the_former_soft_option_still_works_and_says_its_new_name(span_files, probability_file, capsys):
    gold, pred = span_files
    new = run_json(capsys, "-T", "span-fine", "-G", gold, "-P", pred, "--probabilities", probability_file)
    old, err = run_json_and_stderr(capsys, "-T", "span-fine", "-G", gold, "-P", pred, "--soft", probability_file)
    assert old == new and "--soft is now --probabilities" in err
    with pytest.raises(SystemExit) as stop:
        main(["-T", "span-fine", "-G", gold, "-P", pred, "--soft", probability_file, "--probabilities", gold])
    assert stop.value.code == 2 and "different files" in capsys.readouterr().err


def test_prior_from_without_probabilities_names_the_option_to_add(span_files, capsys):
    gold, pred = span_files
    with pytest.raises(SystemExit):
        main(["-T", "span-fine", "-G", gold, "-P", pred, "--prior-from", gold])
    assert "add --probabilities PROBS" in capsys.readouterr().err


def test_a_label_outside_the_inventory_names_this_commands_option(span_files, write_file, capsys):
    gold, _ = span_files
    pred = str(write_file("bad.conll", PRED.replace(f"B-{ST}", "B-Strawmen", 1)))
    with pytest.raises(SystemExit):
        main(["-T", "span-fine", "-G", gold, "-P", pred])
    err = capsys.readouterr().err
    assert "give --labels an inventory that has it" in err and "data.labels" not in err

"""missci.report on hand-made results folders: one row per run (per pooled view for LoRA), unavailable metrics
with their reason, each row's command and time, the paper's rows labelled as the paper's."""

import json

import pytest

from missci.analysis.report_table import COLUMNS, PAPER_ROWS, load_rows, markdown_table, report
from missci.report import main


def _ranking(p1: float) -> dict:
    values = {"f1_micro": p1 / 2, "f1_macro": 0.1}
    for k in range(1, 7):
        values[f"p@{k}"] = min(1.0, p1 + 0.05 * (k - 1))
        values[f"arg@{k}"] = min(1.0, 2 * p1 + 0.05 * (k - 1))
    return values


@pytest.fixture
def results(tmp_path):
    lora = tmp_path / "lora-cv5"
    lora.mkdir()
    (lora / "results.json").write_text(
        json.dumps(
            {
                "folds": [],
                "per_fold": {},
                "pooled": {
                    "test": {**_ranking(0.25), "meteor": 0.2, "bertscore": 0.6},
                    "all": {**_ranking(0.125), "meteor": 0.19, "bertscore": 0.61},
                },
                "evaluated": {"test": {"arguments": 9, "fallacies": 20}, "all": {"arguments": 11, "fallacies": 24}},
            }
        )
    )
    (lora / "row.json").write_text(
        json.dumps({"command": "python train.py task=missci-gen name=lora-cv5", "seconds": 3725, "exit_status": 0})
    )
    zero = tmp_path / "zeroshot"
    zero.mkdir()
    (zero / "metrics-test.json").write_text(
        json.dumps(
            {
                "metrics": {**_ranking(0.05), "meteor": 0.15, "bertscore": 0.55},
                "unavailable": {
                    "nli_a": "google/t5_xxl_true_nli_mixture is not available offline",
                    "nli_s": "google/t5_xxl_true_nli_mixture is not available offline",
                },
                "models": {"bertscore": "minilm"},
                "counts": {"arguments": 9, "fallacies": 20},
            }
        )
    )
    base = tmp_path / "random-claim"
    base.mkdir()
    (base / "baseline-test.json").write_text(
        json.dumps(
            {
                "seeds": {"1": {}, "2": {}},
                "mean": {"p@1": 0.131, "arg@1": 0.264, "f1_micro": 0.117, "meteor": 0.185},
                "std": {},
                "unavailable": {},
                "models": {},
            }
        )
    )
    return tmp_path


def test_rows_from_each_kind_of_results_folder(results):
    lora = load_rows(results / "lora-cv5")
    assert [r.name for r in lora] == ["lora-cv5 · pooled test", "lora-cv5 · pooled all"]
    assert lora[0].metrics["p@1"] == 0.25 and lora[1].fallacies == 24 and lora[0].seconds == 3725
    assert "nli_a" in lora[0].unavailable and "p@6" not in lora[0].unavailable
    (zero,) = load_rows(results / "zeroshot")
    assert zero.unavailable["nli_s"] == "google/t5_xxl_true_nli_mixture is not available offline"
    assert zero.command is None and zero.fallacies == 20
    (base,) = load_rows(results / "random-claim")
    assert base.name == "random-claim (mean of seeds 1, 2)" and "rank k > 1" in base.unavailable["p@2"]


def test_markdown_marks_unavailable_metrics_and_labels_the_paper(results):
    rows = report([results / "lora-cv5", results / "zeroshot"])
    table = markdown_table(rows)
    lines = table.splitlines()
    header = lines[0].split(" | ")
    assert len(header) == len(COLUMNS) + 3
    zero_line = next(line for line in lines if line.startswith("| zeroshot |"))
    cells = [c.strip() for c in zero_line.strip("|").split("|")]
    assert cells[1] == "20" and cells[2] == "0.050"
    nli_note = next(line for line in lines if "t5_xxl_true_nli_mixture is not available offline" in line)
    number = nli_note.split("]")[0] + "]"
    assert nli_note.startswith("[") and cells[-2] == cells[-3] == f"unavailable {number}"
    assert "| lora-cv5 · pooled test | 20 | 0.250 |" in table and "1 h" not in table and "62 min 05 s" in table
    assert "`python train.py task=missci-gen name=lora-cv5`" in table
    gpt4 = next(line for line in lines if line.startswith("| GPT-4 (D) (paper) |"))
    assert "0.317" in gpt4 and gpt4.rstrip(" |").endswith("paper")
    assert "not re-run" in table and len([row for row in lines if "(paper) |" in row]) == len(PAPER_ROWS)


def test_cli_json_and_markdown_file(results, tmp_path, capsys):
    out = tmp_path / "table.md"
    main([str(results / "random-claim"), str(results / "zeroshot"), "--json", "--markdown", str(out), "--no-paper"])
    printed = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in printed["rows"]] == ["random-claim (mean of seeds 1, 2)", "zeroshot"]
    assert printed["rows"][1]["unavailable"]["nli_a"].endswith("offline")
    assert "(paper)" not in out.read_text() and "| zeroshot | 20 |" in out.read_text()


def test_a_run_that_did_not_finish_is_a_row_saying_so(tmp_path):
    (tmp_path / "killed").mkdir()
    (tmp_path / "killed" / "row.json").write_text(
        json.dumps({"command": "python train.py", "seconds": 1978, "exit_status": 137})
    )
    (row,) = load_rows(tmp_path / "killed")
    assert not row.metrics and row.unavailable["p@1"] == "the run did not finish (exit status 137)"
    assert "| killed |  | unavailable [1] |" in markdown_table([row]) and row.seconds == 1978


def test_folder_without_results_is_one_clear_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "metrics-test.json").write_text("{not json")
    for folder in ("empty", "broken", "missing"):
        with pytest.raises(SystemExit) as exit_info:
            main([str(tmp_path / folder)])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and folder in err and "Traceback" not in err

"""Error analysis of Missci runs: class confusions (top-1, best-of-k), per-class scores, and the notebook
notebooks/missci_errors.ipynb executed on a hand-made results folder over the first dev arguments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metrics.missci_classification import confusion, per_class_scores
from missci.analysis.error_analysis import NO_ANSWER, class_pairs, confusion_table, per_class_table, scored_fallacies
from missci.dataset.prediction_file import FallacyPrediction, RankedPremise, write_predictions
from missci.dataset.reader import load_split

REPO = Path(__file__).resolve().parents[2]
WRONG = "Impossible Expectations"


def _hand_made_run(data_dir, results: Path, arguments: int = 3) -> list:
    """Predictions for the R_i of the first dev arguments: R_i 0 hit at rank 1 with the gold premise, R_i 1 a
    wrong class then the gold class at rank 2, R_i 2 no answer, the rest one wrong class with an unrelated
    premise."""
    chosen = load_split("dev", data_dir)[:arguments]
    predictions = []
    for number, (argument, fallacy) in enumerate((a, f) for a in chosen for f in a.fallacies):
        gold = fallacy.interchangeable[0]
        wrong = next(c for c in (WRONG, "Ambiguity", "False Equivalence") if c not in fallacy.gold_classes)
        ranked = {
            0: [RankedPremise(gold.fallacy_class, gold.premise)],
            1: [RankedPremise(wrong, "Something else entirely."), RankedPremise(gold.fallacy_class, "A guess.")],
            2: [],
        }.get(number, [RankedPremise(wrong, f"Bananas are yellow number {number}.")])
        predictions.append(FallacyPrediction(argument.id, fallacy.id, ranked))
    write_predictions(results / "predictions-dev.jsonl", predictions)
    return chosen


def test_top1_and_best_of_k_confusions(data_dir, tmp_path):
    chosen = _hand_made_run(data_dir, tmp_path)
    scored = scored_fallacies(load_split("dev", data_dir), tmp_path)
    assert len(scored) == sum(len(a.fallacies) for a in chosen)
    gold1, predicted1 = class_pairs(scored, 1)
    gold2, predicted2 = class_pairs(scored, 2)
    first_gold = scored[1][1].interchangeable[0].fallacy_class
    assert gold1[0] == predicted1[0] and predicted1[2] == NO_ANSWER
    assert predicted1[1] != gold1[1] and gold2[1] == predicted2[1] == first_gold  # a hit only within the top 2
    top1, top2 = confusion_table(scored, 1), confusion_table(scored, 2)
    diagonal = lambda table: sum(table.at[c, c] for c in table.index)  # noqa: E731
    assert top1.values.sum() == top2.values.sum() == len(scored)
    assert diagonal(top1) == 1 and diagonal(top2) == 2 and top1.at[gold1[2], NO_ANSWER] == 1
    per_class = per_class_table(scored)
    assert per_class.loc[gold1[0], "recall"] > 0 and per_class["support"].sum() == len(scored)


def test_per_class_scores_and_confusion_follow_sklearn_definitions():
    gold = ["A", "A", "B", "C"]
    predicted = ["A", "B", "B", "Other"]
    scores = per_class_scores(gold, predicted, ["A", "B", "C"])
    assert scores["A"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "support": 2}
    assert scores["B"]["precision"] == 0.5 and scores["C"]["f1"] == 0.0
    assert confusion(gold, predicted, ["A", "B", "C", "Other"])["matrix"] == [
        [1, 1, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 1],
        [0, 0, 0, 0],
    ]


@pytest.mark.slow  # a kernel, SBERT and BERTScore with the packaged MiniLM
def test_missci_errors_notebook_executes(data_dir, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    chosen = _hand_made_run(data_dir, tmp_path, arguments=8)  # the synthetic sample has ~2 R_i per argument
    assert sum(len(a.fallacies) for a in chosen) > 10
    for name, value in {
        "MISSCI_RUN": str(tmp_path),
        "MISSCI_DATA": str(data_dir),
        "MISSCI_K": "2",
        "MISSCI_BERTSCORE": "minilm",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    notebook = nbformat.read(REPO / "notebooks" / "missci_errors.ipynb", as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert "reasoning(s) R_i of 8 argument(s)" in outputs and "top-1 hits: 1; best-of-2 hits: 2" in outputs
    for figure in ("confusion.png", "per_class_f1.png", "premise_similarity.png"):
        assert (tmp_path / "figures" / figure).stat().st_size > 1000
    worst = (tmp_path / "figures" / "worst_premises.csv").read_text(encoding="utf-8")
    assert len(worst.strip().splitlines()) == 11 and "Bananas are yellow" in worst

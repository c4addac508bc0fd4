"""The Missci command-line tools: stats, download, evaluate, baseline."""

import hashlib
import json

import pytest

from common.errors import UserError
from missci import baseline, download, evaluate, stats
from missci.dataset.classes import CLASS_NAMES
from missci.dataset.prediction_file import FallacyPrediction, RankedPremise, read_predictions, write_predictions
from missci.dataset.reader import load_split


def _raw_counts(folder):
    """(arguments, R_i, interchangeable, class counter) per split, counted from the raw JSON lines."""
    from collections import Counter

    counts = {}
    for split in ("dev", "test"):
        rows = [json.loads(line) for line in (folder / f"{split}.missci.jsonl").read_text().splitlines() if line]
        fallacies = [f for r in rows for f in r["argument"]["fallacies"]]
        classes = Counter(alt["class"] for f in fallacies for alt in f["interchangeable_fallacies"])
        counts[split] = (len(rows), len(fallacies), sum(classes.values()), classes)
    return counts


def test_stats_json(data_dir, capsys):
    result = stats.main(["--data", str(data_dir), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed == result
    raw = _raw_counts(data_dir)
    for split, (arguments, fallacies, interchangeable, classes) in raw.items():
        assert result["splits"][split]["arguments"] == arguments
        assert result["splits"][split]["fallacies"] == fallacies
        assert result["splits"][split]["interchangeable"] == interchangeable
        assert result["splits"][split]["classes"] == {name: classes.get(name, 0) for name in CLASS_NAMES}
    assert result["arguments"] == raw["dev"][0] + raw["test"][0]
    assert (
        result["classes"]["Fallacy of Exclusion"]
        == raw["dev"][3]["Fallacy of Exclusion"] + raw["test"][3]["Fallacy of Exclusion"]
    )
    assert stats.main(["--data", "sample", "--json"]) == result  # the name `sample` is this folder


def test_stats_reproduce_the_paper_counts(real_missci, capsys):
    result = stats.main(["--data", str(real_missci), "--json"])
    assert (result["arguments"], result["fallacies"], result["interchangeable"]) == (184, 435, 550)
    assert result["splits"]["dev"]["fallacies"] == 72 and result["splits"]["test"]["interchangeable"] == 454
    assert result["classes"]["Fallacy of Exclusion"] == 150 and result["classes"]["Impossible Expectations"] == 11


def test_download_checks_sums_and_reports_offline(tmp_path, data_dir, monkeypatch):
    # the sample stands in for the pinned files: their sums become the pinned sums
    sums = {n: hashlib.sha256((data_dir / n).read_bytes()).hexdigest() for n in download.SHA256}
    monkeypatch.setattr(download, "SHA256", sums)
    served = {download.file_url(n): (data_dir / n).read_bytes() for n in sums}
    paths = download.download(tmp_path / "d", fetch=served.__getitem__)
    assert [p.read_bytes() for p in paths] == [(data_dir / n).read_bytes() for n in sums]
    assert download.download(tmp_path / "d", fetch=lambda url: b"never fetched: the files are kept") == paths
    with pytest.raises(UserError, match="checksum mismatch"):
        download.download(tmp_path / "e", fetch=lambda url: b"tampered")

    def unreachable(*args, **kwargs):
        raise download.urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(download.urllib.request, "urlopen", unreachable)
    with pytest.raises(SystemExit) as info:
        download.main([str(tmp_path / "f")])
    assert info.value.code == 2


def test_pinned_checksums_are_the_real_files(real_missci):
    # the real_missci fixture fails on a mismatch; here the download keeps verified files without fetching
    paths = download.download(real_missci, fetch=lambda url: pytest.fail(f"fetched {url}"))
    assert [p.name for p in paths] == list(download.SHA256)


def _oracle_predictions(arguments):
    return [
        FallacyPrediction(
            a.id, f.id, [RankedPremise("Other", "nothing"), RankedPremise(f.interchangeable[0].fallacy_class, "guess")]
        )
        for a in arguments
        for f in a.fallacies
    ]


def test_evaluate_cli_on_written_predictions(tmp_path, data_dir, capsys):
    path = write_predictions(tmp_path / "pred.jsonl", _oracle_predictions(load_split("dev", data_dir)))
    assert read_predictions(path)[0].predictions[1].premise == "guess"
    result = evaluate.main([str(path), "--split", "dev", "--data", str(data_dir), "--json", "--no-premise-metrics"])
    metrics = result["metrics"]
    assert metrics["p@1"] == 0.0 and metrics["p@2"] == 1.0 and metrics["arg@2"] == 1.0 and metrics["f1_micro"] == 0.0
    assert json.loads(capsys.readouterr().out)["metrics"]["p@6"] == 1.0


def test_evaluate_cli_errors(tmp_path, data_dir):
    arguments = load_split("dev", data_dir)
    partial = write_predictions(tmp_path / "partial.jsonl", _oracle_predictions(arguments)[:-1])
    with pytest.raises(SystemExit) as info:
        evaluate.main([str(partial), "--split", "dev", "--data", str(data_dir), "--no-premise-metrics"])
    assert info.value.code == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"argument_id": "a", "fallacy_id": "a:1", "predictions": [{"class": "Nope", "premise": ""}]}\n')
    with pytest.raises(UserError, match=r"bad.jsonl:1: .*'Nope' is not one of the 9 classes"):
        read_predictions(bad)


def test_random_baseline_reproduces_paper_on_test(real_missci, capsys):
    result = baseline.main(
        [
            "random",
            "--premise",
            "claim",
            "--seeds",
            "1",
            "2",
            "3",
            "4",
            "5",
            "--split",
            "test",
            "--data",
            str(real_missci),
            "--json",
            "--no-premise-metrics",
        ]
    )
    assert json.loads(capsys.readouterr().out)["mean"] == pytest.approx(result["mean"])
    assert set(result["seeds"]) == {"1", "2", "3", "4", "5"}
    assert round(result["mean"]["p@1"], 4) == 0.1311
    assert round(result["mean"]["arg@1"], 4) == 0.2636
    assert round(result["mean"]["f1_micro"], 4) == 0.1165
    assert result["std"]["p@1"] > 0


@pytest.mark.slow
def test_random_baseline_premises_and_meteor(data_dir):
    arguments = load_split("dev", data_dir)
    claim = baseline.random_predictions(arguments, "claim", 1)
    p0 = baseline.random_predictions(arguments, "p0", 1)
    assert claim[0].predictions[0].premise == arguments[0].claim
    assert p0[0].predictions[0].premise == arguments[0].accurate_premise
    assert [p.predictions[0].fallacy_class for p in claim] == [p.predictions[0].fallacy_class for p in p0]
    from metrics.missci_premise import PremiseMetricConfig

    result = baseline.run_random_baseline(
        arguments, "claim", [1, 2], PremiseMetricConfig(meteor=True, bertscore_model=None, nli_model=None)
    )
    assert 0.05 < result["mean"]["meteor"] < 0.5 and result["models"]["meteor"].startswith("nltk")


def test_majority_baseline_predicts_the_most_frequent_class_of_the_other_split(data_dir, tmp_path, capsys):
    from collections import Counter

    dev, test = load_split("dev", data_dir), load_split("test", data_dir)
    counts = Counter(alt.fallacy_class for a in dev for f in a.fallacies for alt in f.interchangeable)
    top = max(counts.values())
    expected = sorted(name for name, n in counts.items() if n == top)[0]
    assert baseline.majority_class(dev) == expected

    out = tmp_path / "majority" / "baseline-test.json"
    result = baseline.main(
        [
            "majority",
            "--premise",
            "p0",
            "--split",
            "test",
            "--data",
            str(data_dir),
            "--no-premise-metrics",
            "--out",
            str(out),
        ]
    )
    assert result["majority_class"] == expected and result["majority_from"] == "dev"
    # P@1 of a constant class = the share of R_i that list it among their interchangeable fallacies
    share = sum(expected in f.gold_classes for a in test for f in a.fallacies) / sum(len(a.fallacies) for a in test)
    assert result["mean"]["p@1"] == pytest.approx(share)
    assert f"majority class ({expected!r}, most frequent in dev)" in capsys.readouterr().out

    from missci.analysis.report_table import load_rows

    (row,) = load_rows(out.parent)
    assert row.name == f"majority (always {expected}, the most frequent class of dev)"
    assert row.metrics["p@1"] == pytest.approx(share) and "rank k > 1" in row.unavailable["p@2"]

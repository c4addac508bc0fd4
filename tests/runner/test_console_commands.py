"""Every console command end to end: its success path and one failure path, exit status and both streams.

The contract (docs/commands.md): status 0 on success and 2 on a user error; stdout holds the command's results
only (nothing for commands whose product is a file), stderr the notices and, on failure, one ``error:`` line;
never a traceback, never the repr of a ``main``'s return value (the bug of ``sys.exit(main())``).

Each success path runs in a subprocess through the alias's own entry-point object (what the installed console
script calls: ``fallacy.cli.faina_evaluate()`` with ``sys.argv[0]`` = the alias), so this checkout's code is
tested, not the scripts installed from another one; each failure path runs as ``fallacy <dataset> <command>``.
The failure paths of the commands that import torch run in this process (same runner, same streams) to keep the
suite's CPU time small; so do the ``python -m`` forms' user errors of the torch-free tools, in subprocesses.
The trained models are tiny: a span model fold (fast_dev_run on 60 posts, random 2-layer encoder) and a LoRA
adapter of a random 2-layer Llama (2 steps).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fallacy import cli as fallacy_cli
from tests_paths import REPO
from tiers import fixture_tier

ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "WANDB_MODE": "offline",
    "OMP_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
ALIAS_SCRIPT = (
    "import sys; from fallacy import cli; name = sys.argv.pop(1); sys.argv[0] = name; "
    "sys.exit(getattr(cli, name.replace('-', '_'))())"
)
# reprs that sys.exit(main()) printed: a dict, a Path, a list of Paths or Rows
REPR_MARKS = ("{'", "PosixPath(", "[PosixPath(", "[Row(", "WindowsPath(")


def run_alias(alias: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", ALIAS_SCRIPT, alias, *map(str, args)],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_module(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300
    )


def assert_clean_stderr(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert not any(line.startswith(REPR_MARKS) for line in stderr.splitlines()), stderr


def assert_one_error_line(stdout: str, stderr: str, words: str) -> None:
    """Nothing on stdout; on stderr one ``error:`` line naming the problem, last (after any notices)."""
    assert stdout == "", stdout
    assert_clean_stderr(stderr)
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and stderr.strip().splitlines()[-1] == errors[0] and words in errors[0], stderr


# --- the trained models and input files ------------------------------------------------------------
@pytest.fixture(scope="module")
def span_fold(trained_runs) -> Path:
    """fold0 of the session's shared tiny span-f run (``helpers.trained``)."""
    return trained_runs.span / "fold0"


@pytest.fixture(scope="module")
@fixture_tier("e2e")
def lora_run(tmp_path_factory, missci_sample) -> Path:
    """The results folder of a cv=official LoRA run of a random 2-layer Llama (2 steps, 2 fallacies)."""
    import train
    from helpers.lora import QUICK_RUN
    from helpers.lora import compose as compose_lora

    root = tmp_path_factory.mktemp("console_lora_run")
    cfg = compose_lora(
        [
            "task=missci-gen",
            f"task.data_dir={missci_sample}",
            f"paths.results_dir={root}",
            "task.premise_metrics=null",
            *QUICK_RUN,
            "cv=official",
            "name=console",
        ]
    )
    train.run(cfg)
    return root / "console"


@pytest.fixture(scope="module")
def gold_predictions(tmp_path_factory, missci_sample) -> Path:
    """A Missci prediction file that ranks each fallacy's gold class first (with the claim as premise)."""
    from missci.dataset.prediction_file import FallacyPrediction, RankedPremise, write_predictions
    from missci.dataset.reader import load_split

    predictions = [
        FallacyPrediction(a.id, f.id, [RankedPremise(f.interchangeable[0].fallacy_class, a.claim)])
        for a in load_split("test", missci_sample)
        for f in a.fallacies
    ]
    return write_predictions(tmp_path_factory.mktemp("missci_pred") / "pred.jsonl", predictions)


def faina_file(name: str) -> Path:
    from faina.sample import default_sample_dir

    return default_sample_dir() / name


# --- success paths (subprocess, through each alias's entry point) ----------------------------------
LIGHT_SUCCESS = {
    "faina-evaluate": (
        lambda tmp: ["-T", "span-fine", "-G", faina_file("sample.conll"), "-P", faina_file("sample.conll")],
        "avg",
    ),
    "faina-validate": (lambda tmp: [faina_file("sample.tsv")], "posts"),
    "faina-stats": (lambda tmp: [faina_file("sample.tsv"), "--agreement", "no"], "posts"),
    "faina-show": (lambda tmp: [faina_file("sample.conll"), "--limit", "2", "--html", tmp / "show.html"], None),
    "faina-sample": (lambda tmp: [tmp / "faina", "--posts", "12"], None),
    "missci-stats": (lambda tmp: ["--data", "sample"], "arguments"),
    "missci-baseline": (lambda tmp: ["random", "--data", "sample", "--no-premise-metrics", "--seeds", "1", "2"], "p@1"),
    "missci-sample": (lambda tmp: [tmp / "missci", "--dev", "2", "--test", "3"], None),
}


@pytest.mark.parametrize("alias", sorted(LIGHT_SUCCESS))
def test_success_path_of_a_torch_free_command(alias, tmp_path):
    make_args, expected = LIGHT_SUCCESS[alias]
    done = run_alias(alias, *make_args(tmp_path))
    assert done.returncode == 0, done.stderr
    assert_clean_stderr(done.stderr)
    if expected is None:  # its product is a file: stdout stays empty, the notice is on stderr
        assert done.stdout == "" and done.stderr.startswith("wrote ")
    else:  # stderr may carry a notice (e.g. that the Missci data is the synthetic sample), never the results
        assert expected in done.stdout and expected not in done.stderr


def test_success_path_of_missci_evaluate(gold_predictions):
    done = run_alias("missci-evaluate", gold_predictions, "--data", "sample", "--no-premise-metrics", "--json")
    assert done.returncode == 0 and "synthetic Missci sample" in done.stderr
    assert_clean_stderr(done.stderr)
    assert json.loads(done.stdout)["metrics"]["p@1"] == 1.0


def test_success_path_of_missci_download_keeps_verified_files(real_missci, tmp_path):
    """Files already there with the pinned sums are kept, so this success path needs no network."""
    for name in ("dev.missci.jsonl", "test.missci.jsonl"):
        shutil.copy(real_missci / name, tmp_path / name)
    done = run_alias("missci-download", tmp_path)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.splitlines() == [f"ok {tmp_path / 'dev.missci.jsonl'}", f"ok {tmp_path / 'test.missci.jsonl'}"]


@pytest.mark.slow  # three console commands in fresh processes
def test_success_paths_of_the_model_commands(span_fold, small_sample, tmp_path):
    """predict, tag and export with a trained span fold; stdout is the tagged posts only (for tag)."""
    out = tmp_path / "pred.conll"
    done = run_alias("faina-predict", span_fold, small_sample / "sample-unlabelled.conll", out)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert_clean_stderr(done.stderr)
    assert f"predictions written: {out}" in done.stderr and out.is_file()

    done = run_alias(
        "faina-tag", span_fold, "--text", "Ciao a tutti", "--text", "Basta!", "--json", "--html", tmp_path / "tag.html"
    )
    assert done.returncode == 0, done.stderr
    assert_clean_stderr(done.stderr)
    assert [set(json.loads(line)) for line in done.stdout.splitlines()] == [{"text", "tokens", "spans"}] * 2
    assert f"page written: {tmp_path / 'tag.html'}" in done.stderr

    done = run_alias("faina-export", span_fold, tmp_path / "model")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert_clean_stderr(done.stderr)
    assert "model folder written" in done.stderr and (tmp_path / "model" / "config.json").is_file()


def test_success_paths_of_the_lora_commands(lora_run, missci_sample, tmp_path):
    out = tmp_path / "lora.jsonl"
    done = run_alias(
        "missci-predict-lora",
        lora_run / "fold0" / "adapter",
        "--out",
        out,
        "--data",
        missci_sample,
        "--max-fallacies",
        "2",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert_clean_stderr(done.stderr)
    assert json.loads(done.stdout)["predictions"] == str(out) and out.is_file()

    done = run_alias("missci-report", lora_run, "--no-paper")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "console" in done.stdout and done.stdout.lstrip().startswith("|")


@pytest.mark.e2e  # builds a hub replica
def test_success_path_of_models_replicas(tmp_path):
    done = run_alias("models-replicas", tmp_path / "replicas", "--only", "alberto")
    assert done.returncode == 0, done.stderr
    assert_clean_stderr(done.stderr)
    name, hub_id, folder = done.stdout.strip().split("\t")
    assert (name, Path(folder)) == ("alberto", tmp_path / "replicas" / "alberto") and hub_id.startswith("m-polignano")
    assert (Path(folder) / "config.json").is_file()


# --- failure paths ---------------------------------------------------------------------------------
def _failures(tmp: Path) -> dict[tuple[str, str], tuple[list, str]]:
    """``(dataset, command)`` -> (arguments that are a user error, words of the one error line)."""
    bad_label = tmp / "bad.conll"
    bad_label.write_text(
        "# post_id = 1\n# post_date = d\n# post_topic_keywords = t\n# post_text = x\n1\tx\tB-Nope\tO\n",
        encoding="utf-8",
    )
    empty, a_file = tmp / "empty.txt", tmp / "a-file"
    empty.write_text("")
    a_file.write_text("x")
    missing = tmp / "missing"
    return {
        ("faina", "evaluate"): (["-T", "span-fine", "-G", missing, "-P", missing], "file not found"),
        ("faina", "validate"): ([bad_label], "unknown label 'Nope'"),
        ("faina", "stats"): ([tmp / "missing.conll"], "file not found"),
        ("faina", "show"): ([missing, "--html", tmp / "x.html"], "file not found"),
        ("faina", "sample"): ([tmp / "s", "--posts", "0"], "posts"),
        ("faina", "tag"): ([missing, "--input", empty], "empty"),
        ("missci", "download"): ([a_file], "not a folder"),
        ("missci", "stats"): (["--data", missing], str(missing)),
        ("missci", "evaluate"): ([missing / "pred.jsonl", "--data", "sample", "--no-premise-metrics"], "pred.jsonl"),
        ("missci", "baseline"): (["random", "--data", missing, "--no-premise-metrics"], str(missing)),
        ("missci", "sample"): ([tmp / "m", "--dev", "0"], "dev"),
        ("missci", "report"): ([missing], str(missing)),
        ("models", "replicas"): ([a_file], "not a folder"),
        ("models", "install-mpnet"): (["--folder", a_file], "exists and is not a folder"),
    }


# The commands whose module imports torch: their failure paths run in this process (same runner and streams).
IN_PROCESS_FAILURES = {
    ("faina", "predict"): "model",
    ("faina", "export"): "model.json",
    ("missci", "predict-lora"): "missing",
}


def test_every_command_has_a_failure_path_here(tmp_path):
    assert set(_failures(tmp_path)) == set(TORCH_FREE_FAILURES)
    table = set(TORCH_FREE_FAILURES) | set(IN_PROCESS_FAILURES)
    assert len(table) == len(TORCH_FREE_FAILURES) + len(IN_PROCESS_FAILURES)
    assert table == {(c.dataset, c.name) for c in fallacy_cli.COMMANDS}


TORCH_FREE_FAILURES = [
    ("faina", "evaluate"),
    ("faina", "validate"),
    ("faina", "stats"),
    ("faina", "show"),
    ("faina", "sample"),
    ("faina", "tag"),
    ("missci", "download"),
    ("missci", "stats"),
    ("missci", "evaluate"),
    ("missci", "baseline"),
    ("missci", "sample"),
    ("missci", "report"),
    ("models", "replicas"),
    ("models", "install-mpnet"),
]


@pytest.mark.parametrize("dataset, command", TORCH_FREE_FAILURES)
def test_failure_path_exits_2_with_one_error_line(dataset, command, tmp_path):
    args, words = _failures(tmp_path)[(dataset, command)]
    done = run_module("fallacy", dataset, command, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert_one_error_line(done.stdout, done.stderr, words)


@pytest.mark.parametrize("dataset, command", sorted(IN_PROCESS_FAILURES))
def test_failure_path_of_a_model_command_exits_2_with_one_error_line(dataset, command, tmp_path, capsys):
    missing = tmp_path / "missing"
    args = {
        "predict": [missing, tmp_path / "in.conll", tmp_path / "out.conll"],
        "export": [missing, tmp_path / "o"],
        "predict-lora": [missing, "--out", tmp_path / "o.jsonl", "--data", "sample"],
    }[command]
    assert fallacy_cli.main([dataset, command, *map(str, args)]) == 2
    captured = capsys.readouterr()
    assert_one_error_line(captured.out, captured.err, IN_PROCESS_FAILURES[(dataset, command)])


@pytest.mark.parametrize("module", ["faina.evaluate", "faina.validate", "missci.stats", "missci.report"])
def test_python_m_form_exits_0_and_2(module, tmp_path):
    """``python -m`` keeps working: status 0 on success, 2 on a user error (the tool's own wrapper)."""
    dataset, _, name = module.partition(".")
    args, words = _failures(tmp_path)[(dataset, name.replace("_", "-"))]
    done = run_module(module, *args)
    assert done.returncode == 2
    assert_one_error_line(done.stdout, done.stderr, words)
    ok = run_module(module, "--help")
    assert ok.returncode == 0 and ok.stdout.startswith(f"usage: python -m {module}") and ok.stderr == ""

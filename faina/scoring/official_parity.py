"""The parity check of ``faina.evaluate`` against the official scorer, on random valid files.

The command is ``python scripts/check_official_parity.py OFFICIAL_SCRIPT`` (docs/faina-metrics.md). OFFICIAL_SCRIPT
is your own copy of the Faina scorer (``scripts/evaluate.py`` of dhfbk/faina) or of the
FadeIT 2026 scorer (``eval.py`` of dhfbk/fadeit-evalita2026); the project never ships either. For every
task the script supports (Faina: the four tasks, each also in ``-O`` mode; FadeIT: post-fine and
span-fine) ``check_task`` writes N random valid gold/prediction pairs, scores each with both, and reports the largest
absolute difference of any P/R/F1 figure (per view and averaged, strict and soft).

How the official figures are obtained unrounded: the official script prints ``round(x * 100, 2)``. A
subprocess imports it as a module (its ``main`` is never run), replaces the module globals ``print``
(silenced) and ``round`` (records its first argument, i.e. ``x * 100`` at full double precision), then
calls its own readers and ``compute_*_scores`` functions the way its ``main`` does. The recorded values
divided by 100 are compared with ours (good to ~1e-16, far below the 1e-9 required); the report also
counts the score sets where ``ours * 100`` equals every recorded value bit for bit. When
the official script divides by zero (a view without predicted spans, P + R = 0), it is recorded as such
and the check asserts that the project reported 0 with a ``ZeroDenominatorWarning`` instead.
The official script is run in a child process, as a module of its own: nothing of it is imported here.
"""

from __future__ import annotations

import ast
import functools
import json
import random
import subprocess
import sys
import warnings
from pathlib import Path

from common.errors import UserError
from faina.formats.any_file import write_any
from faina.formats.labels import LabelInventory
from faina.formats.records import Post, PostCorpus, PostRow, Span, SpanCorpus
from faina.scoring.official import evaluate_files
from metrics.faina_scores import ZeroDenominatorWarning

FIGURES = ("precision", "recall", "f1")
VIEWS = ("a1", "a2", "avg")


@functools.lru_cache(maxsize=1)
def inventory() -> LabelInventory:
    """The Faina label inventory the random files draw their labels from."""
    return LabelInventory.load()


# Runs inside a subprocess: argv = [official script, flavour, jobs.json]; prints one JSON list.
DRIVER = r"""
import builtins, importlib.util, json, sys
script, flavour, jobs_path = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("official_scorer", script)
official = importlib.util.module_from_spec(spec)
spec.loader.exec_module(official)
recorded = []
official.print = lambda *args, **kwargs: None
def recording_round(value, digits=None):
    recorded.append(value)
    return builtins.round(value, digits)
official.round = recording_round
results = []
for job in json.load(open(jobs_path)):
    level, grain = job["task"].split("-")
    one_pred = job["one_pred"]
    if flavour == "faina":
        labels = official.get_task_labels(level, grain)
    else:
        labels = official.get_task_labels("A" if level == "post" else "B")
    outcome = {}
    try:
        if level == "span":
            if flavour == "faina":
                pred = official.get_span_annotations(job["pred"], labels, False, one_pred)
                gold = official.get_span_annotations(job["gold"], labels)
            else:
                pred = official.get_span_annotations(job["pred"], labels)
                gold = official.get_span_annotations(job["gold"], labels)
            counts = (official.get_num_spans(pred), official.get_num_spans(gold))
            modes = ["strict", "soft"] if grain == "fine" else ["strict"]
            for mode in modes:
                recorded.clear()
                try:
                    if flavour == "faina":
                        official.compute_span_scores(pred, gold, counts[0], counts[1], one_pred, mode)
                    else:
                        official.compute_span_scores(pred, gold, counts[0], counts[1], mode)
                    outcome[mode] = list(recorded)
                except ZeroDivisionError:
                    outcome[mode] = "zero-division"
        else:
            pred = official.get_post_annotations(job["pred"], labels)
            gold = official.get_post_annotations(job["gold"], labels)
            counts = (official.get_num_labels(pred), official.get_num_labels(gold))
            recorded.clear()
            try:
                if flavour == "faina":
                    official.compute_post_scores(pred, gold, counts[0], counts[1], one_pred)
                else:
                    official.compute_post_scores(pred, gold, counts[0], counts[1])
                outcome["strict"] = list(recorded)
            except ZeroDivisionError:
                outcome["strict"] = "zero-division"
    except BaseException as err:  # an assert or sys.exit of the official reader: report, do not stop
        outcome = {"error": f"{type(err).__name__}: {err}"}
    results.append(outcome)
print(json.dumps(results))
"""


def official_flavour(script: Path) -> str:
    """``faina`` when ``compute_span_scores`` takes ``one_pred`` (Faina's scorer), else ``fadeit``."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "compute_span_scores":
            return "faina" if "one_pred" in [a.arg for a in node.args.args] else "fadeit"
    raise UserError(
        "no compute_span_scores function: not the official scorer", path=script, fix="give your copy of the scorer"
    )


# --- random valid files ----------------------------------------------------------------------------
def random_spans(rng: random.Random, num_tokens: int, labels, max_spans: int = 5) -> tuple[Span, ...]:
    kept: list[Span] = []
    for _ in range(rng.randint(0, max_spans)):
        first = rng.randint(1, num_tokens)
        last = min(num_tokens, first + rng.choice((0, 1, 2, 3, 5, 8, 20)))
        span = Span(first, last, rng.choice(labels))
        if all(k.label != span.label or k.last < span.first or span.last < k.first for k in kept):
            kept.append(span)
    return tuple(sorted(kept, key=lambda s: (s.first, s.label)))


def perturbed(rng: random.Random, gold, num_tokens: int, labels) -> tuple[Span, ...]:
    out = []
    for span in gold:
        action = rng.choice(("keep", "shift", "relabel", "parent", "drop"))
        first, last, label = span.first, span.last, span.label
        if action == "drop":
            continue
        if action == "shift":
            first = min(max(1, first + rng.randint(-2, 2)), num_tokens)
            last = min(max(first, last + rng.randint(-3, 3)), num_tokens)
        elif action == "relabel":
            label = rng.choice(labels)
        elif action == "parent" and inventory().parents.get(label):
            parent = rng.choice(inventory().parents[label])
            label = parent if parent in labels else label
        out.append(Span(first, last, label))
    out.extend(random_spans(rng, num_tokens, labels, max_spans=2))
    kept: list[Span] = []
    for span in out:
        if all(k.label != span.label or k.last < span.first or span.last < k.first for k in kept):
            kept.append(span)
    return tuple(sorted(kept, key=lambda s: (s.first, s.label)))


def random_span_pair(rng: random.Random, grain: str, one_pred: bool) -> tuple[SpanCorpus, SpanCorpus]:
    """In one-prediction mode the first column perturbs both gold views; the second is random (ignored)."""
    labels = inventory().labels_of(grain)
    golds, preds = [], []
    for index in range(rng.randint(1, 15)):
        tokens = tuple(
            rng.choice(("la", "il", "non", "è", "[USER]", "!", "vaccino", "clima")) for _ in range(rng.randint(1, 30))
        )
        n = len(tokens)
        empty = rng.random() < 0.15
        gold = tuple(() if empty else random_spans(rng, n, labels) for _ in range(2))
        source = (gold[0] + gold[1], ()) if one_pred else gold
        pred = tuple(
            perturbed(rng, source[v], n, labels) if rng.random() < 0.85 else random_spans(rng, n, labels)
            for v in range(2)
        )
        header = (str(1000 + index), "2021-06", "public health", " ".join(tokens), tokens)
        golds.append(Post(*header, gold))
        preds.append(Post(*header, pred))
    return SpanCorpus(tuple(golds), 2), SpanCorpus(tuple(preds), 2)


def random_post_pair(rng: random.Random, grain: str, one_pred: bool) -> tuple[PostCorpus, PostCorpus]:
    labels = inventory().labels_of(grain)

    def label_set(k: int) -> tuple[str, ...]:
        return tuple(sorted(rng.sample(labels, rng.randint(0, min(k, len(labels))))))

    golds, preds = [], []
    for index in range(rng.randint(1, 25)):
        gold = tuple(label_set(3) for _ in range(2))
        source = (tuple(sorted(set(gold[0]) | set(gold[1]))), ()) if one_pred else gold
        pred = tuple(
            tuple(sorted(set(source[v]) ^ set(label_set(1)))) if rng.random() < 0.7 else label_set(3) for v in range(2)
        )
        header = (str(2000 + index), "2020-01", "migration", f"post {index}")
        golds.append(PostRow(*header, gold))
        preds.append(PostRow(*header, pred))
    return PostCorpus(tuple(golds), 2), PostCorpus(tuple(preds), 2)


# --- comparison ------------------------------------------------------------------------------------
def ours(task: str, gold: str, pred: str, one_pred: bool) -> tuple[dict, bool]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = evaluate_files(task, gold, pred, one_pred=one_pred, inventory=inventory())
    return scores, any(issubclass(w.category, ZeroDenominatorWarning) for w in caught)


def run_official(script: Path, flavour: str, jobs: list[dict], workdir: Path) -> list[dict]:
    jobs_path = workdir / "jobs.json"
    jobs_path.write_text(json.dumps(jobs), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(script), flavour, str(jobs_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise UserError(f"running the official scorer failed: {done.stderr[-2000:]}", path=script)
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_task(
    script: Path, flavour: str, task: str, one_pred: bool, files: int, rng: random.Random, workdir: Path
) -> dict:
    level, grain = task.split("-")
    jobs = []
    for i in range(files):
        stem = workdir / f"{task}{'-O' if one_pred else ''}-{i:04d}"
        if level == "span":
            gold, pred = random_span_pair(rng, grain, one_pred)
            paths = (write_any(gold, f"{stem}.gold.conll"), write_any(pred, f"{stem}.pred.conll"))
        else:
            gold, pred = random_post_pair(rng, grain, one_pred)
            paths = (write_any(gold, f"{stem}.gold.tsv"), write_any(pred, f"{stem}.pred.tsv"))
        jobs.append({"task": task, "one_pred": one_pred, "gold": str(paths[0]), "pred": str(paths[1])})
    official = run_official(script, flavour, jobs, workdir)
    report = {
        "files": files,
        "compared": 0,
        "zero_division": 0,
        "bit_identical": 0,
        "max_abs_diff": 0.0,
        "problems": [],
    }
    for job, theirs in zip(jobs, official):
        if "error" in theirs:
            report["problems"].append(f"{job['gold']}: official scorer failed: {theirs['error']}")
            continue
        mine, warned = ours(task, job["gold"], job["pred"], one_pred)
        for mode, values in theirs.items():
            if values == "zero-division":
                report["zero_division"] += 1
                if not warned:
                    report["problems"].append(f"{job['gold']} ({mode}): official divides by zero, ours did not warn")
                continue
            mine_values = [mine[mode][view][figure] for view in VIEWS for figure in FIGURES]
            diff = max(abs(a - b / 100) for a, b in zip(mine_values, values))
            report["bit_identical"] += all(a * 100 == b for a, b in zip(mine_values, values))
            report["max_abs_diff"] = max(report["max_abs_diff"], diff)
            report["compared"] += 1
    return report

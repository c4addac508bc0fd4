"""Check that ``faina.evaluate`` gives the official scorer's figures on random valid files.

    python scripts/check_official_parity.py OFFICIAL_SCRIPT [--files N] [--seed S] [--tolerance T] [--keep DIR]

OFFICIAL_SCRIPT is your own copy of the Faina scorer (``scripts/evaluate.py`` of dhfbk/faina) or of the
FadeIT 2026 scorer (``eval.py`` of dhfbk/fadeit-evalita2026); the project never ships either. For every
task the script supports (Faina: the four tasks, each also in ``-O`` mode; FadeIT: post-fine and
span-fine) it writes N random valid gold/prediction pairs, scores each with both, and reports the largest
absolute difference of any P/R/F1 figure (per view and averaged, strict and soft).

How the official figures are obtained unrounded: the official script prints ``round(x * 100, 2)``. A
subprocess imports it as a module (its ``main`` is never run), replaces the module globals ``print``
(silenced) and ``round`` (records its first argument, i.e. ``x * 100`` at full double precision), then
calls its own readers and ``compute_*_scores`` functions the way its ``main`` does. The recorded values
divided by 100 are compared with ours (good to ~1e-16, far below the 1e-9 required); the report also
counts the score sets where ``ours * 100`` equals every recorded value bit for bit. When
the official script divides by zero (a view without predicted spans, P + R = 0), it is recorded as such
and the script checks that the project reported 0 with a ``ZeroDenominatorWarning`` instead.
Exit status: 0 when every difference is within the tolerance, 1 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from faina.formats.conll import write_conll  # noqa: E402
from faina.formats.labels import LabelInventory  # noqa: E402
from faina.formats.records import Post, PostCorpus, PostRow, Span, SpanCorpus  # noqa: E402
from faina.formats.tsv import write_post_tsv  # noqa: E402
from faina.scoring.official import evaluate_files  # noqa: E402
from metrics.faina_scores import ZeroDenominatorWarning  # noqa: E402

INVENTORY = LabelInventory.load()
FIGURES = ("precision", "recall", "f1")
VIEWS = ("a1", "a2", "avg")

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
    raise SystemExit(f"error: {script} has no compute_span_scores function; is it the official scorer?")


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
        elif action == "parent" and INVENTORY.parents.get(label):
            parent = rng.choice(INVENTORY.parents[label])
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
    labels = INVENTORY.labels_of(grain)
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
    labels = INVENTORY.labels_of(grain)

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
        scores = evaluate_files(task, gold, pred, one_pred=one_pred, inventory=INVENTORY)
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
        raise SystemExit(f"error: running the official scorer failed:\n{done.stderr[-2000:]}")
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
            paths = (write_conll(gold, f"{stem}.gold.conll"), write_conll(pred, f"{stem}.pred.conll"))
        else:
            gold, pred = random_post_pair(rng, grain, one_pred)
            paths = (write_post_tsv(gold, f"{stem}.gold.tsv"), write_post_tsv(pred, f"{stem}.pred.tsv"))
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("official_script", type=Path, help="your copy of the official scorer")
    parser.add_argument("--files", type=int, default=200, help="random file pairs per task and mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated files in this folder")
    args = parser.parse_args(argv)
    if not args.official_script.is_file():
        raise SystemExit(f"error: {args.official_script}: file not found (give the path to the official scorer)")
    flavour = official_flavour(args.official_script)
    runs = [(t, o) for t in ("span-fine", "span-coarse", "post-fine", "post-coarse") for o in (False, True)]
    if flavour == "fadeit":
        runs = [("post-fine", False), ("span-fine", False)]
    rng = random.Random(args.seed)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(f"official scorer: {args.official_script} ({flavour}); {args.files} random file pairs per run")
        for task, one_pred in runs:
            report = check_task(args.official_script, flavour, task, one_pred, args.files, rng, workdir)
            bad = report["max_abs_diff"] > args.tolerance or report["problems"]
            failed = failed or bool(bad)
            print(
                f"{task:12} {'-O' if one_pred else '  '}  compared {report['compared']:4} score sets, "
                f"({report['bit_identical']:4} bit-identical), official zero-division {report['zero_division']:3}, "
                f"max |diff| {report['max_abs_diff']:.3e}"
                f"  {'FAIL' if bad else 'ok'}"
            )
            for problem in report["problems"][:5]:
                print(f"    {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""CPU time of the command-line tools, and of ``faina.evaluate`` beside the official scorer on the same files.

    python scripts/benchmark_startup.py [OFFICIAL_SCRIPT] [--repeat N] [--seed S] [--max-ratio R]

The issue this answers: a scoring command that imports torch costs seconds where the official scorer costs a
tenth of one, so a shell loop over prediction files is slow for no reason. Each measured command runs in a
child process; its cost is the user + system CPU time of that child (``resource.getrusage(RUSAGE_CHILDREN)``
before and after), the median of ``--repeat`` runs. CPU time, not wall time: a busy shared machine slows the
wall clock, not the work.

The files: the committed synthetic sample (``faina/sample_data/sample.conll`` and ``sample.tsv``, 300 posts,
two views) as gold, and a seeded perturbation of it as prediction (spans shifted, relabelled, dropped, added;
post labels added and removed), written to a temporary folder. OFFICIAL_SCRIPT is your own copy of the Faina
scorer (``scripts/evaluate.py`` of dhfbk/faina; the project does not ship it); without it only the project's
commands are measured. The table shows, per command, the median CPU seconds, the modules it imports (one more run
under ``python -X importtime``) and, for the scoring rows, the ratio to the official scorer on the same task. The
last row is ``python train.py --help``, the entry point's start-up. Exit status 1 when a ratio exceeds
``--max-ratio`` (2).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from faina.formats.conll import read_conll, write_conll
from faina.formats.labels import LabelInventory
from faina.formats.records import Span
from faina.formats.tsv import read_post_tsv, write_post_tsv
from faina.sample import default_sample_dir
from fallacy.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]  # the commands run from the checkout
PYTHON = sys.executable


# --- the files -------------------------------------------------------------------------------------
def _no_same_label_overlap(spans: list[Span]) -> tuple[Span, ...]:
    """Drop spans that overlap an earlier one of the same label (the official reader asserts there are none)."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.first, s.label)):
        if all(k.label != span.label or k.last < span.first or span.last < k.first for k in kept):
            kept.append(span)
    return tuple(kept)


def perturbed_spans(rng: random.Random, spans, num_tokens: int, labels: list[str]) -> tuple[Span, ...]:
    out = []
    for span in spans:
        action = rng.choice(("keep", "keep", "shift", "relabel", "drop"))
        if action == "drop":
            continue
        first, last, label = span.first, span.last, span.label
        if action == "shift":
            first = min(max(1, first + rng.randint(-2, 2)), num_tokens)
            last = min(max(first, last + rng.randint(-2, 2)), num_tokens)
        elif action == "relabel":
            label = rng.choice(labels)
        out.append(Span(first, last, label))
    if rng.random() < 0.3:
        first = rng.randint(1, num_tokens)
        out.append(Span(first, min(num_tokens, first + rng.randint(0, 4)), rng.choice(labels)))
    return _no_same_label_overlap(out)


def write_files(folder: Path, seed: int) -> dict[str, tuple[Path, Path]]:
    """``{"span-fine": (gold, pred), "post-fine": (gold, pred)}``: the sample and its perturbation."""
    rng = random.Random(seed)
    inventory = LabelInventory.load()
    fine = list(inventory.labels_of("fine"))
    span_gold = read_conll(default_sample_dir() / "sample.conll", inventory)
    posts = [
        post.with_spans([perturbed_spans(rng, view, len(post.tokens), fine) for view in post.spans])
        for post in span_gold.posts
    ]
    span_pred = write_conll(span_gold.replace_posts(posts), folder / "pred.conll")

    post_gold = read_post_tsv(default_sample_dir() / "sample.tsv", inventory)
    rows = []
    for row in post_gold.rows:
        views = []
        for view in row.labels:
            labels = set(view)
            if labels and rng.random() < 0.3:
                labels.discard(rng.choice(sorted(labels)))
            if rng.random() < 0.3:
                labels.add(rng.choice(fine))
            views.append(tuple(sorted(labels)))
        rows.append(replace(row, labels=tuple(views)))
    post_pred = write_post_tsv(replace(post_gold, rows=tuple(rows)), folder / "pred.tsv")
    return {"span-fine": (Path(span_gold.path), Path(span_pred)), "post-fine": (Path(post_gold.path), Path(post_pred))}


# --- measuring -------------------------------------------------------------------------------------
def child_cpu_seconds(command: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one run of ``command`` (which must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported_modules(command: list[str], env: dict[str, str]) -> int:
    """How many modules one run of ``command`` (a Python command) imports: the lines ``-X importtime`` writes."""
    importing = [command[0], "-X", "importtime", *command[1:]]
    done = subprocess.run(importing, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = done.stderr.splitlines()
    return sum(line.startswith("import time:") and "| imported package" not in line for line in lines)


def median_cpu(command: list[str], repeat: int, env: dict[str, str]) -> float:
    return statistics.median(child_cpu_seconds(command, env) for _ in range(repeat))


def scoring_rows(files: dict[str, tuple[Path, Path]], official: Path | None) -> list[tuple[str, str, list[str]]]:
    """(label, task, command) of each scorer on each task; the official one first."""
    rows = []
    for task, (gold, pred) in files.items():
        if official is not None:
            rows.append(
                ("official scorer", task, [PYTHON, str(official), "-T", task, "-G", str(gold), "-P", str(pred)])
            )
        rows.append(
            (
                "python -m faina.evaluate",
                task,
                [PYTHON, "-m", "faina.evaluate", "-T", task, "-G", str(gold), "-P", str(pred)],
            )
        )
        rows.append(
            (
                "fallacy faina evaluate",
                task,
                [PYTHON, "-m", "fallacy", "faina", "evaluate", "-T", task, "-G", str(gold), "-P", str(pred)],
            )
        )
    return rows


def other_rows(files: dict[str, tuple[Path, Path]]) -> list[tuple[str, list[str]]]:
    gold = str(files["span-fine"][0])
    rows = [
        ("python -m faina.validate sample.conll", [PYTHON, "-m", "faina.validate", gold]),
        ("python -m faina.stats sample.conll --agreement no", [PYTHON, "-m", "faina.stats", gold, "--agreement", "no"]),
        ("python -m fallacy --help", [PYTHON, "-m", "fallacy", "--help"]),
    ]
    rows += [(f"python -m {c.module} --help", [PYTHON, "-m", c.module, "--help"]) for c in COMMANDS]
    rows.append(("python train.py --help", [PYTHON, "train.py", "--help"]))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("official", nargs="?", type=Path, help="your copy of the official Faina scorer")
    parser.add_argument("--repeat", type=int, default=5, help="runs per command; the median is shown (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the perturbed prediction (default 0)")
    parser.add_argument(
        "--max-ratio", type=float, default=2.0, help="largest allowed faina.evaluate / official CPU ratio (default 2)"
    )
    args = parser.parse_args(argv)
    if args.official is not None and not args.official.is_file():
        parser.error(f"{args.official}: no such file")
    # Bytecode caching on, as on an installed copy (pip compiles it): else every run recompiles the project's
    # modules, a cost the one-file official scorer does not have.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["OMP_NUM_THREADS"] = "1"
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        files = write_files(Path(tmp), args.seed)
        # one untimed run of each, so that every timed child finds compiled bytecode
        for _, _, command in scoring_rows(files, args.official):
            child_cpu_seconds(command, env)
        for _, command in other_rows(files):
            child_cpu_seconds(command, env)
        print(f"median CPU seconds (user + sys) of {args.repeat} runs; python {sys.version.split()[0]}")
        print(f"{'command':<52}{'task':<12}{'CPU s':>8}{'modules':>9}{'ratio':>8}")
        reference: dict[str, float] = {}
        for label, task, command in scoring_rows(files, args.official):
            seconds = median_cpu(command, args.repeat, env)
            ratio = ""
            if label == "official scorer":
                reference[task] = seconds
            elif task in reference:
                value = seconds / reference[task]
                ratio = f"{value:.2f}x"
                failed |= value > args.max_ratio
            modules = imported_modules(command, env)
            print(f"{label:<52}{task:<12}{seconds:>8.3f}{modules:>9}{ratio:>8}")
        for label, command in other_rows(files):
            seconds, modules = median_cpu(command, args.repeat, env), imported_modules(command, env)
            print(f"{label:<52}{'':<12}{seconds:>8.3f}{modules:>9}")
    if failed:
        print(f"error: faina.evaluate costs more than {args.max_ratio:g}x the official scorer", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

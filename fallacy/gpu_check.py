"""One check of a GPU machine, no hub needed: what it trains and generates with the offline models, and how.

Steps (each a ``train.py`` run of this checkout in its own process, results under the output folder):

1. ``mvmd``: MVMD span-f, one fold of the shipped sample, ``trainer=gpu`` (bf16-mixed), the demo's schedule;
2. ``mvml``: MVML post-f, one fold of the sample, ``trainer=gpu``;
2b. ``llm-encoder``: MVMD span-f over a Llama 2 7B-shaped encoder with random weights (``encoder=llama-7b-shape``:
   LoRA, gradient checkpointing, bf16, the causal mask removed), 16 optimiser steps: a 7B encoder's memory and
   step time without a download (its score means nothing);
3. ``qlora``: SmolLM2 QLoRA (bitsandbytes 4-bit base) for a few steps on Missci, then candidate generation and
   scoring;
4. ``vllm``: Missci zero-shot generation through vLLM (``llm.backend=vllm``) when vLLM is installed (else skipped).

Per step: its wall time, peak memory (GPU memory above the level before the step from ``nvidia-smi``; with
``cpu`` the child's peak RSS instead) and its score. ``cpu`` runs what can run without a GPU (no 4-bit, no vLLM),
``fast`` one batch per stage. The command is ``bash scripts/gpu_check.sh`` (docs/speed-and-scale.md).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import UserError

REPO = Path(__file__).resolve().parents[1]  # the checkout whose train.py the steps run
DEFAULT_OUT = REPO / "results" / "gpu-check"
STEPS = ("mvmd", "mvml", "llm-encoder", "qlora", "vllm")


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    overrides: list[str]
    result: str  # metrics file relative to the step's results folder
    score: str  # how to read the score from it (see read_score)
    needs: str | None = None  # a Python module the step requires
    gpu_only: list[str] = field(default_factory=list)  # overrides dropped with --cpu
    needs_gpu: bool = False  # skipped with --cpu (a 7B model on a CPU: hours and 30 GB)


@dataclass(frozen=True)
class CheckOptions:
    """What to check and how: the command's options (``scripts/gpu_check.py --help``)."""

    out: Path = DEFAULT_OUT
    missci_data: str | None = None
    only: str | None = None  # comma-separated step keys
    cpu: bool = False
    fast: bool = False
    overrides: Sequence[str] = ()  # extra train.py overrides of every step
    python: str = sys.executable


def missci_folder(given: str | None) -> Path | None:
    candidates = [
        given,
        os.environ.get("MISSCI_DATA"),
        REPO / "data" / "missci",
        REPO / "shared" / "data" / "missci",
        REPO.parent / "shared" / "data" / "missci",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "dev.missci.jsonl").is_file():
            return Path(candidate)
    return None


def plan(options: CheckOptions) -> list[Step]:
    """The steps to run, in order; an unknown step name in ``only`` is one message naming it."""
    missci = missci_folder(options.missci_data)
    missci_data = [f"task.data_dir={missci}"] if missci else []
    steps = [
        Step(
            "mvmd",
            "MVMD span-f, 1 fold (sample)",
            ["experiment=demo", "cv.folds=[0]", "name=gpu-check-span-f"],
            "gpu-check-span-f/fold0/metrics.json",
            "soft avg F1",
        ),
        Step(
            "mvml",
            "MVML post-f, 1 fold (sample)",
            ["task=post-f", "cv.folds=[0]", "name=gpu-check-post-f", "trainer.max_epochs=10", "loader.batch_size=16"],
            "gpu-check-post-f/fold0/metrics.json",
            "strict avg F1",
        ),
        Step(
            "llm-encoder",
            "MVMD span-f, 7B-shaped Llama encoder (random, LoRA), 16 steps",
            [
                "task=span-f",
                "encoder=llama-7b-shape",
                "encoder.attention=bidirectional",
                "cv.folds=[0]",
                "name=gpu-check-llm-encoder",
                "trainer.max_epochs=1",
                "trainer.max_steps=16",
                "loader.batch_size=8",
            ],
            "gpu-check-llm-encoder/fold0/metrics.json",
            "soft avg F1",
            needs_gpu=True,
        ),
        Step(
            "qlora",
            "SmolLM2 QLoRA 8 steps + candidates",
            [
                "task=missci-gen",
                "llm=smollm2",
                "cv=official",
                "name=gpu-check-qlora",
                "task.lora.max_steps=8",
                "task.lora.batch_size=2",
                "task.lora.max_train_examples=16",
                "task.max_fallacies=4",
                "task.lora.candidates.max_new_tokens=48",
                "task.premise_metrics=null",
                *missci_data,
            ],
            "gpu-check-qlora/fold0/metrics.json",
            "p@1",
            gpu_only=["llm.load_in_4bit=true"],
        ),
        Step(
            "vllm",
            "Missci zero-shot, vLLM backend",
            [
                "task=missci-gen",
                "llm=smollm2",
                "mode=zero-shot",
                "llm.backend=vllm",
                "task.split=dev",
                "task.max_arguments=3",
                "task.premise_metrics=null",
                "name=gpu-check-vllm",
                *missci_data,
            ],
            "gpu-check-vllm/metrics-dev.json",
            "p@1",
            needs="vllm",
        ),
    ]
    wanted = set(options.only.split(",")) if options.only else None
    unknown = (wanted or set()) - set(STEPS)
    if unknown:
        raise UserError(f"unknown step(s) {sorted(unknown)}", fix=f"choose from {', '.join(STEPS)}")
    return [s for s in steps if wanted is None or s.key in wanted]


def command(step: Step, options: CheckOptions, out: Path) -> list[str]:
    """The ``train.py`` command line of ``step``."""
    hardware = ["trainer=default"] if options.cpu else ["trainer=gpu", *step.gpu_only]
    fast_dev_run = {"mvmd", "mvml", "llm-encoder"}
    quick = ["++trainer.fast_dev_run=true", "callbacks=none"] if options.fast and step.key in fast_dev_run else []
    if options.fast and step.key == "qlora":
        quick = [
            "task.lora.max_steps=1",
            "task.lora.max_train_examples=2",
            "task.max_fallacies=1",
            "task.lora.candidates.max_new_tokens=4",
        ]
    return [
        options.python,
        "train.py",
        *step.overrides,
        *hardware,
        *quick,
        f"paths.results_dir={out}",
        "logger=csv",
        *options.overrides,
    ]


def skip_reason(step: Step, options: CheckOptions) -> str | None:
    """Why ``step`` cannot run here (``None``: it can)."""
    if step.needs_gpu and options.cpu:
        return "needs a GPU"
    if step.needs and (options.cpu or importlib.util.find_spec(step.needs) is None):
        return "needs a GPU" if options.cpu else f"{step.needs} not installed"
    return None


def gpu_memory_mb() -> float | None:
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        text = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
        return sum(float(line) for line in text.split() if line.strip())
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def run_step(cmd: list[str], log: Path, cpu: bool) -> tuple[int, float, str]:
    """Exit status, wall seconds and peak memory of one step (GPU memory above the start level, or RSS)."""
    baseline = None if cpu else gpu_memory_mb()
    peak = [baseline]
    done = threading.Event()

    def poll():
        while not done.wait(0.5):
            used = gpu_memory_mb()
            if used is not None and (peak[0] is None or used > peak[0]):
                peak[0] = used

    watcher = threading.Thread(target=poll, daemon=True)
    if baseline is not None:
        watcher.start()
    start = time.perf_counter()
    with open(log, "w") as handle:
        process = subprocess.Popen(cmd, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    done.set()
    if baseline is not None:
        memory = f"{(peak[0] - baseline) / 1024:.2f} GiB GPU"
    else:
        memory = f"{usage.ru_maxrss / 2**20:.2f} GiB RSS"  # ru_maxrss is in kilobytes on Linux
    return process.returncode, seconds, memory


def read_score(path: Path, score: str) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    test = data.get("test", data)
    if score.endswith("avg F1"):
        mode = score.split()[0]
        return f"{score} {test[mode]['avg']['f1']:.3f}"
    for key in ("p@1", "test/p@1"):
        for holder in (test, data, data.get("metrics", {})):
            if isinstance(holder, dict) and key in holder:
                return f"P@1 {float(holder[key]):.3f}"
    return "scored (" + ", ".join(sorted(test)[:4]) + ")"


def run_checks(options: CheckOptions) -> tuple[list[tuple[str, ...]], bool]:
    """Run every planned step; returns the table's rows (step, status, time, peak memory, score) and whether any
    step failed. Without a GPU (and without ``cpu``) one message says to use ``--cpu``."""
    steps = plan(options)
    out = Path(options.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not options.cpu and gpu_memory_mb() is None:
        raise UserError("no GPU found (nvidia-smi missing or failing)", fix="use --cpu to check without one")
    rows, failed = [], False
    for step in steps:
        reason = skip_reason(step, options)
        if reason is not None:
            rows.append((step.title, "skipped", "-", "-", reason))
            continue
        log = out / f"{step.key}.log"
        status, seconds, memory = run_step(command(step, options, out), log, options.cpu)
        if status != 0:
            failed = True
            rows.append((step.title, f"FAILED ({status})", f"{seconds:.0f} s", memory, f"see {log}"))
            continue
        try:
            score = read_score(out / step.result, step.score)
        except (OSError, ValueError, KeyError, TypeError) as err:
            failed = True
            score = f"no score: {type(err).__name__} {err}"
        rows.append(
            (step.title, "ok" if not score.startswith("no score") else "FAILED", f"{seconds:.0f} s", memory, score)
        )
    return rows, failed

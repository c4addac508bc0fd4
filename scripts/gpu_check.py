"""One check of a GPU machine, no hub needed: trains and generates with the offline models, prints one table.

Steps (each a ``train.py`` run in its own process, results under ``--out``):
1. MVMD span-f, one fold of the shipped sample, ``trainer=gpu`` (bf16-mixed), the demo's schedule;
2. MVML post-f, one fold of the sample, ``trainer=gpu``;
3. SmolLM2 QLoRA (bitsandbytes 4-bit base) for a few steps on Missci, then candidate generation and scoring;
4. Missci zero-shot generation through vLLM (``llm.backend=vllm``) when vLLM is installed (else skipped).

The table gives per step its wall time, peak GPU memory (``nvidia-smi``, above the level before the step;
with ``--cpu`` the child's peak RSS instead) and its score. The exit status is 1 when any step failed.
``--cpu`` runs what can run without a GPU (no 4-bit, no vLLM), ``--fast`` one batch per stage, and
``--dry-run`` only prints the commands.

    bash scripts/gpu_check.sh [--out DIR] [--missci-data DIR] [--only mvmd,mvml,qlora,vllm] [--cpu] [--fast]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Step:
    key: str
    title: str
    overrides: list[str]
    result: str  # metrics file relative to the step's results folder
    score: str  # how to read the score from it (see read_score)
    needs: str | None = None  # a Python module the step requires
    gpu_only: list[str] = field(default_factory=list)  # overrides dropped with --cpu


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


def plan(args) -> list[Step]:
    missci = missci_folder(args.missci_data)
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
    wanted = set(args.only.split(",")) if args.only else None
    unknown = (wanted or set()) - {s.key for s in steps}
    if unknown:
        print(f"error: unknown step(s) {sorted(unknown)}; choose from mvmd, mvml, qlora, vllm", file=sys.stderr)
        raise SystemExit(2)
    return [s for s in steps if wanted is None or s.key in wanted]


def command(step: Step, args, out: Path) -> list[str]:
    hardware = ["trainer=default"] if args.cpu else ["trainer=gpu", *step.gpu_only]
    quick = ["++trainer.fast_dev_run=true", "callbacks=none"] if args.fast and step.key in {"mvmd", "mvml"} else []
    if args.fast and step.key == "qlora":
        quick = [
            "task.lora.max_steps=1",
            "task.lora.max_train_examples=2",
            "task.max_fallacies=1",
            "task.lora.candidates.max_new_tokens=4",
        ]
    return [
        args.python,
        "train.py",
        *step.overrides,
        *hardware,
        *quick,
        f"paths.results_dir={out}",
        "logger=csv",
        *args.set,
    ]


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


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="scripts/gpu_check.sh",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=REPO / "results" / "gpu-check", help="results folder")
    parser.add_argument(
        "--missci-data",
        default=None,
        help="folder with dev/test.missci.jsonl (default: $MISSCI_DATA, data/missci, shared/data/missci)",
    )
    parser.add_argument("--only", default=None, help="comma-separated steps: mvmd, mvml, qlora, vllm")
    parser.add_argument("--cpu", action="store_true", help="no GPU: trainer=default, no 4-bit, vLLM skipped")
    parser.add_argument("--fast", action="store_true", help="one batch per stage (a smoke test of this script)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="extra override for every step (repeatable)"
    )
    parser.add_argument("--python", default=sys.executable, help="Python that runs train.py")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    steps = plan(args)
    out = args.out.resolve()
    rows, failed = [], False
    if not args.dry_run:
        out.mkdir(parents=True, exist_ok=True)
        if not args.cpu and gpu_memory_mb() is None:
            print(
                "error: no GPU found (nvidia-smi missing or failing); use --cpu to check without one", file=sys.stderr
            )
            return 2
    for step in steps:
        cmd = command(step, args, out)
        if step.needs and (args.cpu or importlib.util.find_spec(step.needs) is None):
            reason = "needs a GPU" if args.cpu else f"{step.needs} not installed"
            rows.append((step.title, "skipped", "-", "-", reason))
            if args.dry_run:
                print(f"# skipped ({reason}): {shlex.join(cmd)}")
            continue
        if args.dry_run:
            print(shlex.join(cmd))
            continue
        log = out / f"{step.key}.log"
        status, seconds, memory = run_step(cmd, log, args.cpu)
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
    if args.dry_run:
        return 0
    device = "CPU" if args.cpu else "GPU"
    print(f"\ngpu_check ({device}{', fast' if args.fast else ''}), results in {out}")
    print("| step | status | time | peak memory | score |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

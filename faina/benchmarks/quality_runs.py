"""The quality benchmark's trained runs: the corpus it trains on, the recipes, the training lengths, and one
``train.py`` run per seed.

Every run trains through ``train.py ... data=custom cv=official`` of this checkout exactly as a user would, on the
corpus's ``train-dev`` file (the dev split drawn from the seed), and predicts its ``test`` file. A finished run
(its ``results.json``) is reused, so a grid can be stopped and restarted (docs/benchmark-quality.md). How long a run
trains is a measured option of its own (``Length``): by default the task's own ``trainer.max_epochs`` (what
``train.py task=...`` trains), or any other epoch count, each with or without early stopping.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from common.errors import UserError

REPO = Path(__file__).resolve().parents[2]  # the checkout whose train.py the runs go through
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "toxic-spans"
DEFAULT_OUT = REPO / "results" / "benchmark-quality"
TASKS = {"span-f": ("span", "span-fine", "conll"), "post-f": ("post", "post-fine", "tsv")}
RECIPES = {
    "views": [],
    "union": ["data.targets=union"],
    "intersection": ["data.targets=intersection"],
    "majority": ["data.targets=majority"],
    "soft": ["data.targets=soft"],
    # the mean of the weights at the end of the last 3 epochs (common/weight_averaging.py): the same training as
    # the recipe without it (averaging draws nothing, changes no gradient), so seed by seed a paired comparison
    "views-avg3": ["checkpoint.average_last=3"],
    "majority-avg3": ["data.targets=majority", "checkpoint.average_last=3"],
}
# recipes trained in one task=multi run (docs/multitask.md): the task's entry (ENTRY_OF) is the target, whose dev F1
# selects the checkpoint, and its head (fold0/<entry>) is the model the benchmark scores. "joint": the task together
# with the other level of the same corpus (the span and the post labels of the same posts); the "aux-" recipes: span-f
# with the synthetic sample's span-f as an auxiliary corpus (experiment=multi-two-corpora, its own head, loss weight
# 0.5), its batches drawn in proportion to the entries' sizes or first (one epoch of the sample, then the target)
JOINT_RECIPES = {
    "joint": [],
    "aux-proportional": ["task.sampling.strategy=proportional"],
    "aux-sequential": ["task.sampling.strategy=sequential", "task.sampling.auxiliary_epochs=1"],
}
AUXILIARY_RECIPES = {"aux-proportional", "aux-sequential"}
AUXILIARY_TASKS = {"span-f"}  # the sample's entry of experiment=multi-two-corpora is a span entry
RECIPES.update(JOINT_RECIPES)
ENTRY_OF = {"span-f": "span_f", "post-f": "post_f"}  # the entry names of conf/task/multi.yaml
AUXILIARY_ENTRY = "second"  # the auxiliary corpus's entry in conf/experiment/multi-two-corpora.yaml
TIME_FILE = "benchmark-train.json"


@dataclass(frozen=True)
class Length:
    """How long a run trains: ``epochs`` (``trainer.max_epochs``), stopped earlier when its dev F1 has not improved
    for ``patience`` epochs (``early_stopping.patience``; ``None``: every epoch trained)."""

    epochs: int
    patience: int | None = None

    @property
    def tag(self) -> str:
        """In run names: ``e20``, ``e20p5`` (a fixed length keeps the names runs had before lengths were options)."""
        return f"e{self.epochs}" + (f"p{self.patience}" if self.patience else "")

    @property
    def label(self) -> str:
        """In the report: ``20 epochs``, ``≤ 20 epochs, patience 5``."""
        epochs = f"{self.epochs} epoch{'s' * (self.epochs != 1)}"
        return f"≤ {epochs}, patience {self.patience}" if self.patience else epochs

    def overrides(self) -> list[str]:
        return [
            f"trainer.max_epochs={self.epochs}",
            *([f"early_stopping.patience={self.patience}"] * bool(self.patience)),
        ]


def default_epochs(task: str) -> int:
    """The task's own ``trainer.max_epochs`` (``conf/task/<task>.yaml``): the length ``train.py task=<task>`` trains."""
    from omegaconf import OmegaConf

    return int(OmegaConf.load(REPO / "conf" / "task" / f"{task}.yaml").trainer.max_epochs)


def default_length(task: str) -> Length:
    return Length(default_epochs(task))


def lengths_of(task: str, epochs: Sequence[int] | None, patiences: Sequence[int]) -> list[Length]:
    """Every (epochs, patience) pair asked for: ``epochs`` ``None`` is the task's own; a patience of 0 is none."""
    counts = list(epochs) if epochs else [default_epochs(task)]
    if any(count < 1 for count in counts) or any(patience < 0 for patience in patiences):
        raise UserError(
            f"a training length needs epochs ≥ 1 and a patience ≥ 0 (0: none), not {counts} / {list(patiences)}",
            fix="pass e.g. --epochs 20 --patience 0 5",
        )
    return [Length(count, patience or None) for count in counts for patience in patiences]


def epochs_trained(folder: Path, length: Length) -> int | None:
    """How many epochs the run's model trained: its fold's record when it could stop early, else the length's."""
    if not length.patience:
        return length.epochs
    metrics = folder / "fold0" / "metrics.json"
    if not metrics.is_file():
        return None
    return json.loads(metrics.read_text()).get("early_stopping", {}).get("epochs_trained")  # a joint run's too


QUICK_POSTS = {"train-dev": 48, "test": 24}  # --quick: the tests' tiny grid, never for a table
QUICK_EPOCHS = 1


def prepare_corpus(corpus_dir: Path, out: Path, quick: bool) -> dict[str, Path]:
    """The span files (subsets with ``quick``) and the post-level TSVs derived from them, under ``out/corpus``."""
    from faina.data.levels import subset
    from faina.formats.any_file import read_any, write_any
    from faina.formats.labels import LabelInventory
    from faina.formats.tsv import post_corpus_from_spans

    labels = corpus_dir / "labels.yaml"
    files = {"labels": labels}
    for name in QUICK_POSTS:
        if not (corpus_dir / f"{name}.conll").is_file():
            raise UserError(
                f"the corpus has no {name}.conll",
                path=str(corpus_dir),
                fix="give --corpus a folder with train-dev.conll, test.conll and labels.yaml (Faina layout)",
            )
    if not labels.is_file():
        raise UserError("the corpus has no labels.yaml", path=str(corpus_dir), fix="add its label inventory")
    inventory = LabelInventory.load(labels).chosen_with("--corpus (its labels.yaml)")
    folder = out / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    for name, quick_posts in QUICK_POSTS.items():
        source = corpus_dir / f"{name}.conll"
        spans = read_any(source, inventory, level="span")
        if quick:
            spans = subset(spans, range(min(quick_posts, len(spans.posts))))
            source = write_any(spans, folder / f"{name}.conll")
        files[f"{name}.conll"] = source
        tsv = folder / f"{name}.tsv"
        if not tsv.is_file() or quick:
            write_any(post_corpus_from_spans(spans), tsv)
        files[f"{name}.tsv"] = tsv
    return files


def run_name(task: str, recipe: str, length: Length, seed: int, overrides: Sequence[str] = ()) -> str:
    """``span-f-views-e20-s1`` (``e20p5-``: with early stopping); with overrides, a digest of them before the seed
    (``…-e20-o3f2a9c1d-s1``), so a grid over another setting never reuses this one's runs (the overrides are in the
    report and each run's config)."""
    return f"{task}-{recipe}-{length.tag}{overrides_tag(overrides)}-s{seed}"


def overrides_tag(overrides: Sequence[str]) -> str:
    if not overrides:
        return ""
    return "-o" + hashlib.sha1("\n".join(overrides).encode()).hexdigest()[:8]


def model_dir(folder: Path, task: str, recipe: str) -> Path:
    """The saved model of a run's fold: ``fold0``, or for a joint recipe its task's head, ``fold0/<entry>``."""
    return folder / "fold0" / ENTRY_OF[task] if recipe in JOINT_RECIPES else folder / "fold0"


def data_overrides(task: str, recipe: str, files) -> list[str]:
    """The task and data of a run: ``task=<task> data=custom`` with the corpus's files; for the joint recipe
    ``task=multi`` with both entries on the corpus's span file (the post entry derives its labels from the spans)
    and each entry's test file, the task's entry the target; for an auxiliary recipe
    ``experiment=multi-two-corpora`` with the corpus as the target and the synthetic sample as the second corpus."""
    ext = TASKS[task][2]
    if recipe not in JOINT_RECIPES:
        return [
            f"task={task}",
            "data=custom",
            f"data.train_path={files[f'train-dev.{ext}']}",
            f"data.test_path={files[f'test.{ext}']}",
            f"data.labels={files['labels']}",
        ]
    if recipe in AUXILIARY_RECIPES:
        check_auxiliary_task(task, recipe)
        return [
            "experiment=multi-two-corpora",
            "data.name=custom",
            *entry_data(ENTRY_OF[task], files, "conll", target=True),
            f"task.entries.{AUXILIARY_ENTRY}.data.train_path={sample_conll()}",
        ]
    settings = ["task=multi", "data.name=custom"]
    for other, entry in ENTRY_OF.items():
        settings += entry_data(entry, files, TASKS[other][2], target=other == task)
    return settings


def entry_data(entry: str, files, test_ext: str, target: bool) -> list[str]:
    """An entry on the corpus: its span file to train on (a post entry derives its labels), its test file."""
    prefix = f"task.entries.{entry}"
    return [
        f"{prefix}.data.train_path={files['train-dev.conll']}",
        f"{prefix}.data.test_path={files[f'test.{test_ext}']}",
        f"{prefix}.data.labels={files['labels']}",
        f"{prefix}.target={str(target).lower()}",
    ]


def check_grid(tasks: Sequence[str], recipes: Sequence[str]) -> None:
    """Every (task, recipe) of a grid can be trained, checked before the first run trains."""
    for task in tasks:
        for recipe in set(recipes) & AUXILIARY_RECIPES:
            check_auxiliary_task(task, recipe)


def check_auxiliary_task(task: str, recipe: str) -> None:
    if task not in AUXILIARY_TASKS:
        raise UserError(
            f"the recipe {recipe} trains span-f with the synthetic sample as an auxiliary span corpus, not {task}",
            fix=f"run the aux- recipes with --tasks {' '.join(sorted(AUXILIARY_TASKS))} (other recipes of post-f apart)",
        )


def sample_conll() -> Path:
    """The synthetic sample's span file, the auxiliary corpus of the ``aux-`` recipes."""
    from faina.data.synthetic import default_sample_dir

    return default_sample_dir() / "sample.conll"


def train_command(task, recipe, length: Length, seed, files, runs: Path, overrides: Sequence[str]) -> list[str]:
    return [
        sys.executable,
        "train.py",
        *data_overrides(task, recipe, files),
        "cv=official",
        f"seed={seed}",
        *length.overrides(),
        f"paths.results_dir={runs}",
        f"name={run_name(task, recipe, length, seed, overrides)}",
        "logger=csv",
        *RECIPES[recipe],
        *overrides,
    ]


def check_checkout() -> None:
    """The runs go through ``train.py`` and ``conf/`` of a checkout, which an installed wheel does not have."""
    if not (REPO / "train.py").is_file() or not (REPO / "conf").is_dir():
        raise UserError(
            "the quality benchmark trains through train.py and conf/ of a checkout, and this installation has none",
            path=REPO,
            fix="run it from a clone of the repository (bash scripts/setup.sh installs it in place)",
        )


def train(task, recipe, length: Length, seed, files, runs: Path, overrides, log: Callable[[str], None]) -> Path:
    """The run's folder, trained now unless a finished one is there (``results.json``)."""
    folder = runs / run_name(task, recipe, length, seed, overrides)
    if (folder / "results.json").is_file():
        return folder
    check_checkout()
    command = train_command(task, recipe, length, seed, files, runs, overrides)
    log(f"training {folder.name}")
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.log", "w", encoding="utf-8") as output:
        done = subprocess.run(command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise UserError(
            f"training {folder.name} failed (exit status {done.returncode})",
            path=str(folder.parent / f"{folder.name}.log"),
            fix="read the log; rerun this script to retry (finished runs are reused)",
        )
    if not (folder / "results.json").is_file():  # an exit status 0 without results is no finished run
        raise UserError(
            f"training {folder.name} ended without its results.json",
            path=str(folder.parent / f"{folder.name}.log"),
            fix="read the log; rerun this script to resume it (finished runs are reused)",
        )
    seconds = time.perf_counter() - started
    (folder / TIME_FILE).write_text(json.dumps({"seconds": round(seconds, 1), "command": command[1:]}, indent=2))
    return folder


def train_seconds(folder: Path) -> float | None:
    """Wall time of the run's training (written by ``train``); for a run trained by hand, from its files'
    times: the first Hydra folder's start to the fold's metrics file."""
    if (folder / TIME_FILE).is_file():
        return json.loads((folder / TIME_FILE).read_text())["seconds"]
    starts = sorted((folder / "hydra").glob("*"))
    metrics = folder / "fold0" / "metrics.json"
    if not starts or not metrics.is_file():
        return None
    started = time.mktime(time.strptime(starts[0].name, "%Y-%m-%d_%H-%M-%S"))
    return round(metrics.stat().st_mtime - started, 1)


def recipe_targets(recipe: str) -> str:
    """The ``data.targets`` a recipe trains on (``views`` unless it sets one)."""
    return next((o.split("=", 1)[1] for o in RECIPES[recipe] if o.startswith("data.targets=")), "views")


def dev_corpus_of(task: str, files, recipe: str, seed: int):
    """The run's own dev posts (the split ``cv=official`` drew from the seed) with every annotator view (what its
    rules are fitted against), and the run's task data."""
    from omegaconf import OmegaConf

    from faina.data.levels import subset
    from faina.training.run_entries import make_splits

    _, _, ext = TASKS[task]
    paths = [str(files[f"train-dev.{ext}"]), str(files[f"test.{ext}"]), str(files["labels"])]
    stamps = tuple(os.stat(path).st_mtime_ns for path in paths)
    data = _task_data(task, *paths, recipe_targets(recipe), stamps)
    cfg = OmegaConf.create({"cv": {"name": "official", "dev_fraction": 0.2, "num_folds": 1}, "seed": seed})
    split = make_splits(cfg, data)[0]
    return subset(data.gold_corpus, split.dev), data


@functools.lru_cache(maxsize=8)
def _task_data(task: str, train_path: str, test_path: str, labels_path: str, targets: str, stamps: tuple):
    """The task data a recipe's runs train on, read once per (task, corpus, targets): every member of an ensemble and
    every seed of a recipe share it (only the dev split differs). ``stamps``: the files' modification times, in the
    cache key, so a rewritten file is read afresh."""
    from faina.data.task_data import load_task_data

    level = TASKS[task][0]
    return load_task_data(
        train_path, test_path, level, "fine", labels_path, targets=targets, labels_option="--corpus (its labels.yaml)"
    )

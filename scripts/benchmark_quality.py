"""Recipes, decision rules and ensembles side by side on a real corpus, over several seeds (issue 21).

    python scripts/benchmark_quality.py [--corpus DIR] [--out DIR] [--tasks span-f post-f]
        [--recipes views majority ...] [--seeds 1 2 3] [--epochs 6] [--ensembles 3 5] [--report-only]
        [--override KEY=VALUE ...] [--quick]

Why: an option that beats the paper's recipe on the synthetic sample may lose on real data (the per-decoder O bias
did: issue 21). This measures every option the docs may recommend on a real Faina-format corpus — by default the
toxic-spans development corpus (``../shared/data/toxic-spans/``: three annotator views, CC0; not fallacy data) —
training on ``train-dev.conll`` exactly as a user would (``train.py ... cv=official``, the dev split drawn from
the seed) and reporting on ``test.conll``.

What is measured:
- **trained recipes** (``--recipes``): ``views`` (the default: one head/decoder set per view), ``union``,
  ``intersection``, ``majority`` and ``soft`` (``data.targets``), and ``views-avg3`` / ``majority-avg3`` (the
  mean of the last 3 epochs' weights, ``checkpoint.average_last=3``), each at ``--epochs``, once per seed; any
  ``--override`` applies to every run and gets runs of its own (a digest of the overrides in the run names);
- **decision rules**, fitted after training on the run's own dev split and applied to the same model, so a rule
  and the untuned default are compared on one trained model (no extra training): span-f the CRF decode and the
  O-bias rules of ``models/decision_rules.py`` (``own``: the original ``o_bias=tuned``; ``shared``; ``shrunk``;
  each also with held-out ``confirm``), post-f τ = 0.7 and the threshold rules (``own``, ``shared``, ``shrunk``,
  a floor, ``confirm``); always against every annotator view of dev, as test is scored (a one-view model of an
  aggregated or soft recipe meets each view once: ``models.decision_rules.span_observations``);
- **ensembles** of the first K seed models of a recipe (K from ``--ensembles``; free once the seeds exist).

Each run's test figures: strict / soft (span-f) / exact (span) F1 with P and R, averaged over the gold views with
``faina.evaluate``'s scorer (an aggregated or soft model's single prediction against every view, ``-O``), and the
soft-label measures (cross-entropy, Manhattan, ECE, ``faina.evaluate --soft``) of its probabilities. The report
gives mean ± std over seeds per (task, recipe, rule), the train time, and marks a difference to the default as a
gain or loss only when it exceeds the larger of the two seeds' spreads; a decision rule also gets its paired
difference to the fixed rule of the same trained models, and a trained recipe its paired difference to the
default recipe's model of the same seed (same dev split and initialisation) (mean ± std, and on how many seeds it
wins). Output under ``--out``: ``runs/`` (one
train.py experiment per task, recipe, epochs and seed, reused when finished: the grid is resumable), ``report.json``,
``report.md`` and ``report.png``. ``--quick`` (tests only, never for a table): 48 training and 24 test posts,
one epoch, seeds 1 2.

This is a measurement, not a test: the default grid trains tasks × recipes × seeds models (about 7 minutes each
for span-f at 6 epochs with MiniLM on 2 CPU cores).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common.cli import command_parser  # noqa: E402
from common.errors import UserError, exit_on_user_error  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "toxic-spans"
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
BASELINE = {"span": "crf", "post": "tau0.7"}
# rule name -> fit_o_bias / fit_thresholds arguments (None: the fixed rule the model was trained with)
SPAN_RULES = {
    "crf": None,
    "own": {"scope": "own", "min_spans": 3},
    "own-min30": {"scope": "own", "min_spans": 30},
    "shared": {"scope": "shared", "min_spans": 3},
    "shrunk": {"scope": "shrunk", "min_spans": 3, "shrinkage": 20.0},
    "own-confirm": {"scope": "own", "min_spans": 3, "confirm": True},
    "shared-confirm": {"scope": "shared", "min_spans": 3, "confirm": True},
    "shrunk-confirm": {"scope": "shrunk", "min_spans": 3, "shrinkage": 20.0, "confirm": True},
}
POST_RULES = {
    "tau0.7": None,
    "own": {"scope": "own", "min_positives": 3},
    "own-floor0.3": {"scope": "own", "min_positives": 3, "floor": 0.3},
    "shared": {"scope": "shared", "min_positives": 3},
    "shrunk": {"scope": "shrunk", "min_positives": 3, "shrinkage": 20.0},
    "own-confirm": {"scope": "own", "min_positives": 3, "confirm": True},
    "shared-confirm": {"scope": "shared", "min_positives": 3, "confirm": True},
    "shrunk-confirm": {"scope": "shrunk", "min_positives": 3, "shrinkage": 20.0, "confirm": True},
}
SCORES_FILE = "benchmark-scores.json"
TIME_FILE = "benchmark-train.json"
# bump when what a run's scores hold changes: older score files are recomputed. 2: the rules of a one-view model
# (data.targets soft, union, majority, intersection) are fitted against every gold view of dev, as test is scored;
# 3: with their evidence settings counted per view. A `views` recipe's older scores were fitted as version 3 fits
# them and stay valid (``_cached_scores``)
SCORES_VERSION = 3


# --- corpus ------------------------------------------------------------------------------------------
def prepare_corpus(corpus_dir: Path, out: Path, quick: bool) -> dict[str, Path]:
    """The span files (subsets with ``quick``) and the post-level TSVs derived from them, under ``out/corpus``."""
    from faina.data.levels import subset
    from faina.formats.conll import read_conll, write_conll
    from faina.formats.labels import LabelInventory
    from faina.formats.tsv import post_corpus_from_spans, write_post_tsv

    labels = corpus_dir / "labels.yaml"
    files = {"labels": labels}
    for name in ("train-dev", "test"):
        if not (corpus_dir / f"{name}.conll").is_file():
            raise UserError(
                f"the corpus has no {name}.conll",
                path=str(corpus_dir),
                fix="give --corpus a folder with train-dev.conll, test.conll and labels.yaml (Faina layout)",
            )
    if not labels.is_file():
        raise UserError("the corpus has no labels.yaml", path=str(corpus_dir), fix="add its label inventory")
    inventory = LabelInventory.load(labels)
    folder = out / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    for name, quick_posts in (("train-dev", 48), ("test", 24)):
        source = corpus_dir / f"{name}.conll"
        spans = read_conll(source, inventory)
        if quick:
            spans = subset(spans, range(min(quick_posts, len(spans.posts))))
            source = write_conll(spans, folder / f"{name}.conll")
        files[f"{name}.conll"] = source
        tsv = folder / f"{name}.tsv"
        if not tsv.is_file() or quick:
            write_post_tsv(post_corpus_from_spans(spans), tsv)
        files[f"{name}.tsv"] = tsv
    return files


# --- training ----------------------------------------------------------------------------------------
def run_name(task: str, recipe: str, epochs: int, seed: int, overrides: Sequence[str] = ()) -> str:
    """``span-f-views-e6-s1``; with ``--override``s, a digest of them before the seed (``…-e6-o3f2a9c1d-s1``), so
    a grid over another setting never reuses this one's runs (the overrides are in the report and each run's
    config)."""
    return f"{task}-{recipe}-e{epochs}{overrides_tag(overrides)}-s{seed}"


def overrides_tag(overrides: Sequence[str]) -> str:
    if not overrides:
        return ""
    return "-o" + hashlib.sha1("\n".join(overrides).encode()).hexdigest()[:8]


def train_command(task, recipe, epochs, seed, files, runs: Path, overrides: Sequence[str]) -> list[str]:
    ext = TASKS[task][2]
    return [
        sys.executable,
        "train.py",
        f"task={task}",
        "data=custom",
        f"data.train_path={files[f'train-dev.{ext}']}",
        f"data.test_path={files[f'test.{ext}']}",
        f"data.labels={files['labels']}",
        "cv=official",
        f"seed={seed}",
        f"trainer.max_epochs={epochs}",
        f"paths.results_dir={runs}",
        f"name={run_name(task, recipe, epochs, seed, overrides)}",
        "logger=csv",
        *RECIPES[recipe],
        *overrides,
    ]


def train(task, recipe, epochs, seed, files, runs: Path, overrides, log) -> Path:
    """The run's folder, trained now unless a finished one is there (``results.json``)."""
    folder = runs / run_name(task, recipe, epochs, seed, overrides)
    if (folder / "results.json").is_file():
        return folder
    command = train_command(task, recipe, epochs, seed, files, runs, overrides)
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


# --- scoring one model (or ensemble) -----------------------------------------------------------------
class Outputs:
    """One model's raw outputs on a split: per batch the emissions (span) or probabilities (post), the gold
    targets of every view of ``corpus`` when the split is labelled, the word mask, the posts' indices and which
    views annotated each post (``None``: all)."""

    def __init__(self, model, level: str, corpus, tokenizer, labels, batch_size: int = 32):
        import torch

        from faina.data.datamodule import FainaDataModule
        from faina.data.folds import FoldSplit
        from faina.data.levels import LEVELS

        features = LEVELS[level].encode(corpus, tokenizer, labels, corpus.num_views)
        module = FainaDataModule(
            features, FoldSplit(0, (), (), tuple(range(len(features)))), tokenizer.pad_token_id, batch_size
        )
        self.level, self.num_views, self.batches = level, corpus.num_views, []
        model.eval()
        with torch.no_grad():  # not inference_mode: the CRF's marginals later mix these with its parameters
            for batch in module.test_dataloader():
                if level == "span":
                    scores = _span_scores(model, batch)
                    target = batch.get("tags")
                else:
                    scores = _post_probabilities(model, batch)
                    target = batch.get("labels")
                self.batches.append((scores, target, batch["word_mask"], batch["post_index"], batch.get("annotated")))


def _span_scores(model, batch):
    if hasattr(model, "members"):  # an ensemble: its averaged emissions (members' decision biases are zero)
        return model.decision_emissions(batch)
    return model.emissions(batch)


def _post_probabilities(model, batch):
    import torch

    return model.probabilities(batch) if hasattr(model, "members") else torch.sigmoid(model(batch))


def crf_of(model):
    return model.crf if hasattr(model, "members") else model.decoders.crf


def span_outputs(model, outputs: Outputs, bias):
    """``predict_step``-like dicts: tags decoded with the O bias ``bias`` ``[D]`` (None: none) and marginals."""
    from models.decision_rules import with_o_bias

    crf = crf_of(model)
    result = []
    for emissions, _, mask, index, _ in outputs.batches:
        shifted = emissions if bias is None else with_o_bias(emissions, bias)
        result.append(
            {
                "post_index": index,
                "tags": crf.viterbi(shifted, mask),
                "num_words": mask.sum(-1),
                "inside": crf.inside_probabilities(emissions.float(), mask.bool()),
            }
        )
    return result


def post_outputs(outputs: Outputs, thresholds):
    result = []
    for probabilities, _, _, index, _ in outputs.batches:
        result.append({"post_index": index, "probabilities": probabilities, "predicted": probabilities >= thresholds})
    return result


def fit_rule(model, level: str, dev: Outputs, rule: dict | None, num_views: int):
    """The O bias ``[D]`` / thresholds ``[V, C]`` a rule fits on dev (None for the span default) and its info: against
    every gold view of dev, a one-view model's answer once per view (``models.decision_rules.span_observations``,
    ``post_observations``), its evidence settings counted per view (``views_per_item``): what ``train.py`` fits
    with ``o_bias=tuned`` / ``threshold=tuned``."""
    import torch

    from models.decision_rules import (
        SpanDev,
        fit_o_bias,
        fit_thresholds,
        post_observations,
        span_observations,
        views_per_model_view,
    )

    arguments = dict(rule or {})
    per_view = views_per_model_view(dev.num_views, num_views)
    if level == "span":
        if rule is None:
            return None, {}
        dev_batches = [
            span_observations(emissions, tags, mask, annotated, num_views)
            for emissions, tags, mask, _, annotated in dev.batches
        ]
        min_spans = arguments.pop("min_spans")
        return fit_o_bias(
            SpanDev(crf_of(model), dev_batches), num_views, min_spans, views_per_item=per_view, **arguments
        )
    fixed = 0.7
    if rule is None:
        return torch.tensor(fixed), {}
    observed = [post_observations(p.float(), t.float(), a, num_views) for p, t, _, _, a in dev.batches]
    probabilities = torch.cat([p for p, _ in observed])
    targets = torch.cat([t for _, t in observed])
    min_positives = arguments.pop("min_positives")
    return fit_thresholds(probabilities, targets, fixed, min_positives, views_per_item=per_view, **arguments)


def score_model(
    model, meta, level, eval_task, gold_test, dev_corpus, test_corpus, prior_corpus, folder: Path, decisions=None
):
    """Test figures of ``model`` under every rule: fitted on ``dev_corpus``, or given as ``decisions`` (rule name
    -> (decision, info), an ensemble's); neither: the default rule only."""
    import torch

    with torch.no_grad():
        return _score_rules(
            model, meta, level, eval_task, gold_test, dev_corpus, test_corpus, prior_corpus, folder, decisions
        )


def _score_rules(
    model, meta, level, eval_task, gold_test, dev_corpus, test_corpus, prior_corpus, folder: Path, decisions=None
):
    from faina.data.levels import LEVELS
    from faina.scoring.official import evaluate_files
    from faina.scoring.soft_scores import soft_scores
    from faina.serving.fold_model import load_tokenizer
    from faina.serving.probabilities import probabilities_from_outputs

    tokenizer = load_tokenizer(meta["encoder"]["name_or_path"])
    labels, num_views = meta["labels"], meta["num_views"]
    test = Outputs(model, level, test_corpus, tokenizer, labels)
    dev = Outputs(model, level, dev_corpus, tokenizer, labels) if dev_corpus is not None else None
    rules = SPAN_RULES if level == "span" else POST_RULES
    one_pred = num_views == 1 and gold_test.num_views > 1
    indices = range(len(test_corpus.posts if level == "span" else test_corpus.rows))
    folder.mkdir(parents=True, exist_ok=True)
    scores = {}
    for name, rule in rules.items():
        if decisions is not None and name in decisions:
            decision, info = decisions[name]
        elif rule is not None and dev is None:
            continue
        elif dev is not None:
            decision, info = fit_rule(model, level, dev, rule, num_views)
        else:
            decision, info = _default(level), {}
        outputs = span_outputs(model, test, decision) if level == "span" else post_outputs(test, decision)
        predicted = LEVELS[level].records(test_corpus, indices, outputs, labels, num_views)
        path = LEVELS[level].write(predicted, folder / f"pred-{name}.{LEVELS[level].file_ext}")
        figures = evaluate_files(
            eval_task, meta["gold_path"], path, one_pred=one_pred, inventory=meta["inventory"], exact=level == "span"
        )
        entry = {mode: figures[mode]["avg"] for mode in ("strict", "soft", "exact") if mode in figures}
        entry["rule"] = info
        if rule is None:
            probabilities = probabilities_from_outputs(test_corpus, indices, outputs, labels, num_views)
            soft = soft_scores(gold_test, probabilities, labels, None, prior_corpus)
            entry["soft_labels"] = {"model": soft["model"], "prior": soft["prior"], "oracle": soft["oracle"]}
        scores[name] = entry
    return scores


def _default(level: str):
    import torch

    return None if level == "span" else torch.tensor(0.7)


# --- one run and the ensembles -----------------------------------------------------------------------
def dev_corpus_of(task: str, files, recipe: str, seed: int):
    """The run's own dev posts (the split ``cv=official`` drew from the seed) with every annotator view (what its
    rules are fitted against), and the run's task data."""
    from omegaconf import OmegaConf

    from faina.data.levels import subset
    from faina.training.cross_validation import make_splits

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
    every seed of a recipe share it (only the dev split differs), where each member used to read and aggregate the
    corpus again. ``stamps``: the files' modification times, in the cache key, so a rewritten file is read afresh."""
    from faina.data.task_data import load_task_data

    level = TASKS[task][0]
    return load_task_data(train_path, test_path, level, "fine", labels_path, targets=targets)


def _cached_scores(path: Path, recipe: str) -> dict | None:
    """The scores a previous call saved, when they are of this script's version (else they are recomputed); a
    ``views`` recipe's older scores were fitted as this version fits them and are kept (``SCORES_VERSION``)."""
    if not path.is_file():
        return None
    saved = json.loads(path.read_text())
    version = saved.get("version")
    return saved if version == SCORES_VERSION or (version in (1, 2) and recipe_targets(recipe) == "views") else None


def evaluate_run(task, recipe, seed, folder: Path, files, log) -> dict:
    cached = folder / SCORES_FILE
    saved = _cached_scores(cached, recipe)
    if saved is not None:
        return saved
    from faina.serving.fold_model import load_exported

    log(f"scoring {folder.name}")
    model, meta = load_exported(folder / "fold0")
    dev, data = dev_corpus_of(task, files, recipe, seed)
    result = {
        "version": SCORES_VERSION,
        "task": task,
        "recipe": recipe,
        "seed": seed,
        "train_seconds": train_seconds(folder),
        "scores": _score(task, model, meta, files, dev, data, folder / "benchmark"),
    }
    cached.write_text(json.dumps(result, indent=2))
    return result


def _score(task, model, meta, files, dev, data, folder: Path, decisions=None) -> dict:
    from faina.data.task_data import read_level
    from faina.formats.labels import LabelInventory

    level, eval_task, ext = TASKS[task]
    inventory = LabelInventory.load(files["labels"])
    gold_path = files[f"test.{ext}"]
    gold_test = read_level(gold_path, level, "fine", inventory)
    meta = {**meta, "gold_path": gold_path, "inventory": inventory}
    return score_model(model, meta, level, eval_task, gold_test, dev, gold_test, data.gold_corpus, folder, decisions)


def member_decisions(task, recipe, seeds, members, files) -> dict[str, tuple]:
    """Every tuned rule fitted on each member's own dev split, averaged over the members: what ``cv.ensemble=K``
    with a tuned rule predicts with. The ensemble averages its members' thresholds, and an O bias adds linearly
    to the averaged emissions, so averaging the members' own fitted values is exactly that ensemble's rule."""
    import torch

    from faina.serving.fold_model import load_tokenizer

    level = TASKS[task][0]
    rules = {name: rule for name, rule in (SPAN_RULES if level == "span" else POST_RULES).items() if rule}
    fitted: dict[str, list] = {name: [] for name in rules}
    for seed, (model, meta) in zip(seeds, members):
        dev_corpus, _ = dev_corpus_of(task, files, recipe, seed)
        tokenizer = load_tokenizer(meta["encoder"]["name_or_path"])
        with torch.no_grad():
            dev = Outputs(model, level, dev_corpus, tokenizer, meta["labels"])
            for name, rule in rules.items():
                fitted[name].append(fit_rule(model, level, dev, rule, meta["num_views"]))
    return {
        name: (torch.stack([decision for decision, _ in values]).mean(0), {"members": [info for _, info in values]})
        for name, values in fitted.items()
    }


def evaluate_ensemble(task, recipe, epochs, seeds, runs: Path, files, log, overrides: Sequence[str] = ()) -> dict:
    """The first K seed models of a recipe as one ensemble, under the fixed rule and every tuned rule, each member's
    fitted on its own dev split (``member_decisions``)."""
    from faina.serving.fold_model import load_exported
    from models.ensemble import ensemble

    name = f"{task}-{recipe}-e{epochs}{overrides_tag(overrides)}-ensemble{len(seeds)}-s{'-'.join(map(str, seeds))}"
    cached = runs / name / SCORES_FILE
    saved = _cached_scores(cached, recipe)
    if saved is not None and saved.get("member_rules", False):  # older files of soft recipes had no member rules
        return saved
    log(f"scoring {name}")
    members = [load_exported(runs / run_name(task, recipe, epochs, s, overrides) / "fold0") for s in seeds]
    model, meta = ensemble([m for m, _ in members]), members[0][1]
    _, data = dev_corpus_of(task, files, recipe, seeds[0])
    decisions = member_decisions(task, recipe, seeds, members, files)
    result = {
        "version": SCORES_VERSION,
        "task": task,
        "recipe": recipe,
        "members": list(seeds),
        "member_rules": True,
        "scores": _score(task, model, meta, files, None, data, runs / name / "benchmark", decisions),
    }
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result, indent=2))
    return result


def recipe_targets(recipe: str) -> str:
    """The ``data.targets`` a recipe trains on (``views`` unless it sets one)."""
    return next((o.split("=", 1)[1] for o in RECIPES[recipe] if o.startswith("data.targets=")), "views")


# --- the report --------------------------------------------------------------------------------------
def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


FIGURES = (
    ("strict F1", ("strict", "f1")),
    ("strict P", ("strict", "precision")),
    ("strict R", ("strict", "recall")),
    ("soft F1", ("soft", "f1")),
    ("exact F1", ("exact", "f1")),
)


def summarise(runs: list[dict], ensembles: list[dict]) -> list[dict]:
    """One row per (task, recipe, rule) over seeds, and one per ensemble and rule."""
    rows = []
    groups: dict[tuple, list[dict]] = {}
    # the default recipe's fixed rule per (task, seed): the same seed draws the same dev split and initialisation
    default_of = {
        (run["task"], run["seed"]): run["scores"][BASELINE[TASKS[run["task"]][0]]]["strict"]["f1"]
        for run in runs
        if run["recipe"] == "views" and BASELINE[TASKS[run["task"]][0]] in run["scores"]
    }
    for run in runs:
        fixed = BASELINE[TASKS[run["task"]][0]]
        base = run["scores"].get(fixed)
        for rule, entry in run["scores"].items():
            if rule != fixed:  # a decision rule against the fixed rule of the same trained model
                paired = entry["strict"]["f1"] - base["strict"]["f1"] if base is not None else None
            elif run["recipe"] != "views" and (run["task"], run["seed"]) in default_of:  # a recipe, same seed
                paired = entry["strict"]["f1"] - default_of[run["task"], run["seed"]]
            else:
                paired = None
            groups.setdefault((run["task"], run["recipe"], rule), []).append(
                {**entry, "_time": run["train_seconds"], "_paired": paired}
            )
    for (task, recipe, rule), entries in groups.items():
        row = {"task": task, "recipe": recipe, "rule": rule, "seeds": len(entries)}
        for label, (mode, key) in FIGURES:
            values = [e[mode][key] for e in entries if mode in e]
            if values:
                row[label] = _mean_std(values)
        soft = [e["soft_labels"]["model"] for e in entries if "soft_labels" in e]
        if soft:
            row["cross-entropy"] = _mean_std([s["cross_entropy"] for s in soft])
            row["manhattan"] = _mean_std([s["manhattan"] for s in soft])
        times = [e["_time"] for e in entries if e["_time"] is not None]
        if times:
            row["train minutes"] = _mean_std([t / 60 for t in times])
        paired = [e["_paired"] for e in entries if e["_paired"] is not None]
        if paired:
            # a rule against the fixed rule of the *same* trained model, a recipe against the default recipe's
            # model of the same seed: the seeds' own noise (split, initialisation) cancels
            row["paired Δ"] = _mean_std(paired)
            row["wins"] = f"{sum(d > 0 for d in paired)}/{len(paired)}"
        confirmed = [e["rule"].get("confirmed") for e in entries if "confirmed" in e.get("rule", {})]
        if confirmed:
            row["confirmed"] = f"{sum(confirmed)}/{len(confirmed)}"
        rows.append(row)
    for result in ensembles:
        for rule, entry in result["scores"].items():
            row = {"task": result["task"], "recipe": f"{result['recipe']} ensemble{len(result['members'])}"}
            row.update({"rule": rule, "seeds": 1})
            for label, (mode, key) in FIGURES:
                if mode in entry:
                    row[label] = (entry[mode][key], 0.0)
            if "soft_labels" in entry:
                row["cross-entropy"] = (entry["soft_labels"]["model"]["cross_entropy"], 0.0)
                row["manhattan"] = (entry["soft_labels"]["model"]["manhattan"], 0.0)
            rows.append(row)
    return mark_gains(rows)


def mark_gains(rows: list[dict]) -> list[dict]:
    """``verdict`` of each row against its task's default (``views`` with the fixed rule) on strict F1: ``gain`` /
    ``loss`` only when the difference exceeds the larger seed std of the two, else ``within spread``."""
    base = {r["task"]: r for r in rows if r["recipe"] == "views" and r["rule"] in BASELINE.values()}
    for row in rows:
        reference = base.get(row["task"])
        if reference is None or row is reference or "strict F1" not in row:
            continue
        (mean, std), (base_mean, base_std) = row["strict F1"], reference["strict F1"]
        spread = max(std, base_std)
        difference = mean - base_mean
        row["vs default"] = difference
        row["verdict"] = "gain" if difference > spread else "loss" if difference < -spread else "within spread"
    return rows


def _cell(value) -> str:
    if isinstance(value, tuple):
        mean, std = value
        return f"{mean * 100:.1f} ± {std * 100:.1f}"
    if isinstance(value, float):
        return f"{value * 100:+.1f}"
    return str(value)


def markdown(rows: list[dict], machine: str, overrides: Sequence[str] = ()) -> str:
    columns = ["task", "recipe", "rule", "seeds", *[label for label, _ in FIGURES], "cross-entropy", "manhattan"]
    columns += ["train minutes", "confirmed", "paired Δ", "wins", "vs default", "verdict"]
    present = [c for c in columns if any(c in row for row in rows)]
    lines = [
        f"Test figures in % (mean ± std over seeds; ensembles: one value). {machine}",
        *([f"Every run with: `{' '.join(overrides)}`."] if overrides else []),
        "",
        "| " + " | ".join(present) + " |",
        "|" + "---|" * len(present),
    ]
    for row in rows:
        cells = []
        for column in present:
            value = row.get(column, "")
            if column == "train minutes" and isinstance(value, tuple):
                cells.append(f"{value[0]:.1f} ± {value[1]:.1f}")
            elif column == "paired Δ" and isinstance(value, tuple):
                cells.append(f"{value[0] * 100:+.1f} ± {value[1] * 100:.1f}")
            elif column in ("cross-entropy", "manhattan") and isinstance(value, tuple):
                cells.append(f"{value[0]:.4f} ± {value[1]:.4f}")
            else:
                cells.append(_cell(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({row["task"] for row in rows})
    figure, axes = plt.subplots(len(tasks), 1, figsize=(10, 3.2 * len(tasks)), squeeze=False)
    for axis, task in zip(axes[:, 0], tasks):
        chosen = [row for row in rows if row["task"] == task and "strict F1" in row]
        names = [f"{row['recipe']} / {row['rule']}" for row in chosen]
        means = [row["strict F1"][0] * 100 for row in chosen]
        stds = [row["strict F1"][1] * 100 for row in chosen]
        axis.barh(range(len(chosen)), means, xerr=stds, color="#4c72b0")
        axis.set_yticks(range(len(chosen)), names, fontsize=7)
        axis.invert_yaxis()
        axis.set_xlabel("strict F1 on test (%), mean ± std over seeds")
        axis.set_title(task)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def machine_line() -> str:
    import torch

    return (
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), python {platform.python_version()}."
    )


# --- command -----------------------------------------------------------------------------------------
def build_parser():
    parser = command_parser("scripts.benchmark_quality", __doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="Faina-format corpus folder")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "benchmark-quality", help="output folder")
    parser.add_argument("--tasks", nargs="+", default=["span-f", "post-f"], choices=sorted(TASKS))
    parser.add_argument("--recipes", nargs="+", default=["views", "majority", "soft"], choices=sorted(RECIPES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--ensembles", nargs="*", type=int, default=[3], help="ensemble sizes K (first K seeds)")
    parser.add_argument("--override", action="append", default=[], help="extra train.py override (repeatable)")
    parser.add_argument("--report-only", action="store_true", help="train nothing: report the finished runs")
    parser.add_argument("--quick", action="store_true", help="tiny grid for the tests (never for a table)")
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.epochs, args.seeds = 1, args.seeds if argv and "--seeds" in argv else [1, 2]
    if len(args.seeds) < 2 and not args.quick:
        raise UserError("a spread needs two or more seeds", fix="pass --seeds 1 2 3")

    def log(message: str) -> None:
        print(f"[benchmark] {message}", file=sys.stderr, flush=True)

    out = args.out.resolve()
    files = prepare_corpus(args.corpus.resolve(), out, args.quick)
    runs_dir = out / "runs"
    runs, ensembles = [], []
    for task in args.tasks:
        for recipe in args.recipes:
            finished = []
            for seed in args.seeds:
                folder = runs_dir / run_name(task, recipe, args.epochs, seed, args.override)
                if args.report_only and not (folder / "results.json").is_file():
                    continue
                folder = train(task, recipe, args.epochs, seed, files, runs_dir, args.override, log)
                runs.append(evaluate_run(task, recipe, seed, folder, files, log))
                finished.append(seed)
            for size in args.ensembles:
                if 1 < size <= len(finished):
                    ensembles.append(
                        evaluate_ensemble(
                            task, recipe, args.epochs, finished[:size], runs_dir, files, log, args.override
                        )
                    )
    rows = summarise(runs, ensembles)
    machine = machine_line()
    report = {
        "corpus": str(args.corpus),
        "epochs": args.epochs,
        "seeds": args.seeds,
        "overrides": args.override,
        "machine": machine,
        "quick": args.quick,
        "rows": rows,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2))
    table = markdown(rows, machine, args.override)
    (out / "report.md").write_text(table)
    if rows:
        plot(rows, out / "report.png")
    print(table)
    return report


if __name__ == "__main__":
    main()

"""The quality benchmark's scores: one trained model (or an ensemble) on test under every decision rule.

Each rule is a ``DecisionSettings`` (``models/decision_rules.py``) fitted after training on the run's own dev split
by the model's ``fit_decision`` — the function ``train.py`` fits ``model.module.decision.tuned=true`` with — and
applied to the same model's test outputs (``apply_decision``), so a rule and the untuned default are compared on
one trained model, from one prediction pass over dev and one over test (``faina.serving.prediction``, raw
outputs). Rules are fitted against every annotator view of dev, as test is scored: a one-view model of an
aggregated or soft recipe meets each view once (``models.decision_rules.span_observations``). An ensemble's rule is
its members' own fits averaged (``member_decisions``), what ``cv.ensemble=K`` with a tuned rule predicts with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from faina.benchmarks.quality_runs import (
    TASKS,
    Length,
    dev_corpus_of,
    model_dir,
    overrides_tag,
    recipe_targets,
    run_name,
    train_seconds,
)
from models.decision_rules import DecisionSettings, PostDecisionSettings, SpanDecisionSettings

BASELINE = {"span": "crf", "post": "tau0.7"}
# rule name -> the settings it fits (``tuned=False``: the fixed rule, the CRF's path / τ = 0.7)
SPAN_RULES: dict[str, DecisionSettings] = {
    "crf": SpanDecisionSettings(tuned=False),
    "own": SpanDecisionSettings(tuned=True, scope="own", min_evidence=3),
    "own-min30": SpanDecisionSettings(tuned=True, scope="own", min_evidence=30),
    "shared": SpanDecisionSettings(tuned=True, scope="shared", min_evidence=3),
    "shrunk": SpanDecisionSettings(tuned=True, scope="shrunk", min_evidence=3, shrinkage=20.0),
    "own-confirm": SpanDecisionSettings(tuned=True, scope="own", min_evidence=3, confirm=True),
    "shared-confirm": SpanDecisionSettings(tuned=True, scope="shared", min_evidence=3, confirm=True),
    "shrunk-confirm": SpanDecisionSettings(tuned=True, scope="shrunk", min_evidence=3, shrinkage=20.0, confirm=True),
}
POST_RULES: dict[str, DecisionSettings] = {
    "tau0.7": PostDecisionSettings(tuned=False, fixed=0.7),
    "own": PostDecisionSettings(tuned=True, scope="own", min_evidence=3, floor=None),
    "own-floor0.3": PostDecisionSettings(tuned=True, scope="own", min_evidence=3, floor=0.3),
    "shared": PostDecisionSettings(tuned=True, scope="shared", min_evidence=3, floor=None),
    "shrunk": PostDecisionSettings(tuned=True, scope="shrunk", min_evidence=3, shrinkage=20.0, floor=None),
    "own-confirm": PostDecisionSettings(tuned=True, scope="own", min_evidence=3, confirm=True, floor=None),
    "shared-confirm": PostDecisionSettings(tuned=True, scope="shared", min_evidence=3, confirm=True, floor=None),
    "shrunk-confirm": PostDecisionSettings(
        tuned=True, scope="shrunk", min_evidence=3, shrinkage=20.0, confirm=True, floor=None
    ),
}
RULES = {"span": SPAN_RULES, "post": POST_RULES}
SCORES_FILE = "benchmark-scores.json"
# bump when what a run's scores hold changes: older score files are recomputed. 2: the rules of a one-view model
# (data.targets soft, union, majority, intersection) are fitted against every gold view of dev, as test is scored;
# 3: with their evidence settings counted per view. A `views` recipe's older scores were fitted as version 3 fits
# them and stay valid (``cached_scores``)
SCORES_VERSION = 3


def score_model(
    model, meta, level, eval_task, gold_test, dev_corpus, test_corpus, prior_corpus, folder: Path, decisions=None
):
    """Test figures of ``model`` under every rule: fitted on ``dev_corpus``, or given as ``decisions`` (rule name
    -> (decision values, info), an ensemble's); neither: the fixed rule only."""
    from faina.data.levels import LEVELS
    from faina.scoring.official import evaluate_files
    from faina.scoring.soft_scores import soft_scores
    from faina.serving.prediction import corpus_indices, predict_outputs
    from faina.serving.probabilities import probabilities_from_outputs

    labels, num_views = meta["labels"], meta["num_views"]
    test = predict_outputs(model, meta, test_corpus, raw=True)
    dev = predict_outputs(model, meta, dev_corpus, raw=True) if dev_corpus is not None else None
    one_pred = num_views == 1 and gold_test.num_views > 1
    indices = corpus_indices(test_corpus)
    folder.mkdir(parents=True, exist_ok=True)
    scores = {}
    for name, rule in RULES[level].items():
        if decisions is not None and name in decisions:
            decision, info = decisions[name]
        elif rule.tuned and dev is None:
            continue
        else:
            decision, info = model.fit_decision(dev or [], rule)
        outputs = model.apply_decision(test, decision)
        predicted = LEVELS[level].records(test_corpus, indices, outputs, labels, num_views)
        path = LEVELS[level].write(predicted, folder / f"pred-{name}.{LEVELS[level].file_ext}")
        figures = evaluate_files(
            eval_task, meta["gold_path"], path, one_pred=one_pred, inventory=meta["inventory"], exact=level == "span"
        )
        entry = {mode: figures[mode]["avg"] for mode in ("strict", "soft", "exact") if mode in figures}
        entry["rule"] = info
        if not rule.tuned:
            probabilities = probabilities_from_outputs(test_corpus, indices, outputs, labels, num_views)
            soft = soft_scores(gold_test, probabilities, labels, None, prior_corpus)
            entry["soft_labels"] = {"model": soft["model"], "prior": soft["prior"], "oracle": soft["oracle"]}
        scores[name] = entry
    return scores


def cached_scores(path: Path, recipe: str) -> dict | None:
    """The scores a previous call saved, when they are of this version (else they are recomputed); a ``views``
    recipe's older scores were fitted as this version fits them and are kept (``SCORES_VERSION``)."""
    if not path.is_file():
        return None
    saved = json.loads(path.read_text())
    version = saved.get("version")
    return saved if version == SCORES_VERSION or (version in (1, 2) and recipe_targets(recipe) == "views") else None


def evaluate_run(task, recipe, seed, folder: Path, files, log: Callable[[str], None]) -> dict:
    """One run's scores under every rule, fitted on its own dev split (``benchmark-scores.json``, reused)."""
    cached = folder / SCORES_FILE
    saved = cached_scores(cached, recipe)
    if saved is not None:
        return saved
    from faina.serving.fold_model import load_exported

    log(f"scoring {folder.name}")
    model, meta = load_exported(model_dir(folder, task, recipe))
    dev, data = dev_corpus_of(task, files, recipe, seed)
    result = {
        "version": SCORES_VERSION,
        "task": task,
        "recipe": recipe,
        "seed": seed,
        "train_seconds": train_seconds(folder),
        "scores": score_on_test(task, model, meta, files, dev, data, folder / "benchmark"),
    }
    cached.write_text(json.dumps(result, indent=2))
    return result


def score_on_test(task, model, meta, files, dev, data, folder: Path, decisions=None) -> dict:
    """``score_model`` against the corpus's test file (every gold view), the prior from the run's task data."""
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

    from faina.serving.prediction import predict_outputs

    level = TASKS[task][0]
    rules = {name: rule for name, rule in RULES[level].items() if rule.tuned}
    fitted: dict[str, list] = {name: [] for name in rules}
    for seed, (model, meta) in zip(seeds, members):
        dev_corpus, _ = dev_corpus_of(task, files, recipe, seed)
        dev = predict_outputs(model, meta, dev_corpus, raw=True)
        for name, rule in rules.items():
            fitted[name].append(model.fit_decision(dev, rule))
    return {
        name: (torch.stack([decision for decision, _ in values]).mean(0), {"members": [info for _, info in values]})
        for name, values in fitted.items()
    }


def ensemble_name(task: str, recipe: str, length: Length, seeds: Sequence[int], overrides: Sequence[str] = ()) -> str:
    return f"{task}-{recipe}-{length.tag}{overrides_tag(overrides)}-ensemble{len(seeds)}-s{'-'.join(map(str, seeds))}"


def evaluate_ensemble(task, recipe, length, seeds, runs: Path, files, log, overrides: Sequence[str] = ()) -> dict:
    """The first K seed models of a recipe as one ensemble, under the fixed rule and every tuned rule, each member's
    fitted on its own dev split (``member_decisions``)."""
    from faina.serving.fold_model import load_exported
    from models.ensemble import ensemble

    name = ensemble_name(task, recipe, length, seeds, overrides)
    cached = runs / name / SCORES_FILE
    saved = cached_scores(cached, recipe)
    if saved is not None and saved.get("member_rules", False):  # older files of soft recipes had no member rules
        return saved
    log(f"scoring {name}")
    members = [
        load_exported(model_dir(runs / run_name(task, recipe, length, s, overrides), task, recipe)) for s in seeds
    ]
    model, meta = ensemble([m for m, _ in members]), members[0][1]
    _, data = dev_corpus_of(task, files, recipe, seeds[0])
    decisions = member_decisions(task, recipe, seeds, members, files)
    result = {
        "version": SCORES_VERSION,
        "task": task,
        "recipe": recipe,
        "members": list(seeds),
        "member_rules": True,
        "scores": score_on_test(task, model, meta, files, None, data, runs / name / "benchmark", decisions),
    }
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result, indent=2))
    return result

"""Score Faina predictions exactly as the official scorers do: the library behind ``python -m faina.evaluate``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common.errors import UserError
from faina.data.coarse import coarse_of
from faina.formats.alignment import check_aligned
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.records import (
    NOT_ANNOTATED,
    PostCorpus,
    SpanCorpus,
    annotated_mask,
    has_not_annotated,
    labels_used,
)
from metrics.faina_post_counts import PostMicroTally
from metrics.faina_span_sums import SpanOverlapTally

TASKS = ("span-fine", "span-coarse", "post-fine", "post-coarse")


TASK_ALIASES = {"span-f": "span-fine", "span-c": "span-coarse", "post-f": "post-fine", "post-c": "post-coarse"}


def parse_task(task: str) -> tuple[str, str]:
    """``"span-fine"`` (or the short ``"span-f"``) -> ``("span", "fine")``."""
    name = TASK_ALIASES.get(task, task)
    if name not in TASKS:
        raise UserError(f"unknown task {task!r}", fix=f"use one of {', '.join(TASKS)}")
    level, grain = name.split("-")
    return level, grain


# --- reading -------------------------------------------------------------------------------------
def read_at_grain(path: str | Path, level: str, grain: str, inventory: LabelInventory, what: str):
    """Read a file of the task's level (``faina.formats.any_file``) and bring it to the task's grain."""
    return to_grain(read_any(path, inventory, level=level), grain, inventory, what)


def to_grain(corpus: SpanCorpus | PostCorpus, grain: str, inventory: LabelInventory, what: str):
    """The corpus at the task's grain: a fine file scored on a coarse task gets its macro-categories derived."""
    if inventory.grain_of(labels_used(corpus)) == grain:
        return corpus
    if grain == "coarse":
        return coarse_of(corpus, inventory)
    raise UserError(
        f"the {what} file holds coarse categories but the task is fine-grained",
        path=corpus.path,
        fix="score it with a coarse task (span-coarse / post-coarse), or give fine-labelled files",
    )


def prepare_corpora(grain: str, gold, pred, inventory: LabelInventory, one_pred: bool):
    """Check a gold and a prediction corpus (span or post) can be scored together, then bring both to the task's
    label grain."""
    if isinstance(gold, SpanCorpus):
        for corpus, what in ((gold, "gold"), (pred, "prediction")):
            if not corpus.labelled:
                raise UserError(
                    f"the {what} file has empty label cells (an unlabelled file)",
                    path=corpus.path,
                    fix="fill every label cell (O outside spans)",
                )
    _check_views(gold.num_views, pred.num_views, pred.path, one_pred)
    _refuse_marker_in_prediction(pred)
    check_aligned(gold, pred)
    return to_grain(gold, grain, inventory, "gold"), to_grain(pred, grain, inventory, "prediction")


def _refuse_marker_in_prediction(pred: SpanCorpus | PostCorpus) -> None:
    """A prediction says something about every post and view; the not-annotated marker belongs to gold files."""
    if has_not_annotated(pred):
        first = next(item for item in pred.items if not all(item.annotated(v) for v in range(pred.num_views)))
        raise UserError(
            f"the prediction file marks post {first.post_id!r} as not annotated ({NOT_ANNOTATED!r})",
            path=pred.path,
            line=first.line,
            fix=f"predict every post and view; {NOT_ANNOTATED!r} marks a missing annotation in a gold file only",
        )


def unannotated_counts(gold: SpanCorpus | PostCorpus) -> dict[str, int]:
    """The (post, view) pairs of the gold file its views did not annotate, and the posts no view annotated
    (left out of every score); empty for a file without the marker, so its output is unchanged."""
    mask = annotated_mask(gold)
    pairs = sum(not on for row in mask for on in row)
    if not pairs:
        return {}
    return {"pairs_not_annotated": pairs, "posts_not_annotated": sum(not any(row) for row in mask)}


def _check_views(gold_views: int, pred_views: int, pred_path: str, one_pred: bool) -> None:
    if not one_pred and pred_views != gold_views:
        raise UserError(
            f"the prediction file has {pred_views} label column(s), the gold file {gold_views}",
            path=pred_path,
            fix="give one prediction column per annotator, or pass -O to score the first "
            "prediction column against every annotator",
        )


# --- scoring -------------------------------------------------------------------------------------
def score_spans(
    grain: str,
    gold: SpanCorpus,
    pred: SpanCorpus,
    inventory: LabelInventory,
    *,
    one_pred: bool = False,
    per_label: bool = False,
    exact: bool = False,
) -> dict[str, Any]:
    """Strict (and, for fine labels, soft; with ``exact``, seqeval exact-match) span scores of two aligned
    corpora of the task's grain."""
    golds = [post.spans for post in gold.posts]
    preds = [post.spans[:1] if one_pred else post.spans for post in pred.posts]
    result: dict[str, Any] = {}
    per_label_result: dict[str, Any] = {}
    counts = None
    for mode in ("strict", "soft") if grain == "fine" else ("strict",):
        metric = SpanOverlapTally(inventory, num_views=gold.num_views, mode=mode, per_label=per_label)
        metric.update(preds, golds)
        result[mode] = metric.compute()
        counts = metric.counts()
        if per_label:
            per_label_result[mode] = metric.compute_per_label()
    if exact:
        from metrics.faina_exact import exact_span_scores

        found = exact_span_scores(preds, golds, inventory.labels_of(grain), gold.num_views, per_label=per_label)
        result["exact"] = found["scores"]
        if per_label:
            per_label_result["exact"] = found["per_label"]
    if per_label:
        result["per_label"] = per_label_result
    return {"scores": result, "counts": {**counts, **unannotated_counts(gold)}}


def score_posts(
    grain: str,
    gold: PostCorpus,
    pred: PostCorpus,
    inventory: LabelInventory,
    *,
    one_pred: bool = False,
    per_label: bool = False,
) -> dict[str, Any]:
    """Post-level micro scores of two aligned corpora of the task's grain."""
    metric = PostMicroTally(num_views=gold.num_views, labels=inventory.labels_of(grain), per_label=per_label)
    metric.update([row.labels[:1] if one_pred else row.labels for row in pred.rows], [row.labels for row in gold.rows])
    result: dict[str, Any] = {"strict": metric.compute()}
    if per_label:
        result["per_label"] = {"strict": metric.compute_per_label()}
    return {"scores": result, "counts": {**metric.counts(), **unannotated_counts(gold)}}


def _evaluate(
    task: str,
    gold: str | Path,
    pred: str | Path,
    one_pred: bool,
    per_label: bool,
    inventory: LabelInventory | None,
    exact: bool = False,
    soft: str | Path | None = None,
    prior_from: str | Path | None = None,
) -> dict[str, Any]:
    """Hard scores (``scores``, ``counts``) and, with ``soft`` (a probability file), ``probability_scores``."""
    level, grain = parse_task(task)
    if exact and level != "span":
        raise UserError(
            f"--exact (exact span match) applies to span tasks, not {task!r}",
            fix="drop --exact, or score span files with -T span-fine / span-coarse",
        )
    inventory = inventory or LabelInventory.load()
    gold_c, pred_c = prepare_corpora(
        grain, read_any(gold, inventory, level=level), read_any(pred, inventory, level=level), inventory, one_pred
    )
    if level == "span":
        outcome = score_spans(grain, gold_c, pred_c, inventory, one_pred=one_pred, per_label=per_label, exact=exact)
    else:
        outcome = score_posts(grain, gold_c, pred_c, inventory, one_pred=one_pred, per_label=per_label)
    if soft is not None:
        outcome["probability_scores"] = _soft_labels(level, grain, gold_c, pred_c, soft, prior_from, inventory)
    return outcome


def _soft_labels(
    level: str, grain: str, gold, pred, soft: str | Path, prior_from: str | Path | None, inventory: LabelInventory
) -> dict[str, Any]:
    """``faina.evaluate --probabilities``: the probability-score block of ``faina.scoring.soft_scores`` (docs/soft-labels.md)."""
    from faina.formats.probability_file import read_probabilities
    from faina.scoring.soft_scores import soft_scores

    prior_corpus = None if prior_from is None else read_at_grain(prior_from, level, grain, inventory, "prior")
    return soft_scores(gold, read_probabilities(soft), inventory.labels_of(grain), pred, prior_corpus)


def evaluate_files(
    task: str,
    gold: str | Path,
    pred: str | Path,
    one_pred: bool = False,
    per_label: bool = False,
    inventory: LabelInventory | None = None,
    exact: bool = False,
) -> dict[str, Any]:
    """The scores ``--json`` prints: ``{"strict": {"a1": {...}, ..., "avg": {...}}, "soft": {...}}``.

    Values are fractions. ``"soft"`` exists for span-fine only (the official scorers compute it only
    there); ``"exact"`` (seqeval exact match, same layout) only when ``exact`` is set (span tasks);
    ``"per_label"`` (``{mode: {view: {label: {...}}}}``) only when ``per_label`` is set.
    Bad files raise ``UserError``; zero denominators give 0 and a ``ZeroDenominatorWarning``.
    """
    return _evaluate(task, gold, pred, one_pred, per_label, inventory, exact)["scores"]


# --- output --------------------------------------------------------------------------------------
def _pct(value: float) -> str:
    return f"{value * 100:.2f}"


def format_table(task: str, gold: str, pred: str, outcome: dict[str, Any], one_pred: bool) -> str:
    scores, counts = outcome["scores"], outcome["counts"]
    level, _ = parse_task(task)
    unit = "spans" if level == "span" else "labels (an empty cell counts as one)"
    views = [key for key in scores["strict"] if key != "avg"]
    lines = [
        "=" * 60,
        f"Evaluation for task {TASK_ALIASES.get(task, task)}",
        f"- Gold answers: {gold}",
        f"- Predictions:  {pred}" + ("  (one prediction scored against every view)" if one_pred else ""),
        f"- Predicted {unit}: " + "; ".join(f"{v}: {n}" for v, n in zip(views, counts["predicted"])),
        f"- Gold {unit}: " + "; ".join(f"{v}: {n}" for v, n in zip(views, counts["gold"])),
    ]
    if counts.get("pairs_not_annotated"):
        lines.append(
            f"- Not annotated (marker ?, left out of the scores): {counts['pairs_not_annotated']} (post, view) "
            f"pair(s); posts with no annotated view: {counts['posts_not_annotated']}"
        )
    lines.append("=" * 60)
    for mode in [key for key in scores if key != "per_label"]:  # strict, soft, exact ...: in the order computed
        lines += [f"[{mode} evaluation]", f"{'':8}{'prec':>8}{'rec':>8}{'f1':>8}"]
        for view, row in scores[mode].items():
            lines.append(f"{view:8}{_pct(row['precision']):>8}{_pct(row['recall']):>8}{_pct(row['f1']):>8}")
        per_label = scores.get("per_label", {}).get(mode)
        if per_label:
            for view, rows in per_label.items():
                lines += [
                    f"  per label, {view}:",
                    f"  {'label':32}{'prec':>8}{'rec':>8}{'f1':>8}{'pred':>6}{'gold':>6}",
                ]
                for label, row in rows.items():
                    name = "(no label)" if label == "" else label  # the empty-cell pseudo-label
                    lines.append(
                        f"  {name:32}{_pct(row['precision']):>8}{_pct(row['recall']):>8}"
                        f"{_pct(row['f1']):>8}{row['predicted']:>6}{row['gold']:>6}"
                    )
        lines.append("-" * 60)
    return "\n".join(lines)

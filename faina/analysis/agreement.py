"""Inter-annotator agreement of a Faina-format file with two or more views (``python -m faina.stats``).

- γ and γ_cat (Mathet et al. 2015; the Faina paper's measure) with the ``pygamma-agreement`` package: one
  continuum for the whole file, each post's tokens laid on the axis after the previous post's (one empty
  token between posts), a span of tokens i..j being the segment [offset + i - 1, offset + j]; the
  dissimilarity is the package's combined categorical one with the settings of the reference (Java)
  implementation: α = 1 (positional, sporadic), β = 1 (categorical, absolute: 0 for the same label,
  1 otherwise), Δ∅ = 1; chance disorder is estimated from ``GAMMA_SAMPLES`` random continua of its
  statistical sampler (seeded), with the fast-γ alignment. The package and its MIP solver (CBC, or
  GLPK through cvxopt) are optional: without them γ is reported as unavailable, with the reason.
- Cohen's κ (two views) or Fleiss' κ (three or more) per label at post level (statsmodels): does the
  post carry the label in a view.
- The human ceiling: each view scored as a prediction against the other views with the project's own
  evaluator (``faina.evaluate``: span strict/soft/exact, post micro; the ``-O`` rule), averaged over the
  views — the F1 a model trained on these annotations cannot be expected to beat.
"""

from __future__ import annotations

import contextlib
import logging
import math
import warnings
from typing import Any

import numpy as np

from common.errors import UserError
from faina.data.coarse import coarse_corpus, coarse_rows
from faina.formats.labels import LabelInventory
from faina.formats.records import PostCorpus, SpanCorpus, labels_used
from faina.formats.tsv import post_corpus_from_spans

GAMMA_SAMPLES = 30
GAMMA_SETTINGS = {
    "dissimilarity": "CombinedCategoricalDissimilarity",
    "alpha": 1.0,
    "beta": 1.0,
    "delta_empty": 1.0,
    "categorical": "AbsoluteCategoricalDissimilarity",
    "positional": "PositionalSporadicDissimilarity",
    "algorithm": "fast-gamma",
    "continuum": "whole file, posts end to end on the token axis",
}


def require_views(corpus: SpanCorpus | PostCorpus) -> None:
    if corpus.num_views < 2:
        raise UserError(
            f"agreement needs two or more annotator views, the file has {corpus.num_views}",
            path=corpus.path,
            fix="give a file with one label column per annotator, or leave out --agreement to get the other statistics",
        )


# --- γ ------------------------------------------------------------------------------------------
def gamma_unavailable_reason() -> str | None:
    """Why γ cannot be computed here (``None`` when it can)."""
    try:
        import cvxpy
        import pygamma_agreement  # noqa: F401
    except ImportError as err:
        return f"γ needs the pygamma-agreement package ({err.name} is missing): pip install pygamma-agreement"
    if not {"CBC", "GLPK_MI"} & set(cvxpy.installed_solvers()):
        return "γ needs a mixed-integer solver for cvxpy (CBC or GLPK_MI): pip install cvxopt"
    return None


@contextlib.contextmanager
def _quiet_solver():
    """pygamma logs a warning per solve when CBC is absent, and GLPK prints to stdout unless told not to."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        import cvxopt.glpk

        cvxopt.glpk.options["msg_lev"] = "GLP_MSG_OFF"  # set before the threads start: cvxpy restores it
    except ImportError:
        pass
    try:
        yield
    finally:
        root.setLevel(level)


def gamma(corpus: SpanCorpus, seed: int = 0, samples: int = GAMMA_SAMPLES) -> dict[str, Any]:
    """``{"gamma", "gamma_cat", "settings"}``, or the values ``None`` with ``"unavailable"`` saying why."""
    reason = gamma_unavailable_reason()
    if reason is None and not any(span for post in corpus.posts for view in (post.spans or ()) for span in view):
        reason = "γ is undefined for a file without spans"
    if reason is not None:
        return {"gamma": None, "gamma_cat": None, "unavailable": reason}
    import pygamma_agreement as pa
    from pyannote.core import Segment

    continuum = pa.Continuum()
    offset = 0
    for post in corpus.posts:
        for view, spans in enumerate(post.spans or ()):
            for span in spans:
                continuum.add(f"a{view + 1}", Segment(offset + span.first - 1, offset + span.last), span.label)
        offset += len(post.tokens) + 1
    for view in range(corpus.num_views):  # a view without any span is still an annotator
        continuum.add_annotator(f"a{view + 1}")
    dissimilarity = pa.CombinedCategoricalDissimilarity(
        alpha=GAMMA_SETTINGS["alpha"], beta=GAMMA_SETTINGS["beta"], delta_empty=GAMMA_SETTINGS["delta_empty"]
    )
    state = np.random.get_state()
    np.random.seed(seed)  # the statistical sampler draws from numpy's global generator
    try:
        with _quiet_solver():
            result = continuum.compute_gamma(dissimilarity, n_samples=samples, fast=True)
    finally:
        np.random.set_state(state)
    return {
        "gamma": float(result.gamma),
        "gamma_cat": float(result.gamma_cat),
        "settings": {**GAMMA_SETTINGS, "samples": samples, "seed": seed},
    }


# --- κ ------------------------------------------------------------------------------------------
def post_label_sets(corpus: SpanCorpus | PostCorpus) -> list[list[frozenset[str]]]:
    if isinstance(corpus, SpanCorpus):
        return [[frozenset(post.labels(v)) for v in range(corpus.num_views)] for post in corpus.posts]
    return [[row.label_set(v) for v in range(corpus.num_views)] for row in corpus.rows]


def kappa_per_label(corpus: SpanCorpus | PostCorpus, labels: list[str]) -> dict[str, float | None]:
    """Cohen's κ (2 views) or Fleiss' κ (3+) of "the post carries the label"; ``None`` when undefined
    (a label every view gives to every post, or to none)."""
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

    sets = post_label_sets(corpus)
    result: dict[str, float | None] = {}
    for label in labels:
        ratings = np.array([[int(label in view) for view in post] for post in sets], dtype=int)
        if ratings.size == 0 or ratings.min() == ratings.max():
            result[label] = None
            continue
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore")
            if corpus.num_views == 2:
                table = np.zeros((2, 2))
                for a, b in ratings:
                    table[a, b] += 1
                value = float(cohens_kappa(table).kappa)
            else:
                counts, _ = aggregate_raters(ratings, n_cat=2)
                value = float(fleiss_kappa(counts, method="fleiss"))
        result[label] = None if math.isnan(value) else value
    return result


# --- human ceiling ------------------------------------------------------------------------------
def _views_apart(corpus, view: int):
    """(the view as a one-column prediction, the other views as gold) of a span or post corpus."""
    others = [v for v in range(corpus.num_views) if v != view]
    if isinstance(corpus, SpanCorpus):
        pred = corpus.replace_posts([p.with_spans([p.spans[view]]) for p in corpus.posts])
        gold = corpus.replace_posts([p.with_spans([p.spans[v] for v in others]) for p in corpus.posts])
        return SpanCorpus(pred.posts, 1, corpus.path), SpanCorpus(gold.posts, len(others), corpus.path)
    from faina.formats.tsv import rows_with_labels

    pred = rows_with_labels(corpus, [[row.labels[view]] for row in corpus.rows])
    gold = rows_with_labels(corpus, [[row.labels[v] for v in others] for row in corpus.rows])
    return pred, gold


def _ceiling(corpus, score, grain: str, inventory: LabelInventory, **options) -> dict[str, dict[str, float]]:
    per_view = []
    for view in range(corpus.num_views):
        pred, gold = _views_apart(corpus, view)
        per_view.append(score(grain, gold, pred, inventory, one_pred=True, **options)["scores"])
    return {
        mode: {
            measure: float(np.mean([scores[mode]["avg"][measure] for scores in per_view]))
            for measure in ("precision", "recall", "f1")
        }
        for mode in per_view[0]
    }


def human_ceiling(corpus: SpanCorpus | PostCorpus, inventory: LabelInventory) -> dict[str, dict]:
    """``{task: {mode: {precision, recall, f1}}}`` for every task the file can be scored on."""
    from faina.scoring.official import score_posts, score_spans
    from metrics.faina_scores import ZeroDenominatorWarning

    result: dict[str, dict] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroDenominatorWarning)
        if isinstance(corpus, SpanCorpus):
            grain = inventory.grain_of(labels_used(corpus))
            if grain == "fine":
                result["span-fine"] = _ceiling(corpus, score_spans, "fine", inventory, exact=True)
            result["span-coarse"] = _ceiling(
                coarse_corpus(corpus, inventory) if grain == "fine" else corpus,
                score_spans,
                "coarse",
                inventory,
                exact=True,
            )
            rows = post_corpus_from_spans(corpus)
        else:
            rows = corpus
            grain = inventory.grain_of(labels_used(rows))
        if grain == "fine":
            result["post-fine"] = _ceiling(rows, score_posts, "fine", inventory)
        result["post-coarse"] = _ceiling(
            coarse_rows(rows, inventory) if grain == "fine" else rows, score_posts, "coarse", inventory
        )
    return result


def agreement(
    corpus: SpanCorpus | PostCorpus,
    inventory: LabelInventory,
    labels: list[str],
    *,
    with_gamma: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """The ``agreement`` section of ``faina.stats``: γ, γ_cat, κ per label and the human ceiling."""
    require_views(corpus)
    if isinstance(corpus, SpanCorpus) and with_gamma:
        found = gamma(corpus, seed=seed)
    elif isinstance(corpus, SpanCorpus):
        found = {"gamma": None, "gamma_cat": None, "unavailable": "γ not asked for (--no-gamma)"}
    else:
        found = {"gamma": None, "gamma_cat": None, "unavailable": "γ needs spans (a .conll file)"}
    return {
        **found,
        "kappa_method": "cohen" if corpus.num_views == 2 else "fleiss",
        "kappa": kappa_per_label(corpus, labels),
        "human_ceiling": human_ceiling(corpus, inventory),
    }

"""Soft-label scores of a probability file against a Faina gold file: ``faina.evaluate --probabilities`` and each
fold's ``metrics.json`` (key ``probability_scores``, formerly ``soft_labels``). The measures are ``metrics.soft_labels``'s; this module only turns files
into their arrays (docs/soft-labels.md):

- items: posts (post level) or every token of every post (span level), in file order;
- gold soft label of an item and label: the share of the gold file's views that give it (a post's label set;
  a token inside a span of the label), over the views that annotated the item when some carry the ``?`` marker
  (an item no view annotated is left out and counted, ``items_not_annotated``);
- predicted soft label: the mean over the probability file's views of their probabilities, i.e. the expected
  share of annotators who give the label when each view models one annotator (a one-view model, e.g.
  ``data.targets=union``, is its own prediction of the share);
- the prior: each label's mean soft label over the items of ``prior_corpus`` (a fold's train part, or
  ``--prior-from TRAIN``); without one, the gold file's own mean, reported as ``"prior_from": "gold"``
  (``model_prior``: the same per model view, what a calibration's prior fallback mixes in);
- perspectivist error rate: the hard prediction file's view ``v`` against gold view ``v`` (a one-column
  prediction, ``-O``, against every gold view).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from common.errors import UserError
from faina.formats.probability_file import ProbabilityFile
from faina.formats.records import PostCorpus, SpanCorpus, annotated_mask, has_not_annotated
from metrics.soft_labels import (
    ECE_BINS,
    MEASURES,
    error_rates,
    item_cross_entropy,
    prior,
    soft_label_report,
    soft_labels,
)

# the block's key in each fold's metrics.json and in ``faina.evaluate --json``: the scores of a model's probabilities
# against the annotators' shares, not the official scorer's "soft" (partial-match) F1 beside it. Its former name is
# written too, with the same content, for one release (docs/soft-labels.md#names)
BLOCK_KEY = "probability_scores"
FORMER_BLOCK_KEY = "soft_labels"
UNCALIBRATED_KEY = "probability_scores_uncalibrated"


def keyed_blocks(block: dict, uncalibrated: dict | None = None) -> dict:
    """``{BLOCK_KEY: block, FORMER_BLOCK_KEY: block}`` and, for a calibrated model, the scores of its uncalibrated
    probabilities (``UNCALIBRATED_KEY``)."""
    blocks = {BLOCK_KEY: block, FORMER_BLOCK_KEY: block}
    if uncalibrated is not None:
        blocks[UNCALIBRATED_KEY] = uncalibrated
    return blocks


def span_votes(corpus: SpanCorpus, labels: Sequence[str]) -> np.ndarray:
    """0/1 ``[tokens of all posts, V, C]``: whether view ``v`` puts the token inside a span of label ``c``."""
    index = {label: c for c, label in enumerate(labels)}
    blocks = []
    for post in corpus.posts:
        block = np.zeros((len(post.tokens), corpus.num_views, len(labels)), dtype=bool)
        for v, spans in enumerate(post.spans or ()):
            for span in spans or ():
                if span.label in index:
                    block[span.first - 1 : span.last, v, index[span.label]] = True
        blocks.append(block)
    return np.concatenate(blocks) if blocks else np.zeros((0, corpus.num_views, len(labels)), dtype=bool)


def post_votes(corpus: PostCorpus, labels: Sequence[str]) -> np.ndarray:
    """0/1 ``[posts, V, C]``: whether view ``v`` gives the post label ``c``."""
    return np.array(
        [
            [[label in (row.label_set(v) or ()) for label in labels] for v in range(corpus.num_views)]
            for row in corpus.rows
        ],
        dtype=bool,
    ).reshape(len(corpus.rows), corpus.num_views, len(labels))


def votes(corpus: SpanCorpus | PostCorpus, labels: Sequence[str]) -> np.ndarray:
    return span_votes(corpus, labels) if isinstance(corpus, SpanCorpus) else post_votes(corpus, labels)


def annotated_items(corpus: SpanCorpus | PostCorpus) -> np.ndarray | None:
    """``[items, V]`` bool: whether view ``v`` annotated the item's post (a token repeats its post's row); ``None``
    for a file without the not-annotated marker, so its shares and scores are computed exactly as before."""
    if not has_not_annotated(corpus):
        return None
    mask = annotated_mask(corpus)
    if isinstance(corpus, SpanCorpus):
        rows = [row for post, row in zip(corpus.posts, mask) for _ in post.tokens]
    else:
        rows = mask
    return np.array(rows, dtype=bool).reshape(len(rows), corpus.num_views)


def gold_soft_labels(corpus: SpanCorpus | PostCorpus, labels: Sequence[str]) -> np.ndarray:
    """``[items, C]``: the share of the views that annotated each item giving it each label (NaN: none did)."""
    return soft_labels(votes(corpus, labels), annotated_items(corpus))


def label_prior(corpus: SpanCorpus | PostCorpus, labels: Sequence[str]) -> np.ndarray:
    """``[C]``: each label's mean share over the corpus's items, what the scores call the prior."""
    return prior(gold_soft_labels(corpus, labels))


def item_posts(corpus: SpanCorpus | PostCorpus) -> np.ndarray:
    """``[items]``: the post of each item, in the order of ``votes`` (a post at post level, each token's post at span
    level): the groups whose items are not independent (``common.paired_difference``)."""
    if isinstance(corpus, SpanCorpus):
        return np.repeat(np.arange(len(corpus.posts)), [len(post.tokens) for post in corpus.posts])
    return np.arange(len(corpus.rows))


def item_losses(
    gold: SpanCorpus | PostCorpus,
    probabilities: ProbabilityFile,
    labels: Sequence[str],
    prior_corpus: SpanCorpus | PostCorpus,
) -> dict[str, np.ndarray]:
    """``{"model": [items, C], "prior": [items, C]}``: each item's cross-entropy per label, of the file's
    probabilities (pooled over views, as ``soft_scores`` scores them) and of ``prior_corpus``'s prior; their means
    are ``soft_scores``' cross-entropies."""
    labels = list(labels)
    check_probabilities_match(probabilities, gold, labels)
    gold_soft = gold_soft_labels(gold, labels)
    predicted = predicted_soft_labels(in_label_order(probabilities, labels))
    reference = np.broadcast_to(label_prior(prior_corpus, labels), gold_soft.shape)
    return {"model": item_cross_entropy(predicted, gold_soft), "prior": item_cross_entropy(reference, gold_soft)}


def model_prior(corpus: SpanCorpus | PostCorpus, labels: Sequence[str], model_views: int) -> np.ndarray:
    """``[model_views, C]``: the prior of ``corpus`` (a fold's train part) as a model with ``model_views`` views
    predicts it: for a one-view model the scorer's prior itself (each label's mean share of the annotated views);
    for a model with a view per annotator, each view's own mean over the items it annotated (their mean over views
    is the scorer's prior when every view annotates every item). A view that annotated nothing takes the scorer's
    prior; a label without items, 0."""
    every, annotated = votes(corpus, labels), annotated_items(corpus)
    pooled = prior(soft_labels(every, annotated))
    if model_views != corpus.num_views:
        table = pooled[None, :]
    else:
        table = np.stack(
            [
                prior(soft_labels(every[:, v : v + 1], None if annotated is None else annotated[:, v : v + 1]))
                for v in range(model_views)
            ]
        )
        table = np.where(np.isnan(table), pooled[None, :], table)
    return np.nan_to_num(table, nan=0.0).reshape(model_views, len(labels))


def predicted_soft_labels(probabilities: ProbabilityFile) -> np.ndarray:
    """``[items, C]``: the mean over views of the file's probabilities, items in file order."""
    if probabilities.level == "post":
        return np.stack([post.values.mean(axis=0) for post in probabilities.posts])
    return np.concatenate([post.values.mean(axis=0).T for post in probabilities.posts])  # [C, W] -> [W, C]


def check_probabilities_match(
    probabilities: ProbabilityFile, gold: SpanCorpus | PostCorpus, labels: Sequence[str]
) -> None:
    """The probability file must describe the gold file's posts (same order and tokens) with the task's labels."""
    level = "span" if isinstance(gold, SpanCorpus) else "post"
    path = probabilities.path
    if probabilities.level != level:
        raise UserError(
            f"the probability file holds {probabilities.level}-level probabilities, the task is {level}-level",
            path=path,
            fix=f"give the probabilities of a {level}-level model",
        )
    wanted, found = set(labels), set(probabilities.labels)
    if wanted != found:
        missing, extra = sorted(wanted - found), sorted(found - wanted)
        raise UserError(
            f"the probability file's labels are not the task's (missing: {', '.join(missing) or '-'}; "
            f"not in the task: {', '.join(extra) or '-'})",
            path=path,
            fix="score it with the task its model was trained for (a coarse task needs a coarse model: "
            "fine probabilities cannot be turned into coarse ones)",
        )
    items = gold.items
    if len(items) != len(probabilities.posts):
        raise UserError(
            f"the probability file has {len(probabilities.posts)} posts, the gold file {len(items)}",
            path=path,
            fix="give the probabilities written with the prediction of the same file",
        )
    for number, (item, post) in enumerate(zip(items, probabilities.posts), 1):
        if item.post_id != post.post_id:
            raise UserError(
                f"post {number} is {post.post_id!r}, the gold file's is {item.post_id!r}",
                path=path,
                line=number,
                fix="keep the posts in the order of the gold file",
            )
        if level == "span" and tuple(post.tokens or ()) != tuple(item.tokens):
            raise UserError(
                f"post {post.post_id!r} has other tokens than in the gold file ({len(post.tokens or ())}"
                f" vs {len(item.tokens)})",
                path=path,
                line=number,
                fix="give the probabilities written with the prediction of the same file",
            )


def in_label_order(probabilities: ProbabilityFile, labels: Sequence[str]) -> ProbabilityFile:
    """The file with its labels in ``labels``' order (the gold arrays' columns)."""
    order = [probabilities.labels.index(label) for label in labels]
    posts = tuple(type(post)(post.post_id, post.values[:, order], post.tokens) for post in probabilities.posts)
    return ProbabilityFile(probabilities.level, probabilities.views, tuple(labels), posts, probabilities.path)


def soft_scores(
    gold: SpanCorpus | PostCorpus,
    probabilities: ProbabilityFile,
    labels: Sequence[str],
    predicted: SpanCorpus | PostCorpus | None = None,
    prior_corpus: SpanCorpus | PostCorpus | None = None,
) -> dict:
    """The ``probability_scores`` block: model, prior and oracle measures (averaged and per label), and, with the hard
    ``predicted`` corpus, the perspectivist error rate per view."""
    labels = list(labels)
    check_probabilities_match(probabilities, gold, labels)
    probabilities = in_label_order(probabilities, labels)
    # the share is over the views that annotated each item; items no view annotated are NaN, left out
    gold_soft = gold_soft_labels(gold, labels)
    reference = label_prior(prior_corpus if prior_corpus is not None else gold, labels)
    result = {
        "level": probabilities.level,
        "items": int(gold_soft.shape[0]),
        "gold_views": gold.num_views,
        **_unannotated_items(gold_soft),
        "prediction_views": list(probabilities.views),
        "prior_from": "train" if prior_corpus is not None else "gold",
        "ece_bins": ECE_BINS,
    }
    result.update(soft_label_report(predicted_soft_labels(probabilities), gold_soft, reference, labels))
    if predicted is not None:
        result["perspectivist"] = perspectivist(gold, predicted, labels)
    return result


def _unannotated_items(gold_soft: np.ndarray) -> dict:
    """``{"items_not_annotated": n}`` when some items have no annotated view (NaN shares), else nothing."""
    missing = int(np.isnan(gold_soft).all(axis=1).sum()) if gold_soft.size else 0
    return {"items_not_annotated": missing} if missing else {}


def perspectivist(gold: SpanCorpus | PostCorpus, predicted: SpanCorpus | PostCorpus, labels: Sequence[str]) -> dict:
    """``{"error_rate": {"a1": …, …, "avg": …}}``: each gold view against its prediction view (or the one), over
    the items the view annotated."""
    gold_votes, predicted_votes = votes(gold, labels), votes(predicted, labels)
    if predicted_votes.shape[1] != gold_votes.shape[1]:
        predicted_votes = np.repeat(predicted_votes[:, :1], gold_votes.shape[1], axis=1)  # the -O rule
    rates = error_rates(predicted_votes, gold_votes, annotated_items(gold))
    table = {f"a{v + 1}": round(float(rate), 6) for v, rate in enumerate(rates)}
    table["avg"] = round(float(np.mean(rates)), 6)
    return {"error_rate": table}


def format_soft_table(result: dict) -> str:
    """The block ``faina.evaluate --probabilities`` prints under the hard scores."""
    unit = "tokens" if result["level"] == "span" else "posts"
    prior_note = "train" if result["prior_from"] == "train" else "the gold file itself (no --prior-from)"
    heading = (
        f"[probability scores] {result['items']} {unit}, gold = share of {result['gold_views']} view(s); "
        f"prediction = mean of {', '.join(result['prediction_views'])}; prior from {prior_note}; ECE over "
        f"{result['ece_bins']} equal-width bins"
    )
    if result.get("items_not_annotated"):
        heading += f"; {result['items_not_annotated']} {unit} no view annotated left out"
    lines = [heading, f"{'':18}{'model':>10}{'prior':>10}{'oracle':>10}"]
    names = {"cross_entropy": "cross-entropy", "manhattan": "manhattan", "ece": "ece"}
    for measure in MEASURES:
        lines.append(
            f"{names[measure]:18}" + "".join(_cell(result[who][measure]) for who in ("model", "prior", "oracle"))
        )
    lines += [
        "  per label (model / prior / oracle):",
        f"  {'label':32}{'cross-entropy':>24}{'manhattan':>22}{'ece':>22}",
    ]
    for label, row in result["per_label"].items():
        cells = ["/".join(_short(row[who][measure]) for who in ("model", "prior", "oracle")) for measure in MEASURES]
        lines.append(f"  {label:32}{cells[0]:>24}{cells[1]:>22}{cells[2]:>22}")
    if "perspectivist" in result:
        rates = result["perspectivist"]["error_rate"]
        lines.append(
            "[perspectivist] error rate (each view against its annotator): "
            + "; ".join(f"{view}: {value:.4f}" for view, value in rates.items())
        )
    lines.append("-" * 60)
    return "\n".join(lines)


def _cell(value) -> str:
    return f"{value:>10.4f}" if value is not None else f"{'-':>10}"


def _short(value) -> str:
    return f"{value:.3f}" if value is not None else "-"

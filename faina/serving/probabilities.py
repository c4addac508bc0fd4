"""A model's probabilities as a ``probabilities.jsonl`` (``faina.formats.probability_file``), from its predict outputs.

Every prediction path (a fold of a run, ``faina.predict``, ``faina.tag``, an ensemble's submission) turns the same
``predict_step`` outputs into records and into probabilities, so the two files always describe the same posts:
post models give ``probabilities`` ``[B, V, C]``, span models ``inside`` ``[B, V·C, W]`` (CRF marginals of B + I,
``models/crf.py``): calibrated when the model is (``models/calibration.py``), with the uncalibrated ones beside them
(``raw_probabilities`` / ``raw_inside``: the values the thresholds and the CRF path decide on).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from faina.formats.probability_file import PostProbabilities, ProbabilityFile
from faina.formats.records import SpanCorpus
from faina.serving.model_folder import view_names


def probabilities_from_outputs(
    corpus,
    indices: Sequence[int],
    outputs: list[dict],
    labels: Sequence[str],
    num_views: int,
    post_ids: Sequence[str] | None = None,
    raw: bool = False,
) -> ProbabilityFile:
    """The probabilities of the posts at ``indices`` of ``corpus`` (``post_ids``: names to use instead of theirs):
    the ones the model reports (calibrated when it is), or with ``raw`` its uncalibrated ones."""
    span = isinstance(corpus, SpanCorpus)
    key = "inside" if span else "probabilities"
    by_index: dict[int, np.ndarray] = {}
    for batch in outputs:
        if key not in batch:
            raise ValueError(f"the model's predict_step gave no {key!r}: it cannot report probabilities")
        values_of = batch.get(f"raw_{key}", batch[key]) if raw else batch[key]
        for index, values in zip(batch["post_index"].tolist(), values_of):
            by_index[index] = values.float().numpy()
    posts = []
    for position, i in enumerate(indices):
        values = by_index[i]
        if span:
            post = corpus.posts[i]
            values = values.reshape(num_views, len(labels), -1)[:, :, : len(post.tokens)]
            record = PostProbabilities(post.post_id, values, tuple(post.tokens))
        else:
            record = PostProbabilities(corpus.rows[i].post_id, values)
        if post_ids is not None:
            record = PostProbabilities(str(post_ids[position]), record.values, record.tokens)
        posts.append(record)
    return ProbabilityFile(
        "span" if span else "post",
        tuple(view_names(num_views)),
        tuple(labels),
        tuple(posts),
        path=str(getattr(corpus, "path", "<memory>")),
    )

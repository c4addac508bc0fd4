"""The folds of a multi-task run's other entries, drawn from the target entry's folds by post id.

The run splits its target entry as a single-task run splits its data (``cv=kfold`` / ``cv=official``). Every other
entry follows it post by post: a post whose id is in the target's test part of a fold is in that entry's test part,
the same for dev and train, so a post that two entries share (the span and the post level of one corpus) never
trains one entry while it tests the other. Posts the target does not have (another corpus) train in every fold, a
``dev_fraction`` of them drawn from the seed as the entry's own dev part (its dev score, its decision rule and its
calibration need one).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from faina.data.folds import FoldSplit, _train_dev, label_matrix

PARTS = ("train", "dev", "test")


def post_ids(corpus) -> list[str]:
    return [item.post_id for item in corpus.items]


def follow_split(
    target_split: FoldSplit,
    target_ids: Sequence[str],
    ids: Sequence[str],
    label_sets: Sequence[Sequence[str]],
    labels: Sequence[str],
    dev_fraction: float,
    seed: int,
) -> FoldSplit:
    """The split of an entry with posts ``ids`` that follows ``target_split`` of the target's posts ``target_ids``;
    its posts the target lacks go to train and dev (stratified on ``label_sets``, drawn with ``seed``)."""
    # no target ids: another corpus, whose posts share nothing with the target's
    part_of = {target_ids[i]: part for part in PARTS for i in getattr(target_split, part)} if target_ids else {}
    parts: dict[str, list[int]] = {part: [] for part in PARTS}
    rest = []
    for index, post_id in enumerate(ids):
        part = part_of.get(post_id)
        (parts[part] if part else rest).append(index)
    if len(rest) >= 2:
        matrix = label_matrix(label_sets, labels)
        train, dev = _train_dev(np.asarray(rest), matrix, dev_fraction, seed)
        parts["train"] += train.tolist()
        parts["dev"] += dev.tolist()
    else:
        parts["train"] += rest
    return FoldSplit(target_split.fold, *(tuple(sorted(parts[part])) for part in PARTS))

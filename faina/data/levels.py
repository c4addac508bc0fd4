"""What differs between span-level and post-level tasks, in one object per level.

The runner, the prediction loop and the tagger ask the level for features, for the records of predictions and
for the file writer instead of branching on it. What still depends on the level elsewhere is what differs in
kind, not in detail: the model built for it (``model=mvml`` / ``model=mvmd``), the scorer of each level
(``faina.scoring.official``), the zero-shot prompt and parser, and the statistics of each level. Which file
format a level reads and writes is ``faina.formats.any_file``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from faina.data.features import post_features, span_features
from faina.formats.any_file import default_format, write_any
from faina.formats.records import PostCorpus, SpanCorpus
from faina.formats.tsv import rows_with_labels
from metrics.faina_post import PostMicroScore
from metrics.faina_span import SpanOverlapScore
from models.bio import tags_to_spans


def _by_post_index(outputs: list[dict], key: str, decode: Callable) -> dict[int, object]:
    """``decode(index, value)`` of each post's ``key`` in the model outputs, by the post's corpus index."""
    return {
        index: decode(index, value)
        for batch in outputs
        for index, value in zip(batch["post_index"].tolist(), batch[key])
    }


def _span_records(
    corpus: SpanCorpus, indices: Sequence[int], outputs: list[dict], labels: Sequence[str], num_views: int
) -> SpanCorpus:
    """Predicted spans of the posts at ``indices`` (model outputs carry each post's corpus index)."""
    by_index = _by_post_index(
        outputs, "tags", lambda index, tags: tags_to_spans(tags, len(corpus.posts[index].tokens), num_views, labels)
    )
    posts = [corpus.posts[i].with_spans(by_index[i]) for i in indices]
    return SpanCorpus(tuple(posts), num_views, path=corpus.path, trailing_blank_line=corpus.trailing_blank_line)


def _post_records(
    corpus: PostCorpus, indices: Sequence[int], outputs: list[dict], labels: Sequence[str], num_views: int
) -> PostCorpus:
    """Predicted label sets of the posts at ``indices``."""
    by_index = _by_post_index(
        outputs,
        "predicted",
        lambda _, decisions: [[labels[c] for c in torch.nonzero(view).flatten().tolist()] for view in decisions],
    )
    return rows_with_labels(subset(corpus, indices), [by_index[i] for i in indices])


@dataclass(frozen=True)
class Level:
    name: str
    features: Callable
    records: Callable
    metric: Callable  # (inventory, num_views) -> the torchmetrics Metric that selects checkpoints on dev

    @property
    def file_ext(self) -> str:
        """The extension of the files the runner writes for this level: its default format's (the official one)."""
        return default_format(self.name).suffix.removeprefix(".")

    @staticmethod
    def write(corpus: SpanCorpus | PostCorpus, path: str | Path) -> Path:
        """Write records in the format of ``path``'s extension (``faina.formats.any_file.write_any``)."""
        return write_any(corpus, path)

    def encode(
        self, corpus, tokenizer, labels: Sequence[str], num_views: int, context: Sequence[str] = ()
    ) -> list[dict]:
        """Every post's features; ``context``: the header fields put before its text (``data.context``)."""
        return [
            self.features(item, i, tokenizer, labels, num_views, tuple(context)) for i, item in enumerate(corpus.items)
        ]


def subset(corpus: SpanCorpus | PostCorpus, indices: Sequence[int]):
    """The posts at ``indices`` as a corpus of their own (a fold's gold file)."""
    if isinstance(corpus, SpanCorpus):
        return SpanCorpus(
            tuple(corpus.posts[i] for i in indices),
            corpus.num_views,
            path=corpus.path,
            trailing_blank_line=corpus.trailing_blank_line,
        )
    return PostCorpus(tuple(corpus.rows[i] for i in indices), corpus.num_views, path=corpus.path)


LEVELS = {
    "span": Level(
        "span",
        span_features,
        _span_records,
        lambda inventory, num_views: SpanOverlapScore(inventory, num_views=num_views, mode="strict"),
    ),
    "post": Level(
        "post",
        post_features,
        _post_records,
        lambda inventory, num_views: PostMicroScore(num_views=num_views),
    ),
}

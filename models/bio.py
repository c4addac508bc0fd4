"""Conversion between spans and the BIO tag matrix of the MVMD decoders.

Decoder ``d = view * C + c`` tags the words of a post for label ``labels[c]`` of annotator ``view``
with ``O=0, B=1, I=2``. Word ``w`` (0-based) is the file's token ``w + 1`` (records are 1-based).
The DataModule uses ``spans_to_tags`` to build targets, the models use ``tags_to_spans`` to turn
decoded tags back into records, so both directions live here and are tested as a round trip.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from common.records import Span

O, B, I = 0, 1, 2


def decoder_index(view: int, label_index: int, num_labels: int) -> int:
    return view * num_labels + label_index


def spans_to_tags(spans_per_view: Sequence[Sequence[Span]], num_words: int, labels: Sequence[str]) -> torch.Tensor:
    """Tags ``[V * C, num_words]`` for one post.

    Raises ``ValueError`` on a span label outside ``labels``, a span outside the post, or two spans of
    the same label overlapping in one view (BIO cannot encode that; the Faina reader rules it out and
    coarse derivation merges such spans).
    """
    index = {label: i for i, label in enumerate(labels)}
    tags = torch.zeros(len(spans_per_view) * len(labels), num_words, dtype=torch.long)
    for view, spans in enumerate(spans_per_view):
        for span in spans:
            if span.label not in index:
                raise ValueError(f"span label {span.label!r} is not one of the task's labels {list(labels)}")
            if not 1 <= span.first <= span.last <= num_words:
                raise ValueError(f"span {span} lies outside the post's {num_words} tokens")
            row = tags[decoder_index(view, index[span.label], len(labels))]
            first, last = span.first - 1, span.last  # 0-based, exclusive end
            if bool((row[first:last] != O).any()):
                raise ValueError(f"view {view + 1}: two {span.label} spans overlap at tokens {span.first}-{span.last}")
            row[first] = B
            row[first + 1 : last] = I
    return tags


def tags_to_spans(tags: torch.Tensor, num_words: int, num_views: int, labels: Sequence[str]) -> list[list[Span]]:
    """Spans per view from one post's tags ``[V * C, W]`` (only the first ``num_words`` words count).

    ``B`` opens a span, ``I`` extends it; an ``I`` with no open span (impossible for the constrained
    CRF, possible in hand-made tags) opens one, as conlleval does, so no tagged word is lost.
    """
    num_labels = len(labels)
    if tags.shape[0] != num_views * num_labels:
        raise ValueError(f"expected {num_views * num_labels} decoders, got tags of shape {tuple(tags.shape)}")
    rows = tags[:, :num_words].tolist()
    spans: list[list[Span]] = [[] for _ in range(num_views)]
    for d, row in enumerate(rows):
        view, label = divmod(d, num_labels)
        start = None
        for w, tag in enumerate(row):
            if tag == B or (tag == I and start is None):
                if start is not None:
                    spans[view].append(Span(start + 1, w, labels[label]))
                start = w
            elif tag == O and start is not None:
                spans[view].append(Span(start + 1, w, labels[label]))
                start = None
        if start is not None:
            spans[view].append(Span(start + 1, len(row), labels[label]))
    return [sorted(view_spans, key=lambda s: (s.first, s.label)) for view_spans in spans]

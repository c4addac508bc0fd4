"""Model features of a corpus, built with ``Dataset.map`` and cached on disk by fingerprint (``paths.feature_cache``).

``encode_cached`` turns a corpus into model features with ``Dataset.map`` over the one encoding rule of
``faina.data.features``; the result is stored under a fingerprint of (the data, the tokenizer, the encoding code,
labels, views), so a rerun, another fold or a sweep trial reads it back instead of tokenising again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from common.progress import datasets_bars
from faina.data.hf_datasets import TOKENS, corpus_to_dataset, labels_column, tag_column
from faina.formats.conll import _PostParser
from faina.formats.labels import LabelInventory
from faina.formats.records import NOT_ANNOTATED, Post, PostCorpus, PostRow, SpanCorpus

FEATURES_VERSION = 3  # bump when the encoding rule changes, so old cached features are not reused


def _record(row: dict, level: str, num_views: int):
    if level == "span":
        spans = row.get("_spans")
        return Post(
            row["post_id"], row["post_date"], row["post_topic_keywords"], row["post_text"], tuple(row[TOKENS]), spans
        )
    return PostRow(
        row["post_id"],
        row["post_date"],
        row["post_topic_keywords"],
        row["post_text"],
        tuple(_view_labels(row[labels_column(v)]) for v in range(num_views)),
    )


def _view_labels(cell: list[str]) -> tuple[str, ...] | None:
    """A post-level dataset column's labels of one view; ``[NOT_ANNOTATED]`` is a view that did not annotate."""
    return None if list(cell) == [NOT_ANNOTATED] else tuple(cell)


def _encode_row(
    row: dict,
    index: int,
    level: str,
    tokenizer,
    labels: list[str],
    num_views: int,
    inventory: LabelInventory,
    context: list[str],
):
    """``Dataset.map`` function: one post's features from ``faina.data.features`` (the one encoding rule)."""
    from faina.data.levels import LEVELS

    if level == "span":
        parser = _PostParser(f"<row {index}>", num_views, repair=False)
        cells = [row[tag_column(v)] for v in range(num_views)]
        if any(cell != "" for view in cells for cell in view):
            for w in range(len(row[TOKENS])):
                parser.add_token(w + 1, [view[w] for view in cells], w + 1, set(labels), inventory)
            row = {**row, "_spans": parser.finish()}
    feature = LEVELS[level].features(_record(row, level, num_views), index, tokenizer, labels, num_views, context)
    out = {"input_ids": list(feature["input_ids"]), "word_starts": list(feature["word_starts"]), "post_index": index}
    for key in ("tags", "labels"):
        out[key] = feature[key].tolist() if key in feature else None
    out["annotated"] = feature.get("annotated")
    return out


def tokenizer_fingerprint(tokenizer) -> str:
    """A hash of what the tokenizer does: a fast tokenizer's serialised pipeline (quick to hash) instead of pickling it."""
    from datasets.fingerprint import Hasher

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return Hasher.hash([type(tokenizer).__name__, backend.to_str(), str(tokenizer.special_tokens_map)])
    return Hasher.hash(tokenizer)


def encode_cached(
    corpus: SpanCorpus | PostCorpus,
    level: str,
    tokenizer,
    labels: Sequence[str],
    num_views: int,
    cache_dir: str | Path | None,
    context: Sequence[str] = (),
) -> tuple[list[dict], dict]:
    """Model features of ``corpus`` (as ``Level.encode`` gives them) and a note of how they were obtained.

    With a ``cache_dir`` the features are computed by ``Dataset.map`` into an Arrow file named by the map's
    fingerprint and read back from it next time; without one, ``Level.encode`` computes them directly.
    """
    import torch

    from faina.data.levels import LEVELS

    started = time.perf_counter()
    if cache_dir is None:
        features = LEVELS[level].encode(corpus, tokenizer, list(labels), num_views, context)
        return features, {"cached": False, "seconds": time.perf_counter() - started, "file": None}
    from datasets.fingerprint import Hasher

    dataset = corpus_to_dataset(corpus)
    kwargs = {
        "level": level,
        "tokenizer": tokenizer,
        "labels": list(labels),
        "num_views": num_views,
        "inventory": LabelInventory.from_dict({"name": "task", "fine": list(labels)}, source="the task's labels"),
        "context": list(context),
    }
    identity = {**kwargs, "tokenizer": tokenizer_fingerprint(tokenizer)}
    fingerprint = Hasher.hash([dataset._fingerprint, _encode_row, identity, FEATURES_VERSION])
    cache_file = Path(cache_dir) / f"features-{fingerprint}.arrow"
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    existed = cache_file.is_file()
    with datasets_bars():  # the library's bar on a terminal only (common/progress.py)
        encoded = dataset.map(
            _encode_row,
            with_indices=True,
            fn_kwargs=kwargs,
            remove_columns=dataset.column_names,
            cache_file_name=str(cache_file),
            new_fingerprint=fingerprint,
            load_from_cache_file=True,
            desc="tokenising posts",
        )
    features = []
    for row in encoded:
        feature = {"input_ids": row["input_ids"], "word_starts": row["word_starts"], "post_index": row["post_index"]}
        if row["tags"] is not None:
            feature["tags"] = torch.tensor(row["tags"], dtype=torch.long)
        if row["labels"] is not None:
            feature["labels"] = torch.tensor(row["labels"], dtype=torch.float32)
        if row.get("annotated") is not None:
            feature["annotated"] = list(row["annotated"])
        features.append(feature)
    return features, {"cached": existed, "seconds": time.perf_counter() - started, "file": str(cache_file)}

"""Posts → model inputs: subword ids, word↔subword alignment and targets, and the batch collation.

Each word gets the subwords the tokenizer gives it in the post's running text (``word_pieces``: its own pieces by
``is_split_into_words`` for WordPiece and SentencePiece, character offsets for byte-level BPE); its label goes to
its first subword (``word_starts``), as in HF ``run_ner.py``. A word the tokenizer maps to nothing (e.g. a
lone control character) gets the unknown token, so every token of every post receives a prediction.
Posts are never cut here: ``models.encoder.ChunkedEncoder`` encodes long posts in windows. With ``context`` (the
header fields of ``data.context``, ``faina.data.post_context``) the fields' subwords come first and the word starts
point past them.

A post with a view that did not annotate it (the ``?`` marker: ``None`` in the records) gets an ``annotated``
list (one bool per view) beside its targets, whose missing views hold zeros; the collator turns it into the
batch's ``annotated`` ``[B, V]`` mask (all True for the other posts) that the models' losses and dev scores use, so
a missing annotation is never trained or scored as "no label".
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from faina.data.post_context import context_ids
from faina.formats.records import Post, PostRow
from models.bio import spans_to_tags


def filler_id(tokenizer) -> int:
    """The id that stands for a word the tokenizer maps to nothing: its unknown token, or for a byte-level
    tokenizer, which has none, its end-of-sequence (else beginning-of-sequence, else 0)."""
    for token_id in (tokenizer.unk_token_id, tokenizer.eos_token_id, tokenizer.bos_token_id):
        if token_id is not None:
            return token_id
    return 0


def splits_words_as_text(tokenizer) -> bool:
    """Whether tokenising words one by one (``is_split_into_words``) gives the ids of the same words as running text.

    True for WordPiece and SentencePiece (a word's first piece carries its space mark either way); False for
    byte-level BPE (GPT-2, RoBERTa, Llama 3, SmolLM2), where a word inside a text is read with its leading space
    ("Ġword") and a word alone without it: such a model would be fed ids it never saw in pre-training."""
    cached = getattr(tokenizer, "_fallacy_splits_words_as_text", None)
    if cached is None:
        probe = ["una", "prova"]
        alone = tokenizer(probe, is_split_into_words=True, add_special_tokens=False)["input_ids"]
        cached = alone == tokenizer(" ".join(probe), add_special_tokens=False)["input_ids"]
        tokenizer._fallacy_splits_words_as_text = cached
    return cached


def word_pieces(words: Sequence[str], tokenizer) -> list[list[int]]:
    """The subword ids of each word, as the tokenizer reads them in the post's running text (words joined by
    single spaces): by ``word_ids()`` where that is the same, else by each token's character offsets (a token that
    is only the space before a word belongs to that word)."""
    pieces: list[list[int]] = [[] for _ in words]
    if splits_words_as_text(tokenizer):
        encoding = tokenizer(list(words), is_split_into_words=True, add_special_tokens=False)
        for position, word in enumerate(encoding.word_ids()):
            if word is not None:
                pieces[word].append(encoding["input_ids"][position])
        return pieces
    owner: list[int] = []  # the word of each character of the text; a space belongs to the word after it
    for index, word in enumerate(words):
        owner.extend([index] * (len(word) + (1 if index else 0)))
    encoding = tokenizer(" ".join(words), add_special_tokens=False, return_offsets_mapping=True)
    for token, (start, end) in zip(encoding["input_ids"], encoding["offset_mapping"]):
        if end > start:
            pieces[owner[end - 1]].append(token)
    return pieces


def subword_ids(words: Sequence[str], tokenizer) -> tuple[list[int], list[int]]:
    """Content subword ids of a pre-tokenised post and the index of each word's first subword."""
    pieces = word_pieces(words, tokenizer)
    ids: list[int] = []
    starts: list[int] = []
    for of_word in pieces:
        starts.append(len(ids))
        ids.extend(of_word or [filler_id(tokenizer)])
    return ids, starts


def span_features(
    post: Post, index: int, tokenizer, labels: Sequence[str], num_views: int, context: Sequence[str] = ()
) -> dict:
    prefix = context_ids(post, context, tokenizer)
    ids, starts = subword_ids(post.tokens, tokenizer)
    feature = {"input_ids": prefix + ids, "word_starts": [len(prefix) + start for start in starts], "post_index": index}
    if post.spans is not None:
        feature["tags"] = spans_to_tags([view or () for view in post.spans], len(post.tokens), labels)
        if any(view is None for view in post.spans):
            feature["annotated"] = [view is not None for view in post.spans]
    return feature


def post_features(
    row: PostRow, index: int, tokenizer, labels: Sequence[str], num_views: int, context: Sequence[str] = ()
) -> dict:
    text_ids = tokenizer(row.text, add_special_tokens=False)["input_ids"] or [filler_id(tokenizer)]
    ids = context_ids(row, context, tokenizer) + text_ids
    targets = torch.zeros(num_views, len(labels))
    position = {label: i for i, label in enumerate(labels)}
    annotated = [True] * num_views
    for view in range(min(num_views, len(row.labels))):
        labels_of_view = row.label_set(view)
        if labels_of_view is None:
            annotated[view] = False
            continue
        for label in labels_of_view:
            targets[view, position[label]] = 1.0
    feature = {"input_ids": ids, "word_starts": [0], "post_index": index, "labels": targets}
    if not all(annotated):
        feature["annotated"] = annotated
    return feature


class Collator:
    """Pads a list of features into the batch dict the models expect (see models/ docstrings)."""

    def __init__(self, pad_token_id: int | None):
        # tokenizers of decoder LLMs often have no pad token; padded positions are masked, any id does
        self.pad_token_id = pad_token_id if pad_token_id is not None else 0

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        size = len(features)
        max_t = max(len(f["input_ids"]) for f in features)
        max_w = max(len(f["word_starts"]) for f in features)
        input_ids = torch.full((size, max_t), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((size, max_t), dtype=torch.long)
        starts = torch.zeros((size, max_w), dtype=torch.long)
        word_mask = torch.zeros((size, max_w), dtype=torch.bool)
        for i, f in enumerate(features):
            t, w = len(f["input_ids"]), len(f["word_starts"])
            input_ids[i, :t] = torch.tensor(f["input_ids"])
            attention[i, :t] = 1
            starts[i, :w] = torch.tensor(f["word_starts"])
            word_mask[i, :w] = True
        batch = {
            "input_ids": input_ids,
            "attention_mask": attention,
            "word_starts": starts,
            "word_mask": word_mask,
            "post_index": torch.tensor([f["post_index"] for f in features]),
        }
        for prefix in ("", "gold_"):
            self._targets(batch, features, prefix)
        return batch

    @staticmethod
    def _targets(batch: dict, features: list[dict], prefix: str) -> None:
        """``{prefix}tags`` / ``{prefix}labels`` and ``{prefix}annotated`` of the features into ``batch``."""
        if f"{prefix}tags" in features[0]:
            first = features[0][f"{prefix}tags"]
            tags = torch.zeros((len(features), len(first), batch["word_mask"].shape[1]), dtype=torch.long)
            for i, f in enumerate(features):
                cell = torch.as_tensor(f[f"{prefix}tags"])
                tags[i, :, : cell.shape[1]] = cell
            batch[f"{prefix}tags"] = tags
        if f"{prefix}labels" in features[0]:
            batch[f"{prefix}labels"] = torch.stack([torch.as_tensor(f[f"{prefix}labels"]) for f in features])
        if any(f"{prefix}annotated" in f for f in features):
            views = (
                batch[f"{prefix}labels"].shape[1]
                if f"{prefix}labels" in batch
                else len(next(f for f in features if f"{prefix}annotated" in f)[f"{prefix}annotated"])
            )
            batch[f"{prefix}annotated"] = torch.tensor(
                [list(f[f"{prefix}annotated"]) if f"{prefix}annotated" in f else [True] * views for f in features],
                dtype=torch.bool,
            )


def with_gold_views(features: Sequence[dict], gold_features: Sequence[dict]) -> list[dict]:
    """``features`` (the aggregated targets a model trains on) with each post's every-view targets beside them as
    ``gold_tags`` / ``gold_labels`` / ``gold_annotated``: what dev is scored and decision rules are fitted against
    (``models.base.scoring_targets``), as the evaluator scores the test files. Both lists encode the same posts in
    the same order (``faina.data.targets.aggregate_corpus`` keeps them)."""
    if len(features) != len(gold_features):
        raise ValueError(f"{len(features)} features but {len(gold_features)} gold features: not the same posts")
    out = []
    for feature, gold in zip(features, gold_features):
        if feature["post_index"] != gold["post_index"] or feature["input_ids"] != gold["input_ids"]:
            raise ValueError(f"post {feature['post_index']}: the aggregated and the gold features differ in their text")
        extra = {f"gold_{key}": gold[key] for key in ("tags", "labels", "annotated") if gold.get(key) is not None}
        out.append({**feature, **extra})
    return out

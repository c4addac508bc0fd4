"""Raw text in, fallacies out: ``FallacyTagger.load(path)(["post one", "post two"])``.

Each post is tokenised with Faina's rule (``faina.formats.tokenization``), encoded exactly like a CoNLL post
(``faina.data.levels``), predicted in batches on CPU or GPU through the model's own ``predict_step``, and turned
back into spans with token and character offsets in the text the user gave. Offsets are 0-based with an
exclusive end, like Python slices: ``text[start_char:end_char]`` is the span's text and
``tokens[start_token:end_token]`` its tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from common.errors import UserError
from common.progress import progress
from faina.data.features import Collator
from faina.data.levels import LEVELS
from faina.formats.probability_file import ProbabilityFile
from faina.formats.records import Post, PostCorpus, PostRow, SpanCorpus
from faina.formats.tokenization import Token, tokenize_with_offsets
from faina.serving.fold_model import load_tokenizer
from faina.serving.model_folder import view_names
from faina.serving.probabilities import probabilities_from_outputs


def _load_model(path: str | Path):
    """``(model, meta)`` for a model folder or a fold folder: the one place the tagger loads models.

    Any module whose ``predict_step`` returns what MVML/MVMD return (e.g. an ensemble of folds) works.
    """
    from faina.serving.loading import load_predictor

    return load_predictor(path)


@dataclass(frozen=True)
class TaggedSpan:
    view: str
    label: str
    start_char: int
    end_char: int
    start_token: int
    end_token: int
    text: str


@dataclass(frozen=True)
class TaggedPost:
    """One post's prediction: its tokens, spans (span models) or label sets per view (post models)."""

    text: str
    tokens: tuple[Token, ...]
    spans: tuple[TaggedSpan, ...] = ()
    post_labels: dict[str, list[str]] | None = None

    def to_dict(self) -> dict:
        """The JSON object of ``python -m faina.tag --json``."""
        result = {
            "text": self.text,
            "tokens": [t.text for t in self.tokens],
            "spans": [vars(span).copy() for span in self.spans],
        }
        if self.post_labels is not None:
            result["post_labels"] = self.post_labels
        return result


def check_texts(texts: Sequence[str], where: str = "post") -> list[list[Token]]:
    """Tokens of every text; an empty (or whitespace-only) text is a ``UserError`` naming it."""
    if isinstance(texts, str):
        raise UserError("the tagger takes a list of posts, got one string", fix='call tagger(["my post"])')
    tokenised = []
    for number, text in enumerate(texts, 1):
        if not isinstance(text, str):
            raise UserError(f"{where} {number} is a {type(text).__name__}, not text", fix="give each post as a string")
        tokens = tokenize_with_offsets(text)
        if not tokens:
            raise UserError(
                f"{where} {number} is empty (no words or punctuation to tag)",
                fix="remove the empty post, or give it some text",
            )
        tokenised.append(tokens)
    return tokenised


class FallacyTagger:
    """A trained Faina model (folder from ``python -m faina.export`` or a run's fold folder) for raw posts."""

    def __init__(
        self,
        model,
        meta: dict,
        device: str | torch.device | None = None,
        batch_size: int = 32,
        topic: str = "",
        date: str = "",
    ):
        """``topic`` / ``date``: the posts' header values, read by a model trained with ``data.context``."""
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model = model.to(self.device).eval()
        self.meta = meta
        self.level = LEVELS[meta["level"]]
        self.labels = list(meta["labels"])
        self.num_views = int(meta["num_views"])
        self.views = view_names(self.num_views)
        self.batch_size = batch_size
        self.tokenizer = load_tokenizer(meta["encoder"])
        self.collate = Collator(self.tokenizer.pad_token_id)
        self.context = tuple(meta.get("context", ()))
        self.topic, self.date = topic, date

    @classmethod
    def load(
        cls,
        path: str | Path,
        device: str | torch.device | None = None,
        batch_size: int = 32,
        topic: str = "",
        date: str = "",
    ) -> FallacyTagger:
        model, meta = _load_model(path)
        return cls(model, meta, device=device, batch_size=batch_size, topic=topic, date=date)

    def _corpus(self, texts: Sequence[str], tokenised: list[list[Token]]):
        if self.meta["level"] == "span":
            posts = tuple(
                Post(str(i), self.date, self.topic, text, tuple(t.text for t in tokens), None)
                for i, (text, tokens) in enumerate(zip(texts, tokenised))
            )
            return SpanCorpus(posts, self.num_views)
        rows = tuple(
            PostRow(str(i), self.date, self.topic, text, ((),) * self.num_views) for i, text in enumerate(texts)
        )
        return PostCorpus(rows, self.num_views)

    def __call__(self, texts: Sequence[str]) -> list[TaggedPost]:
        return self._tag(texts)[0]

    def tag_with_probabilities(
        self, texts: Sequence[str], uncalibrated: bool = False
    ) -> tuple[list[TaggedPost], ProbabilityFile]:
        """The tagged posts and, from the same pass, their probabilities (``probabilities.jsonl`` layout; posts
        named ``"1"``, ``"2"``, ... in the order given, tokens as ``TaggedPost.tokens``): calibrated when the model
        is, or with ``uncalibrated`` its raw ones."""
        tagged, corpus, outputs = self._tag(texts)
        indices = range(len(tagged))
        names = [str(i + 1) for i in indices]
        return tagged, probabilities_from_outputs(
            corpus, indices, outputs, self.labels, self.num_views, post_ids=names, raw=uncalibrated
        )

    @torch.inference_mode()
    def _tag(self, texts: Sequence[str]) -> tuple[list[TaggedPost], SpanCorpus | PostCorpus, list[dict]]:
        tokenised = check_texts(texts)
        corpus = self._corpus(texts, tokenised)
        features = self.level.encode(corpus, self.tokenizer, self.labels, self.num_views, self.context)
        outputs = []
        starts = range(0, len(features), self.batch_size)
        for start in progress(starts, f"tagging {len(features)} posts"):
            batch = self.collate(features[start : start + self.batch_size])
            batch = {k: v.to(self.device) for k, v in batch.items()}
            outputs.append(self.model.predict_step(batch, start // self.batch_size))
        records = self.level.records(corpus, range(len(features)), outputs, self.labels, self.num_views)
        if isinstance(records, SpanCorpus):
            tagged = [self._spans(text, tokens, post) for text, tokens, post in zip(texts, tokenised, records.posts)]
        else:
            tagged = [
                TaggedPost(
                    text, tuple(tokens), (), {view: sorted(row.label_set(v)) for v, view in enumerate(self.views)}
                )
                for text, tokens, row in zip(texts, tokenised, records.rows)
            ]
        return tagged, corpus, outputs

    def _spans(self, text: str, tokens: list[Token], post: Post) -> TaggedPost:
        spans = []
        for v, view_spans in enumerate(post.spans or ()):
            for span in view_spans:  # records are 1-based inclusive; offsets here are 0-based, end exclusive
                first, last = tokens[span.first - 1], tokens[span.last - 1]
                spans.append(
                    TaggedSpan(
                        self.views[v],
                        span.label,
                        first.start,
                        last.end,
                        span.first - 1,
                        span.last,
                        text[first.start : last.end],
                    )
                )
        spans.sort(key=lambda s: (s.view, s.start_token, s.end_token, s.label))
        return TaggedPost(text, tuple(tokens), tuple(spans))

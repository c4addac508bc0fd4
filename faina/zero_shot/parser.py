"""Turn a language model's free text into Faina predictions, counting every repair it needed.

LLM outputs are noisy (the Faina paper's Figures 5-6): prompt continuations, explanations, labels that are
not in the inventory, repeated items, token indices that do not exist. The parser keeps only items in the
requested bracket format (``[first-last = Label]`` for spans, ``[Label]`` for posts, ``[None]``), maps label
variants to the inventory (case, accents, separators, plurals, British/American spelling, listed aliases,
and unambiguous shortened names such as "Name calling"), ignores label names mentioned outside brackets,
and clips or rejects out-of-range indices. Each of these decisions is counted in ``ParsedAnswer.counts``
so the audit can report how much of a score rests on repairs.
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from common.errors import UserError
from faina.formats.records import Span
from faina.zero_shot.definitions import LabelDefinitions

ITEM_RE = re.compile(r"\[([^\[\]\n]{0,300})\]")
# [first-last = Label]; also tolerated: en/em dashes, "to", "..", a single index, ":" or "->" before the label
SPAN_ITEM_RE = re.compile(r"^\s*#?(\d+)(?:\s*(?:-|–|—|\.\.+|to)\s*#?(\d+))?\s*(?:=+|:|->|→)\s*(.+?)\s*$", re.IGNORECASE)
NONE_RE = re.compile(r"^\s*(?:none|no fallac(?:y|ies)(?: found)?|nothing(?: found)?|n/?a)\s*\.?\s*$", re.IGNORECASE)
PLACEHOLDERS = frozenset({"USER", "URL", "EMAIL", "PHONE"})  # anonymisation markers of the posts' text
LABEL_SPLIT_RE = re.compile(r"\s*[,;|/+]\s*")
STRIP_CHARS = " \t\"'`*_.!?“”‘’«»"
FILLER_WORDS = frozenset({"fallacy", "the", "label", "category"})
STOP_WORDS = frozenset({"the", "to", "of", "or", "a", "an", "and", "in", "on", "by", "from"})
OUT_OF_RANGE_POLICIES = ("clip", "reject")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


class LabelMatcher:
    """Maps a label as a model wrote it to an inventory label of the task, or ``None``."""

    def __init__(self, labels: Sequence[str], definitions: LabelDefinitions):
        self.labels = tuple(labels)
        self.spelling = definitions.spelling
        self.keys = {label: self.key(label) for label in self.labels}
        self.exact: dict[tuple[str, ...], str] = {key: label for label, key in self.keys.items()}
        for label, aliases in definitions.aliases.items():
            if label in self.keys:
                for alias in aliases:
                    self.exact.setdefault(self.key(alias), label)

    def key(self, text: str) -> tuple[str, ...]:
        """Lower-case ASCII words, spelling unified, singular: the form two spellings of a label share."""
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()
        words = [self.spelling.get(w, w) for w in re.findall(r"[a-z0-9]+", text)]
        return tuple(_singular(w) for w in words)

    def match(self, text: str) -> tuple[str | None, bool]:
        """``(label, verbatim)``: the inventory label (``None`` if unknown) and whether it was written exactly."""
        text = text.strip(STRIP_CHARS)
        if text in self.keys:
            return text, True
        words = self.key(text)
        while words and words[-1] in FILLER_WORDS:
            words = words[:-1]
        while words and words[0] in FILLER_WORDS:
            words = words[1:]
        if not words:
            return None, False
        if words in self.exact:
            return self.exact[words], False
        if not any(len(w) >= 4 and w not in STOP_WORDS for w in words):
            return None, False
        found = [label for label, key in self.keys.items() if _contains(key, words)]
        return (found[0], False) if len(found) == 1 else (None, False)

    def mentions(self, text: str) -> int:
        """How many times inventory labels (or their aliases) are named in running text."""
        words = self.key(text)
        return sum(_count(words, key) for key in self.exact)


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    return _count(haystack, needle) > 0


def _count(haystack: tuple[str, ...], needle: tuple[str, ...]) -> int:
    n = len(needle)
    return sum(1 for i in range(len(haystack) - n + 1) if haystack[i : i + n] == needle) if n else 0


@dataclass
class ParsedAnswer:
    """What was kept from one output (spans or labels), the text outside items, and the repair counts."""

    predictions: tuple  # Span items (span tasks) or label strings (post tasks), deduplicated, sorted
    said_none: bool
    residual: str  # the output with its bracket items removed (explanations, continuations)
    counts: Counter = field(default_factory=Counter)
    unknown_labels: tuple[str, ...] = ()

    @property
    def has_items(self) -> bool:
        """Whether the output attempted an answer in the bracket format at all."""
        return self.counts["items"] > 0


def _scan(text: str) -> tuple[list[str], str, Counter]:
    """Bracket contents (placeholders such as [URL] skipped) and the text left around them."""
    counts: Counter = Counter()
    contents = []
    for match in ITEM_RE.finditer(text):
        content = match.group(1).strip()
        if content.upper() in PLACEHOLDERS:
            counts["placeholders"] += 1
            continue
        counts["items"] += 1
        contents.append(content)
    return contents, ITEM_RE.sub(" ", text), counts


class _AnswerParser(ABC):
    """The loop both levels share: bracket items in turn, ``[None]`` noted, each other item turned into
    predictions by the level's ``_items``, repeats counted, then the level's ``_combine`` of what was kept."""

    needs_tokens = False  # whether ``parse`` needs the post's number of tokens (span indices are checked)

    def __init__(self, matcher: LabelMatcher, out_of_range: str = "clip"):
        self.matcher = matcher

    def parse(self, text: str, num_tokens: int | None = None) -> ParsedAnswer:
        if self.needs_tokens and num_tokens is None:
            raise ValueError("span answers need the number of tokens of the post")
        contents, residual, counts = _scan(text)
        kept: list = []
        unknown: list[str] = []
        said_none = False
        for content in contents:
            if NONE_RE.match(content):
                said_none = True
                counts["none"] += 1
                continue
            kept += self._items(content, num_tokens, counts, unknown)
        counts["repeated"] += len(kept) - len(set(kept))
        return self._finish(self._combine(kept, counts), said_none, residual, counts, unknown)

    @abstractmethod
    def _items(self, content: str, num_tokens: int | None, counts: Counter, unknown: list[str]) -> list:
        """The predictions of one bracket item (defined by each level)."""

    @abstractmethod
    def _combine(self, kept: list, counts: Counter) -> Sequence:
        """The answer's predictions from every item's (defined by each level)."""

    def _labels(self, text: str, counts: Counter, unknown: list[str]) -> list[str]:
        labels = []
        for part in LABEL_SPLIT_RE.split(text.strip(STRIP_CHARS)):
            if not part.strip(STRIP_CHARS):
                continue
            label, verbatim = self.matcher.match(part)
            if label is None:
                counts["unknown_label"] += 1
                unknown.append(part.strip(STRIP_CHARS))
                continue
            counts["label_normalised"] += 0 if verbatim else 1
            labels.append(label)
        return labels

    def _finish(
        self, kept: Sequence, said_none: bool, residual: str, counts: Counter, unknown: list[str]
    ) -> ParsedAnswer:
        if said_none and kept:
            counts["none_with_items"] += 1
        counts["outside_mentions"] += self.matcher.mentions(residual)
        return ParsedAnswer(tuple(sorted(kept)), said_none, residual, counts, tuple(unknown))


class PostAnswerParser(_AnswerParser):
    """``[Label]`` items; a span-style item ``[3-5 = Label]`` still yields its label (counted)."""

    def _items(self, content: str, num_tokens: int | None, counts: Counter, unknown: list[str]) -> list[str]:
        span_like = SPAN_ITEM_RE.match(content)
        if span_like:
            counts["indices_ignored"] += 1
            content = span_like.group(3)
        return self._labels(content, counts, unknown)

    def _combine(self, kept: list[str], counts: Counter) -> set[str]:
        return set(kept)


class SpanAnswerParser(_AnswerParser):
    """``[first-last = Label]`` items with indices checked against the post's ``num_tokens`` tokens."""

    needs_tokens = True

    def __init__(self, matcher: LabelMatcher, out_of_range: str = "clip"):
        super().__init__(matcher)
        if out_of_range not in OUT_OF_RANGE_POLICIES:
            raise UserError(
                f"unknown out-of-range policy {out_of_range!r}",
                fix=f"set task.zero_shot.out_of_range to one of {', '.join(OUT_OF_RANGE_POLICIES)}",
            )
        self.out_of_range = out_of_range

    def _items(self, content: str, num_tokens: int | None, counts: Counter, unknown: list[str]) -> list[Span]:
        match = SPAN_ITEM_RE.match(content)
        if not match:
            counts["malformed"] += 1
            return []
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        labels = self._labels(match.group(3), counts, unknown)
        token_range = self._check_range(first, last, num_tokens, counts)
        if token_range is None:
            return []
        return [Span(token_range[0], token_range[1], label) for label in labels]

    def _combine(self, kept: list[Span], counts: Counter) -> list[Span]:
        return _merge_same_label(sorted(set(kept), key=lambda s: (s.label, s.first, s.last)), counts)

    def _check_range(self, first: int, last: int, n: int, counts: Counter) -> tuple[int, int] | None:
        if first > last:
            counts["reversed_range"] += 1
            first, last = last, first
        if 1 <= first and last <= n:
            return first, last
        if self.out_of_range == "reject" or last < 1 or first > n:
            counts["out_of_range_rejected"] += 1
            return None
        counts["out_of_range_clipped"] += 1
        return max(first, 1), min(last, n)


def _merge_same_label(spans: Iterable[Span], counts: Counter) -> list[Span]:
    """Overlapping spans of one label become one span (a view cannot hold two overlapping X spans)."""
    merged: list[Span] = []
    for span in spans:
        if merged and merged[-1].label == span.label and span.first <= merged[-1].last:
            counts["merged_overlap"] += 1
            merged[-1] = Span(merged[-1].first, max(merged[-1].last, span.last), span.label)
        else:
            merged.append(span)
    return merged


PARSERS = {"span": SpanAnswerParser, "post": PostAnswerParser}


def build_parser(level: str, matcher: LabelMatcher, out_of_range: str = "clip") -> _AnswerParser:
    """The answer parser of a task level (``span`` or ``post``)."""
    return PARSERS[level](matcher, out_of_range)

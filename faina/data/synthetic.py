"""A deterministic synthetic corpus in Faina's exact layout, for the demo and the tests."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from common.errors import UserError
from faina.data import synthetic_lexicon as lex
from faina.formats.any_file import write_any
from faina.formats.records import Post, Span, SpanCorpus
from faina.formats.tokenization import tokenize  # the one tokenisation rule (raw-text tagging uses it too)
from faina.formats.tsv import post_corpus_from_spans

DEFAULT_POSTS = 300


DEFAULT_SEED = 0


SAMPLE_NAME = "sample"


UNLABELLED_NAME = "sample-unlabelled"


EMPTY_POST_RATE = 0.12  # posts with no fallacy (Faina: a minority of posts)


SEGMENTS_PER_POST = {1: 8, 2: 14, 3: 20, 4: 22, 5: 16, 6: 11, 7: 9}  # weights; nested spans add ~0.3/post


MIN_SPANS_PER_LABEL = 5  # so even Circular-reasoning appears a few times per view


LONG_POST_TOKENS = 120  # > 128 subwords for a BERT-style tokenizer on Italian text


AMBIGUOUS_RATE = 0.3  # share of a label's spans written as a designated ambiguous phrase


EXTEND_RATE = 0.5  # view 2 marks this share of its spans longer


RARE_DROP_RATE = 0.35  # view 2 misses this share of the rare labels' spans ...


RARE_KEEP_AT_LEAST = 2  # ... but keeps at least this many of each


# Segment labels are dealt in Faina's proportions, except that Loaded-language also arrives nested in
# Appeal-to-emotion templates ({LL}), so fewer stand-alone ones keep its total share near Faina's.
QUOTA_WEIGHTS = {**lex.FAINA_FREQUENCIES, "Loaded-language": 1600}


RARE_LABELS = [label for label, count in lex.FAINA_FREQUENCIES.items() if count < 150]


SLOT_RE = re.compile(r"\{([A-Z]+)\}")


NESTED_SLOTS = {"LL": "Loaded-language", "NC": "Name-calling-or-labelling"}


NO_SPACE_BEFORE = {",", ".", "!", "?", ":", ";", ")", "%"}


def default_sample_dir() -> Path:
    """The folder of the committed default sample (sample.conll, sample.tsv and unlabelled copies)."""
    return Path(__file__).resolve().parents[1] / "sample_data"


def detokenize(tokens: Sequence[str]) -> str:
    """The tokens joined as a person writes them (no space before punctuation or after ``l'``)."""
    text = ""
    for token in tokens:
        glue = not text or token in NO_SPACE_BEFORE or text.endswith("'") or text.endswith("(")
        text += token if glue else " " + token
    return text


@dataclass
class _Mark:
    """One annotated span while a post is built: view 1 reads ``label``, view 2 ``label_v2``."""

    first: int
    last: int
    label: str
    label_v2: str


class _PostBuilder:
    """Appends text pieces to one post, filling slots with the topic's words and recording spans."""

    def __init__(self, topic: str, rng: random.Random):
        self.topic = topic
        self.rng = rng
        self.tokens: list[str] = []
        self.marks: list[_Mark] = []

    def add_text(self, template: str) -> None:
        pos = 0
        for match in SLOT_RE.finditer(template):
            self.tokens += tokenize(template[pos : match.start()])
            self._fill_slot(match.group(1))
            pos = match.end()
        self.tokens += tokenize(template[pos:])

    def add_span(self, template: str, label: str, label_v2: str | None = None) -> None:
        first = len(self.tokens) + 1
        self.add_text(template)
        self.marks.append(_Mark(first, len(self.tokens), label, label_v2 or label))

    def _fill_slot(self, slot: str) -> None:
        if slot in NESTED_SLOTS:
            label = NESTED_SLOTS[slot]
            self.add_span(self.rng.choice(lex.TEMPLATES[label]), label)
        elif slot == "AUTH":
            self.tokens += tokenize(self.rng.choice(lex.AUTHORITIES))
        else:
            self._append_phrase(tokenize(self.rng.choice(lex.SLOTS[self.topic][slot])))

    def _append_phrase(self, words: list[str]) -> None:
        """Append a slot filler, merging "di" + "il" into "del" and the like, as Italian writes them."""
        merged = lex.ARTICULATED.get((self.tokens[-1], words[0])) if self.tokens else None
        if merged:
            self.tokens[-1] = merged
            words = words[1:]
        self.tokens += words


def _label_quotas(total: int) -> list[str]:
    """``total`` segment labels in Faina's proportions (largest remainder), each at least a few times."""
    labels = list(QUOTA_WEIGHTS)
    weight_sum = sum(QUOTA_WEIGHTS.values())
    exact = [total * QUOTA_WEIGHTS[label] / weight_sum for label in labels]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(len(labels)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    if total >= 4 * MIN_SPANS_PER_LABEL * len(labels):
        for i in range(len(labels)):
            while counts[i] < MIN_SPANS_PER_LABEL:
                counts[i] += 1
                counts[max(range(len(labels)), key=lambda j: (counts[j], -j))] -= 1
    return [label for label, count in zip(labels, counts) for _ in range(count)]


def _ambiguous_for(label: str) -> tuple[str, list[str]] | None:
    for (label_v1, label_v2), phrases in lex.AMBIGUOUS.items():
        if label_v1 == label:
            return label_v2, phrases
    return None


def _build_post(topic: str, labels: list[str], long: bool, rng: random.Random) -> _PostBuilder:
    post = _PostBuilder(topic, rng)
    if rng.random() < 0.35:
        post.add_text(rng.choice(lex.OPENERS))
    if long:
        post.add_text(rng.choice(lex.LONG_FILLERS))
    if not labels:
        for _ in range(rng.randint(1, 3)):
            post.add_text(rng.choice(lex.FILLERS))
    for index, label in enumerate(labels):
        if index:
            after_word = post.tokens[-1][-1].isalnum()
            post.add_text(rng.choice(lex.CONNECTORS if after_word else lex.WORD_CONNECTORS))
            if rng.random() < (0.5 if long else 0.15):
                post.add_text(rng.choice(lex.LONG_FILLERS if long else lex.FILLERS))
        ambiguous = _ambiguous_for(label)
        if ambiguous and rng.random() < AMBIGUOUS_RATE:
            post.add_span(rng.choice(ambiguous[1]), label, ambiguous[0])
        else:
            post.add_span(rng.choice(lex.TEMPLATES[label]), label)
    if rng.random() < 0.5:
        post.add_text(rng.choice(lex.CLOSERS))
    if rng.random() < 0.25:
        post.add_text(rng.choice(lex.TOPIC_HASHTAGS[topic]))
    while long and len(post.tokens) < LONG_POST_TOKENS:
        post.add_text(rng.choice(lex.LONG_FILLERS))
    return post


def _second_view(builders: list[_PostBuilder], rng: random.Random) -> list[list[Span]]:
    """View 2 of every post: its own labels, a share of rare spans missed, many spans longer."""
    views = [[Span(m.first, m.last, m.label_v2) for m in b.marks] for b in builders]
    for label in RARE_LABELS:
        where = [
            (p, s)
            for p, view in enumerate(views)
            for s, span in enumerate(view)
            if span is not None and span.label == label
        ]
        drop = [rng.random() < RARE_DROP_RATE for _ in where]
        for k in range(len(where)):
            if drop[k] and drop.count(False) < RARE_KEEP_AT_LEAST:
                drop[k] = False
        for (p, s), dropped in zip(where, drop):
            if dropped:
                views[p][s] = None
    result = []
    for builder, view in zip(builders, views):
        spans = [span for span in view if span is not None]
        for s, span in enumerate(spans):
            if rng.random() >= EXTEND_RATE:
                continue
            last = min(len(builder.tokens), span.last + rng.randint(1, 3))
            clash = any(
                o.label == span.label and o.first <= last and span.first <= o.last
                for i, o in enumerate(spans)
                if i != s
            )
            if not clash:
                spans[s] = Span(span.first, last, span.label)
        result.append(spans)
    return result


def _file_order(spans: Sequence[Span]) -> tuple[Span, ...]:
    """Spans as the CoNLL reader returns them (by first token, then label), so read-back compares equal."""
    return tuple(sorted(spans, key=lambda s: (s.first, s.label)))


def generate_sample(posts: int = DEFAULT_POSTS, seed: int = DEFAULT_SEED) -> SpanCorpus:
    """The synthetic corpus of ``posts`` posts for ``seed``, as the CoNLL reader would return it."""
    if posts < 1:
        raise UserError(f"cannot generate {posts} posts", fix="ask for at least 1 post (--posts N)")
    rng = random.Random(seed)
    num_long = max(1, posts // 50) if posts >= 10 else 0
    long_posts = set(rng.sample(range(posts), num_long))
    plans = []
    for index in range(posts):
        topic = rng.choice(lex.TOPICS)
        date = f"{rng.randint(2019, 2022)}-{rng.randint(1, 12):02d}"
        if index in long_posts:
            size = rng.randint(7, 9)
        elif rng.random() < EMPTY_POST_RATE:
            size = 0
        else:
            size = rng.choices(list(SEGMENTS_PER_POST), weights=list(SEGMENTS_PER_POST.values()))[0]
        plans.append((topic, date, size))
    labels = _label_quotas(sum(size for _, _, size in plans))
    rng.shuffle(labels)
    post_ids = rng.sample(range(100, 100 + 5 * posts), posts)
    builders, start = [], 0
    for index, (topic, _, size) in enumerate(plans):
        builders.append(_build_post(topic, labels[start : start + size], index in long_posts, rng))
        start += size
    second = _second_view(builders, rng)
    records = []
    for post_id, (topic, date, _), builder, view2 in zip(post_ids, plans, builders, second):
        view1 = [Span(m.first, m.last, m.label) for m in builder.marks]
        records.append(
            Post(
                str(post_id),
                date,
                topic,
                detokenize(builder.tokens),
                tuple(builder.tokens),
                (_file_order(view1), _file_order(view2)),
            )
        )
    return SpanCorpus(tuple(records), num_views=2, path=f"<synthetic sample, {posts} posts, seed {seed}>")


def unlabelled_copy(corpus: SpanCorpus) -> SpanCorpus:
    """The same posts and tokens with empty label cells, like a shared-task test file."""
    return corpus.replace_posts([replace(post, spans=None) for post in corpus.posts])


def write_sample(
    out_dir: str | Path, posts: int = DEFAULT_POSTS, seed: int = DEFAULT_SEED, unlabelled: bool = False
) -> tuple[SpanCorpus, list[Path]]:
    """Write the span file and the post TSV (and unlabelled copies); return the corpus and the paths."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(
            "the output path is a file, not a folder",
            path=out_dir,
            fix="give a folder to write sample.conll and sample.tsv into",
        )
    corpus = generate_sample(posts, seed)
    outputs = [(SAMPLE_NAME, corpus)] + ([(UNLABELLED_NAME, unlabelled_copy(corpus))] if unlabelled else [])
    paths = []
    for name, data in outputs:
        paths.append(write_any(data, out_dir / f"{name}.conll"))
        paths.append(write_any(post_corpus_from_spans(data), out_dir / f"{name}.tsv"))
    return corpus, paths

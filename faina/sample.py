"""A deterministic synthetic corpus in Faina's exact layout, for the demo and the tests.

Faina is distributed on request only and may never be shipped, yet the demo and the tests need data with
its shape: Italian-like posts on its three topics (2019-2022), two annotator views that disagree
systematically, all 20 labels with Faina's skew, overlapping spans and long posts. This module writes
such a corpus from a seed; ``faina/sample_data/`` holds the default one (300 posts, seed 0).

    python -m faina.sample OUT_DIR [--posts N] [--seed S] [--unlabelled]

writes OUT_DIR/sample.conll and OUT_DIR/sample.tsv (and, with --unlabelled, sample-unlabelled.conll and
sample-unlabelled.tsv with empty label cells). Everything random comes from one ``random.Random(seed)``
consumed in a fixed order, so the bytes are the same on every run and machine.

How the two views differ (on purpose, like human label variation):
- view 2 extends about half of its spans by 1-3 tokens to the right (it marks longer spans);
- designated ambiguous phrases (``sample_lexicon.AMBIGUOUS``) get a different label in view 2;
- view 2 misses about a third of the rarest labels' spans (always keeping a few).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.data.synthetic import (  # noqa: F401  (re-exported: the library API of this command)
    AMBIGUOUS_RATE,
    DEFAULT_POSTS,
    DEFAULT_SEED,
    EMPTY_POST_RATE,
    EXTEND_RATE,
    LONG_POST_TOKENS,
    MIN_SPANS_PER_LABEL,
    NESTED_SLOTS,
    NO_SPACE_BEFORE,
    QUOTA_WEIGHTS,
    RARE_DROP_RATE,
    RARE_KEEP_AT_LEAST,
    RARE_LABELS,
    SAMPLE_NAME,
    SEGMENTS_PER_POST,
    SLOT_RE,
    UNLABELLED_NAME,
    default_sample_dir,
    detokenize,
    generate_sample,
    unlabelled_copy,
    write_sample,
)
from faina.formats.records import SpanCorpus


def summarize(corpus: SpanCorpus) -> str:
    """A short report: posts, spans per view, lengths and the labels present with their counts."""
    posts = corpus.posts
    lines = [
        f"posts: {len(posts)} ({sum(len(p.tokens) >= 100 for p in posts)} with 100+ tokens), "
        f"topics: {dict(sorted(Counter(p.topic for p in posts).items()))}"
    ]
    for view in range(corpus.num_views):
        spans = [span for p in posts for span in p.spans[view]]
        counts = Counter(span.label for span in spans)
        empty = sum(not p.spans[view] for p in posts)
        lines.append(
            f"view {view + 1}: {len(spans)} spans ({len(spans) / len(posts):.2f} per post, mean length "
            f"{sum(s.length for s in spans) / max(1, len(spans)):.1f} tokens), {empty} posts without "
            f"spans, {len(counts)} labels present"
        )
        lines.append("  " + ", ".join(f"{label} {count}" for label, count in counts.most_common()))
    return "\n".join(lines)


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> None:
    parser = command_parser("faina.sample", __doc__.split("\n\n")[0])
    parser.add_argument("out_dir", metavar="OUT_DIR", help="folder to write sample.conll and sample.tsv into")
    parser.add_argument("--posts", type=int, default=DEFAULT_POSTS, help="number of posts")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    parser.add_argument(
        "--unlabelled", action="store_true", help="also write sample-unlabelled.conll/.tsv with empty label cells"
    )
    args = parser.parse_args(argv)
    corpus, paths = write_sample(args.out_dir, args.posts, args.seed, args.unlabelled)
    print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
    print("synthetic data (not Faina): " + summarize(corpus), file=sys.stderr)


if __name__ == "__main__":
    main()

"""A deterministic synthetic Missci sample in the official JSONL layout, for the tests and offline runs.

The real Missci files (Apache-2.0) are not shipped in the package; without them every Missci metric, fold
and prompt path would go untested on a fresh clone. This module writes arguments with Missci's exact shape
(the same JSON keys, id scheme ``arg-N`` / ``arg-N:i`` / ``arg-N:i:j``, meta and study fields) about
*invented* remedies, so nothing in them is real health information or real misinformation:

- all 9 fallacy classes in each split, skewed like Missci (Fallacy of Exclusion most frequent);
- fallacies R_i with one to three interchangeable fallacies (classes that bridge the same gap);
- empty fallacy contexts, hidden premises on some arguments;
- claims that recur across arguments (one fact-check, several studies), within and across the splits, and one
  fact-check whose arguments word the claim differently, as in the real data;
- each class written with its own wording, so a model can learn premise-class pairs.

    python -m missci.sample OUT_DIR [--dev N] [--test N] [--seed S]

writes OUT_DIR/dev.missci.jsonl and OUT_DIR/test.missci.jsonl. ``missci/sample_data/`` holds the default
(12 dev and 30 test arguments, seed 0); pass ``sample`` wherever a Missci data folder is asked for
(``--data sample``, ``MISSCI_DATA=sample``, ``task.data_dir=sample``). One ``random.Random(seed)`` is consumed
in a fixed order, so the bytes are the same on every run and machine.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from missci.dataset.synthetic import (  # noqa: F401  (re-exported: the library API of this command)
    CATEGORIES,
    CLASS_WEIGHTS,
    DEFAULT_DEV,
    DEFAULT_SEED,
    DEFAULT_TEST,
    EMPTY_CONTEXT_RATE,
    EXTRA_ALTERNATIVES,
    FALLACIES_PER_ARGUMENT,
    HIDDEN_PREMISE_RATE,
    MIN_PER_CLASS,
    NEIGHBOURS,
    PARAPHRASED_TOPIC,
    PARAPHRASES,
    SPLIT_FILES,
    STUDIES,
    TOPIC_REPEATS,
    TOPICS,
    URL_ROOT,
    VERDICTS,
    Study,
    Topic,
    default_sample_dir,
    generate_arguments,
    write_sample,
)


def summarize(splits: dict[str, list[dict]]) -> str:
    """One line per split (arguments, R_i, interchangeable fallacies, classes) and the recurring claims."""
    lines = []
    for split, arguments in splits.items():
        fallacies = [f for a in arguments for f in a["argument"]["fallacies"]]
        classes = Counter(alt["class"] for f in fallacies for alt in f["interchangeable_fallacies"])
        lines.append(
            f"{split}: {len(arguments)} arguments, {len(fallacies)} fallacies, {sum(classes.values())} "
            f"interchangeable, {len(classes)} classes"
        )
    everything = [a for arguments in splits.values() for a in arguments]
    claims = Counter(a["argument"]["claim"] for a in everything)
    fact_checks = Counter(a["meta"]["fc_article_url"] for a in everything)
    lines.append(
        f"{sum(1 for n in claims.values() if n > 1)} claims and {sum(1 for n in fact_checks.values() if n > 1)} "
        f"fact-checks occur in more than one argument"
    )
    return "\n".join(lines)


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> list[Path]:
    parser = command_parser("missci.sample", __doc__.split("\n\n")[0])
    parser.add_argument(
        "out_dir", metavar="OUT_DIR", help="folder to write dev.missci.jsonl and test.missci.jsonl into"
    )
    parser.add_argument("--dev", type=int, default=DEFAULT_DEV, help="arguments in the dev split")
    parser.add_argument("--test", type=int, default=DEFAULT_TEST, help="arguments in the test split")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    args = parser.parse_args(argv)
    splits, paths = write_sample(args.out_dir, args.dev, args.test, args.seed)
    print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
    print("synthetic data (not Missci):\n" + summarize(splits), file=sys.stderr)
    return paths


if __name__ == "__main__":
    main()

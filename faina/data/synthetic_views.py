"""A synthetic post-level corpus with many annotators and missing annotations: the worked example of
``data.targets=soft`` and of the not-annotated marker (docs/soft-labels.md), and the tests' six-view file.

Disagreement corpora often have five or more annotators from a fixed pool on every item, some of whom skipped some
items. This writes such a file in the Faina TSV layout with its own label inventory: each post has a "true" label
set, signalled by a cue word per label in its text; each view keeps each true label with probability 0.8 and adds
any other with 0.1, and skips the post (``?``) with probability ``missing``. Nothing here comes from a real corpus.
"""

from __future__ import annotations

import random
from pathlib import Path

from faina.formats.records import NOT_ANNOTATED
from faina.formats.tsv import FIXED_COLUMNS

LABELS = ("Insult", "Irony", "Sarcasm", "Threat")
CUES = {"Insult": "idiota", "Irony": "certo", "Sarcasm": "bravissimo", "Threat": "attento"}
FILLER = "la casa il gatto sole mare vento neve cane mondo ciao per non una".split()


def write_many_views_sample(
    folder: str | Path, views: int = 6, posts: int = 36, seed: int = 0, missing: float = 1 / 9
) -> tuple[Path, Path]:
    """Write ``many-views.tsv`` and its inventory ``many-views-labels.yaml`` into ``folder``; return both paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    labels_yaml = folder / "many-views-labels.yaml"
    labels_yaml.write_text(
        "name: many-views\nfine:\n" + "".join(f"  {label}: {label[:2].lower()}\n" for label in LABELS),
        encoding="utf-8",
    )
    lines = ["\t".join([*FIXED_COLUMNS, *(f"labels_a{v + 1}" for v in range(views))])]
    for post in range(posts):
        truth = sorted(label for label in LABELS if rng.random() < 0.3)
        cells = []
        for _ in range(views):
            if rng.random() < missing:
                cells.append(NOT_ANNOTATED)
                continue
            view = {label for label in truth if rng.random() < 0.8} | {lab for lab in LABELS if rng.random() < 0.1}
            cells.append("|".join(sorted(view)))
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 8))] + [CUES[label] for label in truth]
        rng.shuffle(words)
        lines.append("\t".join([str(post + 1), "2024-01", "migration", " ".join(words), *cells]))
    tsv = folder / "many-views.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tsv, labels_yaml

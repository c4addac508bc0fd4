"""The Faina paper's data analysis for any Faina-format file: the library behind ``python -m faina.stats``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from common.errors import UserError
from common.spread import mean_std
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.records import PostCorpus, SpanCorpus, refuse_not_annotated

ALL = "all"


def _mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    spread = mean_std(values)
    return spread["mean"], spread["std"]


def _annotations(corpus: SpanCorpus | PostCorpus) -> list[list[list[tuple[str, frozenset]]]]:
    """Per post, per view, the (label, covered units) of each span; units are token indices (span files)
    or the single unit 0 (post files, where a label covers the whole post)."""
    if isinstance(corpus, SpanCorpus):
        return [[[(s.label, frozenset(s.tokens())) for s in view] for view in post.spans] for post in corpus.posts]
    return [
        [[(label, frozenset((0,))) for label in sorted(row.label_set(v))] for v in range(corpus.num_views)]
        for row in corpus.rows
    ]


def _view_block(posts: list[list[list[tuple[str, frozenset]]]], views: list[int], span_level: bool) -> dict:
    """Statistics of the annotations of ``views`` (one view, or all of them pooled)."""
    lengths: dict[str, list[int]] = {}
    posts_with: Counter = Counter()
    per_post: list[int] = []
    without = 0
    for post in posts:
        found = [span for v in views for span in post[v]]
        for view in views:  # spans per post: one figure per (post, view) annotation
            per_post.append(len(post[view]))
        for label, units in found:
            lengths.setdefault(label, []).append(len(units))
        posts_with.update({label for label, _ in found})
        without += not found
    labels = {}
    for label in sorted(lengths):
        mean, std = _mean_std(lengths[label]) if span_level else (None, None)
        labels[label] = {
            "spans": len(lengths[label]),
            "length_mean": mean,
            "length_std": std,
            "share_of_posts": posts_with[label] / len(posts) if posts else 0.0,
        }
    mean, std = _mean_std(per_post)
    all_lengths = [n for values in lengths.values() for n in values]
    length_mean, length_std = _mean_std(all_lengths) if span_level else (None, None)
    return {
        "spans": sum(len(v) for v in lengths.values()),
        "length_mean": length_mean,
        "length_std": length_std,
        "labels": labels,
        "spans_per_post_mean": mean,
        "spans_per_post_std": std,
        "posts_without_labels": without,
    }


def _overlap(posts: list[list[list[tuple[str, frozenset]]]], views: list[int]) -> dict[str, dict[str, float]]:
    """For each label X: % of X's units also under Y (Y ≠ X), and % under no other label (Y = X)."""
    units: dict[str, int] = Counter()
    shared: dict[str, Counter] = {}
    alone: Counter = Counter()
    for post in posts:
        for view in views:
            by_unit: dict[int, set[str]] = {}
            for label, covered in post[view]:
                for unit in covered:
                    by_unit.setdefault(unit, set()).add(label)
            for labels in by_unit.values():
                for label in labels:
                    units[label] += 1
                    others = labels - {label}
                    shared.setdefault(label, Counter()).update(others)
                    alone[label] += not others
    names = sorted(units)
    return {x: {y: 100.0 * (alone[x] if y == x else shared[x][y]) / units[x] for y in names} for x in names}


def corpus_stats(corpus: SpanCorpus | PostCorpus) -> dict[str, Any]:
    """Everything but the agreement: ``posts``, ``tokens``, ``views`` {a1.., all}, ``overlap`` {a1.., all}."""
    span_level = isinstance(corpus, SpanCorpus)
    if span_level and not corpus.labelled:
        raise UserError(
            "the file has empty label cells (an unlabelled file): there is nothing to describe",
            path=corpus.path,
            fix="give a labelled file",
        )
    posts = _annotations(corpus)
    names = [f"a{v + 1}" for v in range(corpus.num_views)]
    every = list(range(corpus.num_views))
    views = {name: _view_block(posts, [v], span_level) for v, name in enumerate(names)}
    overlap = {name: _overlap(posts, [v]) for v, name in enumerate(names)}
    if corpus.num_views > 1:
        views[ALL] = _view_block(posts, every, span_level)
        overlap[ALL] = _overlap(posts, every)
    return {
        "kind": "span" if span_level else "post",
        "posts": len(posts),
        "tokens": sum(len(p.tokens) for p in corpus.posts) if span_level else None,
        "num_views": corpus.num_views,
        "views": views,
        "overlap": overlap,
    }


def file_stats(
    path: str,
    inventory: LabelInventory,
    *,
    agreement: str = "auto",
    with_gamma: bool = True,
    seed: int = 0,
    repair: bool = False,
) -> tuple[dict[str, Any], SpanCorpus | PostCorpus]:
    """The statistics ``--json`` prints. ``agreement``: ``auto`` (with two or more views), ``yes`` (an error
    on a one-view file) or ``no``."""
    corpus = read_any(path, inventory, repair=repair)
    refuse_not_annotated(corpus, "faina.stats")
    stats = corpus_stats(corpus)
    if agreement == "yes" or (agreement == "auto" and corpus.num_views > 1):
        from faina.analysis.agreement import agreement as compute_agreement
        from faina.analysis.agreement import require_views

        require_views(corpus)
        labels = sorted({label for block in stats["views"].values() for label in block["labels"]})
        stats["agreement"] = compute_agreement(corpus, inventory, labels, with_gamma=with_gamma, seed=seed)
    else:
        stats["agreement"] = None
    return stats, corpus


# --- text report -----------------------------------------------------------------------------------
def _pm(mean: float | None, std: float | None, digits: int = 1) -> str:
    return "-" if mean is None else f"{mean:.{digits}f}±{std:.{digits}f}"


def format_report(path: str, stats: dict, inventory: LabelInventory) -> str:
    unit = "spans" if stats["kind"] == "span" else "labels"
    blocks = stats["views"]
    lines = [
        f"{path}: {stats['posts']} posts"
        + (f", {stats['tokens']} tokens" if stats["tokens"] is not None else "")
        + f", {stats['num_views']} view(s)",
        "",
    ]
    head = "  ".join(f"{name:>24}" for name in blocks)
    lines += [
        f"{unit} per label ({'count, length mean±std, % of posts' if unit == 'spans' else 'count, % of posts'})",
        f"{'label':30}{head}",
    ]
    labels = sorted({label for block in blocks.values() for label in block["labels"]})
    for label in labels:
        cells = []
        for block in blocks.values():
            row = block["labels"].get(label)
            if row is None:
                cells.append(f"{'0':>24}")
                continue
            length = f" {_pm(row['length_mean'], row['length_std'])}" if row["length_mean"] is not None else ""
            cells.append(f"{row['spans']}{length} {100 * row['share_of_posts']:.0f}%".rjust(24))
        lines.append(f"{label:30}" + "  ".join(cells))
    lines.append(f"{'total':30}" + "  ".join(f"{b['spans']:>24}" for b in blocks.values()))
    if stats["kind"] == "span":
        lines.append(
            f"{'span length':30}" + "  ".join(f"{_pm(b['length_mean'], b['length_std']):>24}" for b in blocks.values())
        )
    lines.append(
        f"{unit + ' per post':30}"
        + "  ".join(f"{_pm(b['spans_per_post_mean'], b['spans_per_post_std'], 2):>24}" for b in blocks.values())
    )
    lines.append(
        f"{'posts without labels':30}" + "  ".join(f"{b['posts_without_labels']:>24}" for b in blocks.values())
    )
    key = ALL if ALL in stats["overlap"] else "a1"
    matrix = stats["overlap"][key]
    short = {label: inventory.short_ids.get(label, label[:2]) for label in matrix}
    lines += [
        "",
        f"overlap ({key}): % of the row label's {'tokens' if stats['kind'] == 'span' else 'posts'} "
        "that also carry the column label; diagonal: that carry no other label",
        f"{'':6}" + "".join(f"{short[y]:>5}" for y in matrix),
    ]
    for x, row in matrix.items():
        lines.append(f"{short[x]:6}" + "".join(f"{row[y]:5.0f}" for y in matrix))
    lines += [f"  ({', '.join(f'{s} = {label}' for label, s in short.items())})"]
    lines += _agreement_lines(stats.get("agreement"), stats["num_views"])
    return "\n".join(lines)


def _agreement_lines(agreement: dict | None, num_views: int) -> list[str]:
    if agreement is None:
        return ["", "agreement: needs two or more annotator views" if num_views < 2 else "agreement: not computed"]
    lines = [""]
    if agreement["gamma"] is None:
        lines.append(f"gamma: unavailable ({agreement['unavailable']})")
    else:
        s = agreement["settings"]
        lines.append(
            f"gamma {agreement['gamma']:.3f}   gamma_cat {agreement['gamma_cat']:.3f}   "
            f"(pygamma-agreement, combined categorical dissimilarity alpha={s['alpha']:g} beta={s['beta']:g} "
            f"delta_empty={s['delta_empty']:g}, {s['algorithm']}, {s['samples']} samples, seed {s['seed']})"
        )
    method = "Cohen" if agreement["kappa_method"] == "cohen" else "Fleiss"
    lines.append(f"{method}'s kappa per label (post level):")
    for label, value in agreement["kappa"].items():
        lines.append(f"  {label:30}{'undefined' if value is None else f'{value:6.3f}'}")
    lines += [
        "human ceiling (each view scored against the others, averaged; %):",
        f"  {'task':12}{'mode':8}{'P':>8}{'R':>8}{'F1':>8}",
    ]
    for task, modes in agreement["human_ceiling"].items():
        for mode, row in modes.items():
            lines.append(
                f"  {task:12}{mode:8}" + "".join(f"{100 * row[m]:8.1f}" for m in ("precision", "recall", "f1"))
            )
    return lines

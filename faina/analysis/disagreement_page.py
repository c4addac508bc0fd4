"""An HTML page of the annotators' disagreement (and predictions): the library behind ``python -m faina.show``."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from common.errors import UserError
from faina.formats.alignment import check_aligned
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.records import Post, Span, SpanCorpus, refuse_not_annotated

DISAGREEMENT = " ≠"


FAMILIES = ("Reds", "Blues", "Greens", "Purples", "Oranges", "Greys")


def label_colours(inventory: LabelInventory, labels: Sequence[str]) -> dict[str, str]:
    """One colour per label, the labels of a macro-category sharing a colour family (matplotlib maps)."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    groups: dict[str, list[str]] = {}
    for label in sorted(set(labels)):
        roots = inventory.roots_of.get(label) or ((label,) if label in inventory.coarse else ("other",))
        groups.setdefault(roots[0], []).append(label)
    colours = {}
    for k, (_root, members) in enumerate(sorted(groups.items())):
        cmap = colormaps[FAMILIES[k % len(FAMILIES)]]
        for i, label in enumerate(members):
            colours[label] = to_hex(cmap(0.25 + 0.5 * i / max(1, len(members) - 1)))
    return colours


def _disagreeing(spans: Sequence[Span], views: Sequence[Sequence[Span]]) -> set[Span]:
    return {span for span in spans if not all(span in set(view) for view in views)}


def render_line(post: Post, spans: Sequence[Span], disagree: set[Span], colours: dict[str, str]) -> str:
    """The displaCy "span" markup of one view (or prediction) of a post."""
    from spacy import displacy

    parsed = {
        "text": " ".join(post.tokens),
        "tokens": list(post.tokens),
        "spans": [
            {
                "start_token": s.first - 1,
                "end_token": s.last,
                "label": s.label + (DISAGREEMENT if s in disagree else ""),
            }
            for s in spans
        ],
    }
    options = {"colors": {**colours, **{label + DISAGREEMENT: colour for label, colour in colours.items()}}}
    return displacy.render(parsed, style="span", manual=True, options=options, page=False, jupyter=False)


def render_page(
    gold: SpanCorpus, pred: SpanCorpus | None, indices: Sequence[int], inventory: LabelInventory, title: str
) -> str:
    used = {
        s.label for i in indices for c in (gold, pred) if c is not None for view in c.posts[i].spans or () for s in view
    }
    colours = label_colours(inventory, used)
    blocks = []
    for i in indices:
        post = gold.posts[i]
        views = post.spans or ()
        lines = []
        rows = [(f"a{v + 1}", spans, _disagreeing(spans, views)) for v, spans in enumerate(views)]
        if pred is not None and pred.posts[i].spans is not None:
            pviews = pred.posts[i].spans
            rows += [("pred" if len(pviews) == 1 else f"pred a{v + 1}", spans, set()) for v, spans in enumerate(pviews)]
        for name, spans, disagree in rows:
            note = f"{len(spans)} span(s)" + (f", {len(disagree)} not in every view" if disagree else "")
            lines.append(
                f'<div class="view" data-post="{html.escape(post.post_id)}" data-view="{name}" '
                f'data-spans="{len(spans)}"><div class="who">{name} <small>{note}</small></div>'
                f"{render_line(post, spans, disagree, colours)}</div>"
            )
        blocks.append(
            f'<section class="post" id="post-{html.escape(post.post_id)}"><h2>post {html.escape(post.post_id)}'
            f" <small>{html.escape(post.date)} · {html.escape(post.topic)}</small></h2>{''.join(lines)}</section>"
        )
    legend = "".join(
        f'<span class="key" style="background:{colour}">{html.escape(label)}</span>'
        for label, colour in sorted(colours.items(), key=lambda kv: kv[1])
    )
    return f"""<!DOCTYPE html>
<html lang="it"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; max-width: 1400px; }}
section.post {{ border-top: 1px solid #ccc; padding: 0.5em 0; }}
h2 {{ font-size: 1.05em; margin: 0.3em 0; }} small {{ color: #555; font-weight: normal; }}
.who {{ font-family: monospace; margin-top: 0.6em; }}
.key {{ display: inline-block; padding: 2px 6px; margin: 2px; border-radius: 3px; font-size: 0.85em; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>One line per annotator view{" and prediction" if pred is not None else ""}; overlapping spans are stacked.
<b>{DISAGREEMENT.strip()}</b> after a label: the span (same tokens, same label) is not in every view.</p>
<p>{legend}</p>
{"".join(blocks)}
</body></html>
"""


def choose_posts(corpus: SpanCorpus, post_ids: Sequence[str] | None, limit: int | None) -> list[int]:
    if post_ids:
        where = {post.post_id: i for i, post in enumerate(corpus.posts)}
        missing = [pid for pid in post_ids if pid not in where]
        if missing:
            raise UserError(
                f"no post with id {', '.join(map(repr, missing))}",
                path=corpus.path,
                fix="give ids from the file's '# post_id = ...' lines",
            )
        indices = [where[pid] for pid in post_ids]
    else:
        indices = list(range(len(corpus.posts)))
    return indices[:limit] if limit is not None else indices


def show(
    file: str | Path,
    out: str | Path,
    pred: str | Path | None = None,
    posts: Sequence[str] | None = None,
    limit: int | None = None,
    labels: str = "faina",
) -> Path:
    inventory = LabelInventory.load(labels)
    gold = read_any(file, inventory, level="span")
    refuse_not_annotated(gold, "faina.show")
    if not gold.labelled:
        raise UserError(
            "the file has empty label cells (an unlabelled file)",
            path=file,
            fix="give a labelled file; pass a model's predictions with --pred",
        )
    predicted = None
    if pred is not None:
        predicted = read_any(pred, inventory, level="span")
        check_aligned(gold, predicted)
    indices = choose_posts(gold, posts, limit)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        render_page(gold, predicted, indices, inventory, f"{Path(file).name}: spans per view"), encoding="utf-8"
    )
    return out

"""An HTML page of the annotators' disagreement (and predictions): the library behind ``python -m faina.show``.

Each view line is drawn by ``faina.analysis.span_html`` (the renderer of ``faina.tag --html`` too); this module
chooses the posts, the lines (views, then prediction columns) and which spans are disagreement.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from common.errors import UserError
from faina.analysis.span_html import MARK, STYLE, Palette, inventory_order, render_view
from faina.formats.alignment import check_aligned
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.records import Span, SpanCorpus, refuse_not_annotated

DISAGREEMENT = MARK


def _disagreeing(spans: Sequence[Span], views: Sequence[Sequence[Span]]) -> set[Span]:
    return {span for span in spans if not all(span in set(view) for view in views)}


def render_page(
    gold: SpanCorpus, pred: SpanCorpus | None, indices: Sequence[int], inventory: LabelInventory, title: str
) -> str:
    used = {
        s.label for i in indices for c in (gold, pred) if c is not None for view in c.posts[i].spans or () for s in view
    }
    colours = Palette(inventory_order(inventory), extra=used)
    blocks = []
    for i in indices:
        post = gold.posts[i]
        views = post.spans or ()
        rows = [(f"a{v + 1}", spans, _disagreeing(spans, views)) for v, spans in enumerate(views)]
        if pred is not None and pred.posts[i].spans is not None:
            pviews = pred.posts[i].spans
            rows += [("pred" if len(pviews) == 1 else f"pred a{v + 1}", spans, set()) for v, spans in enumerate(pviews)]
        lines = [
            render_view(
                name,
                post.tokens,
                spans,
                colours,
                disagree,
                f"{len(spans)} span(s)" + (f", {len(disagree)} not in every view" if disagree else ""),
                {"post": post.post_id, "view": name, "spans": len(spans)},
            )
            for name, spans, disagree in rows
        ]
        blocks.append(
            f'<section class="post" id="post-{html.escape(post.post_id)}"><h2>post {html.escape(post.post_id)}'
            f" <small>{html.escape(post.date)} · {html.escape(post.topic)}</small></h2>{''.join(lines)}</section>"
        )
    return f"""<!DOCTYPE html>
<html lang="it"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; max-width: 1400px; }}
section.post {{ border-top: 1px solid #ccc; padding: 0.5em 0; }}
h2 {{ font-size: 1.05em; margin: 0.3em 0; }} small {{ color: #555; font-weight: normal; }}
{STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>One line per annotator view{" and prediction" if pred is not None else ""}; overlapping spans are stacked in lanes,
each label in its span's lane at its first token.
<b>{DISAGREEMENT.strip()}</b> after a label: the span (same tokens, same label) is not in every view.</p>
{colours.legend(used)}
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
    inventory = LabelInventory.load(labels).chosen_with("--labels")  # faina.show's option
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

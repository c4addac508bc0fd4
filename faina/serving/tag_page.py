"""A small offline HTML page of tagged posts (``python -m faina.tag ... --html OUT.html``).

One self-contained file (inline CSS, no script, no network): each post with its text, one line per annotator
view drawn by the span renderer ``faina.show`` uses too (``faina/analysis/span_html.py``: overlapping spans in
lanes, one colour per label keyed by its place in the label inventory, label boxes that never cover each
other), a legend, and a table of spans (or the post's labels for post models).
``render_page`` is the one function the CLI calls, so a richer page can replace it in one place.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from common.records import Span
from faina.analysis.span_html import STYLE as SPAN_STYLE
from faina.analysis.span_html import Palette, render_view

STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;color:#222}
.post{border:1px solid #ccc;border-radius:6px;padding:1rem;margin:1rem 0}
table{border-collapse:collapse;font-size:.9rem;margin-top:.5rem}td,th{border:1px solid #ddd;padding:2px 6px}
"""


def view_spans(post: dict, view: str) -> list[Span]:
    """The spans of one view of a tagged post as records (1-based, inclusive; the dict's are 0-based, end
    exclusive)."""
    return [Span(s["start_token"] + 1, s["end_token"], s["label"]) for s in post["spans"] if s["view"] == view]


def render_page(posts: Sequence[dict], views: Sequence[str], title: str, labels: Sequence[str] = ()) -> str:
    """The page for ``posts`` (dicts as ``TaggedPost.to_dict`` returns them); ``labels`` is the inventory order
    the colours are keyed by (``span_html.inventory_order``)."""
    used = {s["label"] for post in posts for s in post["spans"]}
    colours = Palette(labels, extra=used)
    parts = [
        f'<!doctype html><html lang="it"><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
        f"<style>{STYLE}{SPAN_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
    ]
    if used:
        parts.append(colours.legend(used))
    for number, post in enumerate(posts, 1):
        parts.append(f'<div class="post"><h2>Post {number}</h2><p>{html.escape(post["text"])}</p>')
        if "post_labels" in post:
            rows = "".join(
                f"<tr><td>{html.escape(v)}</td><td>{html.escape(', '.join(post['post_labels'][v]) or '–')}</td></tr>"
                for v in views
            )
            parts.append(f"<table><tr><th>view</th><th>labels</th></tr>{rows}</table>")
        else:
            for view in views:
                spans = view_spans(post, view)
                parts.append(
                    render_view(
                        view,
                        post["tokens"],
                        spans,
                        colours,
                        note=f"{len(spans)} span(s)",
                        attributes={"post": number, "view": view, "spans": len(spans)},
                    )
                )
            rows = "".join(
                f"<tr><td>{html.escape(s['view'])}</td><td>{html.escape(s['label'])}</td>"
                f"<td>{s['start_token']}–{s['end_token']}</td><td>{s['start_char']}–{s['end_char']}</td>"
                f"<td>{html.escape(s['text'])}</td></tr>"
                for s in post["spans"]
            )
            parts.append(
                f"<table><tr><th>view</th><th>label</th><th>tokens</th><th>chars</th><th>text</th></tr>{rows}</table>"
                if rows
                else "<p>no fallacy found</p>"
            )
        parts.append("</div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)

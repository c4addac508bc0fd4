"""A small offline HTML page of tagged posts (``python -m faina.tag ... --html OUT.html``).

One self-contained file (inline CSS, no script, no network): each post with its tokens, the spans of every
annotator view underlined in that view's row, and a table of spans (or the post's labels for post models).
``render_page`` is the one function the CLI calls, so a richer page can replace it in one place.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;color:#222}
.post{border:1px solid #ccc;border-radius:6px;padding:1rem;margin:1rem 0}
.view{margin:.4rem 0;line-height:2}.view b{display:inline-block;width:2.5rem;color:#555}
.tok{padding:1px 2px}.on{background:#ffe08a;border-bottom:2px solid #c58a00}
table{border-collapse:collapse;font-size:.9rem;margin-top:.5rem}td,th{border:1px solid #ddd;padding:2px 6px}
"""


def _view_row(post: dict, view: str) -> str:
    covered: dict[int, list[str]] = {}
    for span in post["spans"]:
        if span["view"] == view:
            for i in range(span["start_token"], span["end_token"]):
                covered.setdefault(i, []).append(span["label"])
    cells = []
    for i, token in enumerate(post["tokens"]):
        labels = covered.get(i)
        title = f' title="{html.escape(", ".join(labels))}"' if labels else ""
        cells.append(f'<span class="tok{" on" if labels else ""}"{title}>{html.escape(token)}</span>')
    return f'<div class="view"><b>{html.escape(view)}</b>{" ".join(cells)}</div>'


def render_page(posts: Sequence[dict], views: Sequence[str], title: str) -> str:
    """The page for ``posts`` (dicts as ``TaggedPost.to_dict`` returns them)."""
    parts = [
        f'<!doctype html><html lang="it"><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
    ]
    for number, post in enumerate(posts, 1):
        parts.append(f'<div class="post"><h2>Post {number}</h2><p>{html.escape(post["text"])}</p>')
        if "post_labels" in post:
            rows = "".join(
                f"<tr><td>{html.escape(v)}</td><td>{html.escape(', '.join(post['post_labels'][v]) or '–')}</td></tr>"
                for v in views
            )
            parts.append(f"<table><tr><th>view</th><th>labels</th></tr>{rows}</table>")
        else:
            parts.extend(_view_row(post, view) for view in views)
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

"""Tokens with every span of one view drawn under them, in HTML: the one renderer of ``faina.show`` and
``faina.tag --html``.

Faina's spans overlap (a whole-post span may hold three others) and a page shows several views of a post, so
each span gets a lane: the lowest lane free over its tokens, longer spans first, so that a span holding others
sits above them. The tokens are drawn in runs (a run ends where no span joins two tokens, or at
``MAX_RUN_CHARS``); each run is a CSS grid with one column per token, the words in its first row and one row
per lane under them, and a span's piece (its bar and label box) spans its tokens' columns in its lane's row.
Grid items never overlap, and a column widens when a label box is wider than the words above it: two label boxes
never print over each other or over a word, however many spans stack on one token. Runs flow and wrap like
words; a span cut across runs has its label box in the first and ``… label`` boxes in the others. Why not
displaCy's span style: docs/label-variation.md.

A label's colour comes from a fixed palette (``LABEL_COLOURS``) keyed by the label's position in the inventory
(fine labels, then coarse): the same label has the same colour on every page, whatever else the page shows. Any two
of the 20 fine labels' colours are at least 11.5 apart in CIEDE2000, also as people with protanopia, deuteranopia or
tritanopia see them (``colour_vision``). The text on a box is black or white, whichever contrasts more with it
(every colour of the palette reaches WCAG's 4.5:1). All text
is HTML-escaped: posts come from elsewhere. The markup needs no script and fetches nothing.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Iterable, Mapping, Sequence

from common.labels import LabelInventory
from common.records import Span

MARK = " ≠"
"""What follows a marked span's label (``faina.show``: a span that not every view has)."""

MAX_RUN_CHARS = 80
"""The most characters of words in one run of tokens drawn as one grid (``token_runs``): runs flow and wrap like
words, so a long span is cut into runs a line can hold."""

STYLE = """.view{margin:.5em 0 .2em}.who{font-family:monospace;margin:.2em 0}.who small{color:#555}
.spans{line-height:1.3}
.run{display:inline-grid;grid-auto-columns:max-content;grid-template-rows:auto;grid-auto-rows:minmax(1.45em,auto);
vertical-align:top;margin-bottom:.45em}
.word{grid-row:1;padding-right:.3em;white-space:pre}
.piece{display:flex;flex-direction:column;align-items:flex-start}
.bar{align-self:stretch;height:.22em;margin-top:.1em}
.bar.first{border-top-left-radius:.11em;border-bottom-left-radius:.11em}
.bar.last{margin-right:.3em;border-top-right-radius:.11em;border-bottom-right-radius:.11em}
.label,.key{display:inline-block;font-size:.7em;font-weight:bold;line-height:1.2;padding:.1em .35em;
border-radius:.25em;white-space:nowrap;margin:.1em .45em 0 0}
.legend{margin:.5em 0}
"""
"""The CSS of the markup below; a page puts it in its ``<style>``."""


LABEL_COLOURS = (
    # the 20 fine labels of an inventory: every two ≥ 11.5 apart in CIEDE2000, in normal vision and simulated
    # protanopia, deuteranopia and tritanopia (faina/analysis/colour_vision.py; docs/label-variation.md)
    *("#771122", "#2200ff", "#998811", "#99aaff", "#eeee66", "#ee7799", "#dd2266", "#553355", "#ffccff", "#9955ff"),
    *("#55ffbb", "#00bbaa", "#8888bb", "#bbbb00", "#226655", "#448877", "#666600", "#666699", "#553399", "#99bb77"),
    # then the coarse labels and labels of larger inventories: each as far from all before it as the rest allow
    *("#aa0044", "#ffaacc", "#884477", "#4455cc", "#889955", "#bbdd88", "#664400", "#cc99cc", "#cc6688", "#55ddaa"),
    *("#9988ff", "#aa5544"),
)
"""The label colours, position ``k`` for the label at place ``k`` of an inventory (cycling after the last).
``colour_vision.max_min_palette(colour_vision.candidate_colours(), 20, avoid=("#ffffff",))`` chose the first 20
(away from the white page too), and the same call of size 12, avoiding those 20 as well, the rest."""


def palette() -> tuple[str, ...]:
    """``LABEL_COLOURS``: the one list of label colours of the pages."""
    return LABEL_COLOURS


def _luminance(colour: str) -> float:
    from matplotlib.colors import to_rgb

    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast(first: str, second: str) -> float:
    """WCAG's contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_colour(background: str) -> str:
    """Black or white, whichever reads better on ``background``."""
    return "#000000" if contrast(background, "#000000") >= contrast(background, "#ffffff") else "#ffffff"


def inventory_order(inventory: LabelInventory) -> tuple[str, ...]:
    """The label order the palette is keyed by: the inventory's fine labels, then its coarse ones."""
    return (*inventory.fine, *inventory.coarse)


class Palette:
    """Each label's box colour and text colour, keyed by its position in ``labels`` (the inventory order).

    A label outside ``labels`` (a page of a file read with another inventory) takes the next free positions in
    name order, so it is still drawn in a colour of its own rather than dropped."""

    def __init__(self, labels: Sequence[str], extra: Iterable[str] = ()):
        order = list(dict.fromkeys(labels))
        order += sorted(set(extra) - set(order))
        colours = palette()
        self.order = tuple(order)
        self.background = {label: colours[k % len(colours)] for k, label in enumerate(order)}
        self.text = {label: text_colour(colour) for label, colour in self.background.items()}

    def box(self, label: str, shown: str | None = None, css_class: str = "label") -> str:
        """A label box: ``shown`` (default: the label) on the label's colour."""
        style = f"background:{self.background[label]};color:{self.text[label]}"
        return (
            f'<span class="{css_class}" data-label="{html.escape(label)}" style="{style}">'
            f"{html.escape(label if shown is None else shown)}</span>"
        )

    def legend(self, used: Collection[str]) -> str:
        """One box per label in ``used``, in inventory order."""
        keys = "".join(self.box(label, css_class="key") for label in self.order if label in used)
        return f'<p class="legend">{keys}</p>'


def assign_lanes(spans: Sequence[Span], order: Mapping[str, int] | None = None) -> dict[int, int]:
    """Lane of each span (by its index in ``spans``): the lowest lane whose spans share none of its tokens.

    Spans are placed by first token, longer first, then by label position: so a span that holds others is
    above them, and the lanes used are as few as the most spans covering one token (greedy interval colouring).
    """
    order = order or {}
    placing = sorted(
        range(len(spans)),
        key=lambda i: (spans[i].first, -spans[i].length, order.get(spans[i].label, len(order)), spans[i].label),
    )
    lane_ends: list[int] = []  # last token covered so far in each lane
    lanes = {}
    for i in placing:
        span = spans[i]
        lane = next((k for k, end in enumerate(lane_ends) if end < span.first), len(lane_ends))
        if lane == len(lane_ends):
            lane_ends.append(span.last)
        lane_ends[lane] = span.last
        lanes[i] = lane
    return lanes


def token_runs(tokens: Sequence[str], spans: Sequence[Span], max_chars: int = MAX_RUN_CHARS) -> list[range]:
    """The token runs (1-based ranges) drawn as one grid each: a run ends where no span joins two tokens, or
    before a token that would take it past ``max_chars`` characters (a long span then goes on in the next run)."""
    joined = {t for span in spans for t in range(span.first, span.last)}  # t: a span covers t and t + 1
    runs, start, width = [], 1, 0
    for t, word in enumerate(tokens, start=1):
        if t > start and (t - 1 not in joined or width + len(word) > max_chars):
            runs.append(range(start, t))
            start, width = t, 0
        width += len(word) + 1
    if tokens:
        runs.append(range(start, len(tokens) + 1))
    return runs


def _piece(span: Span, lane: int, run: range, colours: Palette, marked: Collection[Span]) -> str:
    """The part of ``span`` inside ``run``: its bar and a label box (``… label`` where the span began earlier)."""
    first, last = max(span.first, run.start), min(span.last, run.stop - 1)
    ends = (" first" if first == span.first else "") + (" last" if last == span.last else "")
    shown = span.label + (MARK if span in marked else "")
    if first == span.first:
        box = colours.box(span.label, shown)
    else:
        box = colours.box(span.label, "… " + shown, "label more")
    columns = f"{first - run.start + 1}/{last - run.start + 2}"
    return (
        f'<span class="piece" data-lane="{lane}" style="grid-row:{lane + 2};grid-column:{columns}">'
        f'<span class="bar{ends}" style="background:{colours.background[span.label]}"></span>{box}</span>'
    )


def render_tokens(tokens: Sequence[str], spans: Sequence[Span], colours: Palette, marked: Collection[Span] = ()) -> str:
    """``<div class="spans">``: the tokens in runs (``token_runs``), each run a CSS grid with one column per token,
    the words in its first row and one row per lane under them; a span's piece (bar and label box) spans its
    tokens' columns in its lane's row. Grid items never overlap, and a column widens when a label box is wider
    than the words above it. Spans are 1-based, inclusive; a span in ``marked`` reads ``label`` + ``MARK``."""
    lanes = assign_lanes(spans, {label: k for k, label in enumerate(colours.order)})
    by_lane = sorted(range(len(spans)), key=lambda i: (lanes[i], spans[i].first))
    grids = []
    for run in token_runs(tokens, spans):
        words = "".join(
            f'<span class="word" style="grid-column:{c}">{html.escape(tokens[t - 1])}</span>'
            for c, t in enumerate(run, start=1)
        )
        pieces = "".join(
            _piece(spans[i], lanes[i], run, colours, marked)
            for i in by_lane
            if spans[i].first < run.stop and spans[i].last >= run.start
        )
        grids.append(f'<span class="run">{words}{pieces}</span>')
    return f'<div class="spans">{"<wbr>".join(grids)}</div>'


def render_view(
    name: str,
    tokens: Sequence[str],
    spans: Sequence[Span],
    colours: Palette,
    marked: Collection[Span] = (),
    note: str = "",
    attributes: Mapping[str, str] | None = None,
) -> str:
    """One view (or prediction) of a post: its name and ``note`` above the tokens and their spans; each of
    ``attributes`` becomes a ``data-`` attribute of the ``div.view``."""
    data = "".join(f' data-{key}="{html.escape(str(value))}"' for key, value in (attributes or {}).items())
    small = f" <small>{html.escape(note)}</small>" if note else ""
    return (
        f'<div class="view"{data}><div class="who">{html.escape(name)}{small}</div>'
        f"{render_tokens(tokens, spans, colours, marked)}</div>"
    )

"""The span renderer of ``faina.show`` and ``faina.tag --html`` (``faina.analysis.span_html``): lanes, colours,
escaping, and both pages as headless Chromium lays them out and paints them."""

from __future__ import annotations

from itertools import combinations

import pytest

from common.records import Span
from faina.analysis.span_html import (
    MARK,
    Palette,
    assign_lanes,
    contrast,
    inventory_order,
    palette,
    render_tokens,
    token_runs,
)
from faina.formats.labels import LabelInventory
from faina.serving.tag_page import render_page as tag_page
from faina.show import main as show_main
from helpers.chromium import geometry, intersect, needs_chromium, screenshot

WORDS = "Basta con questi politici che ci rubano tutto , è una vergogna !".split()
# a1: a whole-post Slogan holding four spans of other labels (three lanes deep at "politici", two boxes starting at
# "rubano"); a2: the same Slogan, a long label on a short word ("con") right before the next span in its lane
VIEWS = {
    "a1": [
        Span(1, 13, "Slogan"),
        Span(2, 4, "Doubt"),
        Span(4, 4, "Name-calling-or-labelling"),
        Span(7, 8, "Loaded-language"),
        Span(7, 7, "Flag-waving"),
    ],
    "a2": [
        Span(1, 13, "Slogan"),
        Span(2, 2, "Name-calling-or-labelling"),
        Span(3, 4, "Vagueness"),
        Span(10, 12, "Appeal-to-emotion"),
    ],
}
LABELS = {span.label for spans in VIEWS.values() for span in spans}
FAINA = inventory_order(LabelInventory.load("faina"))


def _conll() -> str:
    def cell(view: str, token: int) -> str:
        tags = [("B-" if s.first == token else "I-") + s.label for s in VIEWS[view] if token in s.tokens()]
        return "|".join(tags) or "O"

    lines = [
        "# post_id = 1",
        "# post_date = 2021-06",
        "# post_topic_keywords = politica",
        "# post_text = " + " ".join(WORDS),
    ]
    lines += [f"{t}\t{w}\t{cell('a1', t)}\t{cell('a2', t)}" for t, w in enumerate(WORDS, 1)]
    return "\n".join(lines) + "\n\n"


def _tagged_post() -> dict:
    """The same post as ``faina.tag`` hands it to its page (``TaggedPost.to_dict``: 0-based, end exclusive)."""
    starts = [sum(len(w) + 1 for w in WORDS[:i]) for i in range(len(WORDS))]
    text = " ".join(WORDS)
    spans = [
        {
            "view": view,
            "label": s.label,
            "start_char": starts[s.first - 1],
            "end_char": starts[s.last - 1] + len(WORDS[s.last - 1]),
            "start_token": s.first - 1,
            "end_token": s.last,
            "text": text[starts[s.first - 1] : starts[s.last - 1] + len(WORDS[s.last - 1])],
        }
        for view, spans in VIEWS.items()
        for s in spans
    ]
    return {"text": text, "tokens": list(WORDS), "spans": spans}


# --- lanes, runs, colours, escaping ----------------------------------------------------------------


def test_a_span_holding_others_is_above_them_and_lanes_are_as_few_as_the_deepest_token():
    spans = VIEWS["a1"]
    lanes = assign_lanes(spans)
    assert lanes == {0: 0, 1: 1, 2: 2, 3: 1, 4: 2}  # Slogan on top; lanes are reused once a span ended
    stacked = [Span(1, 5, "A"), Span(1, 5, "B"), Span(1, 1, "C"), Span(2, 3, "D"), Span(4, 4, "E")]
    lanes = assign_lanes(stacked)
    assert sorted(lanes.values()) == [0, 1, 2, 2, 2]  # three lanes: at most three spans on one token
    for i, j in combinations(range(len(stacked)), 2):
        if set(stacked[i].tokens()) & set(stacked[j].tokens()):
            assert lanes[i] != lanes[j]


def test_runs_end_where_no_span_joins_two_tokens_or_at_the_length_limit():
    words = ["uno", "due", "tre", "quattro", "cinque"]
    assert token_runs(words, [Span(2, 3, "Doubt")]) == [range(1, 2), range(2, 4), range(4, 5), range(5, 6)]
    assert token_runs(words, [Span(1, 5, "Doubt")], max_chars=8) == [range(1, 3), range(3, 4), range(4, 5), range(5, 6)]
    assert token_runs([], []) == []


def test_a_span_cut_across_runs_has_one_label_box_and_continuation_boxes():
    colours = Palette(FAINA)
    html = render_tokens(["parola"] * 40, [Span(1, 40, "Doubt")], colours)
    runs = token_runs(["parola"] * 40, [Span(1, 40, "Doubt")])
    assert len(runs) > 1
    assert html.count('class="label"') == 1 and html.count('class="label more"') == len(runs) - 1
    assert html.count("… Doubt") == len(runs) - 1


def test_each_label_has_its_own_colour_keyed_by_its_place_in_the_inventory_with_readable_text():
    colours = palette()
    assert len(set(colours)) == len(colours) == 32
    assert all(max(contrast(c, "#000000"), contrast(c, "#ffffff")) >= 4.5 for c in colours)
    faina = Palette(FAINA)
    assert len(set(faina.background.values())) == len(FAINA) == 23
    assert all(contrast(faina.background[label], faina.text[label]) >= 4.5 for label in FAINA)
    # the same label keeps its colour whatever else a page shows; a label outside the inventory gets a new one
    other = Palette(FAINA, extra={"Doubt", "Made-up"})
    assert other.background["Doubt"] == faina.background["Doubt"] == colours[FAINA.index("Doubt")]
    assert other.background["Made-up"] == colours[len(FAINA)]
    assert faina.legend({"Slogan", "Doubt"}).index("Doubt") < faina.legend({"Slogan", "Doubt"}).index("Slogan")


def test_words_labels_and_names_are_escaped():
    colours = Palette(["<b>x</b>"])
    html = render_tokens(
        ['<img src=x onerror="alert(1)">', "&amp;"], [Span(1, 2, "<b>x</b>")], colours, {Span(1, 2, "<b>x</b>")}
    )
    assert "<img" not in html and "<b>" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html and "&amp;amp;" in html
    assert f"&lt;b&gt;x&lt;/b&gt;{MARK}" in html
    page = tag_page([{"text": "<script>x</script>", "tokens": ["<script>"], "spans": []}], ["a1"], "<t>", FAINA)
    assert "<script" not in page and "<t>" not in page


# --- both pages in Chromium --------------------------------------------------------------------------


@pytest.fixture(params=["show", "tag"])
def page(request, write_file, tmp_path):
    """The post as ``faina.show`` draws it (from a CoNLL file) and as ``faina.tag --html`` does."""
    out = tmp_path / f"{request.param}.html"
    if request.param == "show":
        show_main([str(write_file("post.conll", _conll())), "--html", str(out)])
    else:
        out.write_text(tag_page([_tagged_post()], ["a1", "a2"], "span-f · model", FAINA), encoding="utf-8")
    return out


def _hex(pixel: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*pixel[:3])


@pytest.mark.slow
@needs_chromium
def test_chromium_draws_every_label_in_its_own_colour_and_no_box_over_another_or_over_a_word(page, tmp_path):
    from PIL import Image

    size = (900, 800)
    found = geometry(page, ".spans .label, .spans .word, .legend .key", size=size)
    boxes = [e for e in found if e["cls"] == "label"]
    words = [e for e in found if e["cls"] == "word"]
    keys = [e for e in found if e["cls"] == "key"]
    # every span of both views has its box, with its label (and the disagreement mark on the show page)
    assert sorted(e["label"] for e in boxes) == sorted(s.label for spans in VIEWS.values() for s in spans)
    assert {e["label"] for e in keys} == LABELS
    assert len(words) == 2 * len(WORDS)
    for a, b in combinations(boxes + keys, 2):
        assert not intersect(a, b), f"label box {a['text']!r} prints over {b['text']!r}"
    for box in boxes:
        assert box["right"] <= size[0] and box["bottom"] <= size[1], f"{box['text']!r} is outside the window"
        for word in words:
            assert not intersect(box, word), f"label box {box['text']!r} prints over the word {word['text']!r}"

    shot = Image.open(screenshot(page, tmp_path / "page.png", size=size)).convert("RGB")
    colours = Palette(FAINA)
    for box in boxes + keys:  # inside each box's left padding: its own colour, nothing painted over it
        x, y = int(box["left"]) + 2, int((box["top"] + box["bottom"]) / 2)
        assert _hex(shot.getpixel((x, y))) == colours.background[box["label"]], box["text"]
    painted = {_hex(pixel) for pixel in shot.getdata()}
    assert {colours.background[label] for label in LABELS} <= painted
    assert len({colours.background[label] for label in LABELS}) == len(LABELS)  # seven labels, seven colours


@pytest.mark.slow
@needs_chromium
def test_a_screenshot_of_the_tag_page_shows_the_20_fine_labels_in_colours_told_apart_in_every_vision(tmp_path):
    """Every fine label on one page, as the browser paints it: the colour sampled inside each legend key and each
    span's label box is the palette's, and any two sampled colours are ≥ 10 apart in CIEDE2000, in normal vision and in
    simulated protanopia, deuteranopia and tritanopia (faina/analysis/colour_vision.py)."""
    from PIL import Image

    from faina.analysis.colour_vision import VISIONS, closest_pair

    fine = list(LabelInventory.load("faina").fine)
    words = [f"parola{k}" for k in range(len(fine))]
    text = " ".join(words)
    starts = [sum(len(w) + 1 for w in words[:k]) for k in range(len(words))]
    spans = [
        {
            "view": "a1",
            "label": label,
            "start_char": starts[k],
            "end_char": starts[k] + len(words[k]),
            "start_token": k,
            "end_token": k + 1,
            "text": words[k],
        }
        for k, label in enumerate(fine)
    ]
    page = tmp_path / "tag.html"
    page.write_text(tag_page([{"text": text, "tokens": words, "spans": spans}], ["a1"], "20 labels", FAINA))
    size = (1000, 900)
    boxes = geometry(page, ".legend .key, .spans .label", size=size)
    assert sorted(e["label"] for e in boxes) == sorted(fine * 2)  # a legend key and a span's box per label
    shot = Image.open(screenshot(page, tmp_path / "labels.png", size=size)).convert("RGB")
    colours = Palette(FAINA)
    sampled = {}
    for box in boxes:  # inside the box's left padding, where no letter is
        x, y = int(box["left"]) + 2, int((box["top"] + box["bottom"]) / 2)
        sampled.setdefault(box["label"], set()).add(_hex(shot.getpixel((x, y))))
    assert sampled == {label: {colours.background[label]} for label in fine}
    sampled = {label: colour for label, (colour,) in sampled.items()}
    for vision in VISIONS:
        smallest, pair = closest_pair(list(sampled.values()), vision)
        assert smallest >= 10, f"{pair} look {smallest:.1f} apart ({vision})"

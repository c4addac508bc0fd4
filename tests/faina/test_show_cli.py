"""``python -m faina.show``: the page as headless Chromium renders it (span counts, labels), errors; the drawing
itself (colours, boxes that never overlap) is tested with the renderer, ``tests/faina/test_span_html.py``."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from faina.show import main
from helpers.chromium import chromium, needs_chromium

D, S = "Doubt", "Slogan"


def _post(post_id: str, cells: list[tuple[str, ...]]) -> str:
    lines = [
        f"# post_id = {post_id}",
        "# post_date = 2021-06",
        "# post_topic_keywords = migration",
        "# post_text = " + " ".join(f"parola{i}" for i in range(1, len(cells) + 1)),
    ]
    lines += ["\t".join([str(i), f"parola{i}", *row]) for i, row in enumerate(cells, start=1)]
    return "\n".join(lines) + "\n"


# post 7: a1 Doubt(1-3) + Slogan(2-2) overlapping, a2 Doubt(1-3); post 9: a1 nothing, a2 Slogan(1-2)
GOLD = (
    _post("7", [(f"B-{D}", f"B-{D}"), (f"I-{D}|B-{S}", f"I-{D}"), (f"I-{D}", f"I-{D}")])
    + "\n"
    + _post("9", [("O", f"B-{S}"), ("O", f"I-{S}"), ("O", "O")])
    + "\n"
)
PRED = _post("7", [(f"B-{S}",), ("O",), ("O",)]) + "\n" + _post("9", [(f"B-{S}",), (f"I-{S}",), (f"B-{D}",)]) + "\n"
EXPECTED = {("7", "a1"): 2, ("7", "a2"): 1, ("7", "pred"): 1, ("9", "a1"): 0, ("9", "a2"): 1, ("9", "pred"): 2}


class _Boxes(HTMLParser):
    """Collects the label boxes (``span.label``: one per span, at its first token) of each div.view, with their text."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, tuple | None]] = []
        self.view: tuple | None = None
        self.boxes: dict[tuple, list[str]] = {}
        self.in_box = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and attrs.get("class") == "view":
            self.view = (attrs["data-post"], attrs["data-view"])
            self.boxes[self.view] = []
        if tag == "span" and attrs.get("class") == "label":
            self.boxes[self.view].append("")
            self.in_box += 1
        self.stack.append((tag, self.in_box))

    def handle_endtag(self, tag):
        _, box = self.stack.pop()
        if box and tag == "span" and self.in_box == box:
            self.in_box -= 1

    def handle_data(self, data):
        if self.in_box and self.view is not None:
            self.boxes[self.view][-1] += data.strip()


@pytest.fixture
def page(write_file, tmp_path):
    gold, pred = write_file("gold.conll", GOLD), write_file("pred.conll", PRED)
    out = tmp_path / "page.html"
    main([str(gold), "--pred", str(pred), "--html", str(out)])
    return out


def test_page_is_offline_and_marks_disagreement(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?https?://""", text)  # nothing fetched from the web
    assert "<script" not in text
    assert f"{D} ≠" not in text  # both views have post 7's Doubt(1-3)
    assert text.count(f"{S} ≠") == 2  # post 7 a1's Slogan and post 9 a2's Slogan are in one view only


@needs_chromium
def test_chromium_shows_every_span_of_every_view_with_a_readable_label(page):
    parser = _Boxes()
    parser.feed(chromium(page, "--dump-dom"))
    assert {key: len(labels) for key, labels in parser.boxes.items()} == EXPECTED
    assert sorted(parser.boxes[("7", "a1")]) == [D, f"{S} ≠"]
    assert sorted(parser.boxes[("9", "pred")]) == [D, S]  # predictions are never marked


def test_unknown_post_and_misaligned_prediction_are_clear_errors(write_file, tmp_path, capsys):
    gold = write_file("gold.conll", GOLD)
    with pytest.raises(SystemExit):
        main([str(gold), "--posts", "8", "--html", str(tmp_path / "x.html")])
    assert "no post with id '8'" in capsys.readouterr().err
    other = write_file("other.conll", _post("7", [("O",), ("O",), ("O",)]) + "\n")
    with pytest.raises(SystemExit):
        main([str(gold), "--pred", str(other), "--html", str(tmp_path / "x.html")])
    assert capsys.readouterr().err.startswith("error: ")

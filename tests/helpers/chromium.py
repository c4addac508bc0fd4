"""Debian's headless Chromium for the page tests: a screenshot of a page and the geometry of its elements.

The pages are meant to work without script, so the geometry probe runs in a *copy* of the page: a small inline
script appended to it writes each probed element's text, class and bounding box (CSS pixels) as JSON into the
document title, and ``--dump-dom`` prints the DOM after it ran. Screenshots use a device scale factor of 1, so a
CSS pixel is a screenshot pixel and the two can be compared.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from html import unescape
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian package `chromium`; scripts/setup.sh installs it): "
    "the rendering test needs a browser",
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)

PROBE = """<script>
document.title = JSON.stringify([...document.querySelectorAll(%s)].map(e => {
  const r = e.getBoundingClientRect();
  return {text: e.textContent, cls: e.className, label: e.dataset.label || null,
          left: r.left, top: r.top, right: r.right, bottom: r.bottom};
}));
</script>"""


def chromium(page: Path, *args: str, size: tuple[int, int] = (1000, 800)) -> str:
    """Run Chromium on ``page`` with a fresh profile; its stdout."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}",
                *args,
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(page: Path, out: Path, size: tuple[int, int] = (1000, 800)) -> Path:
    chromium(page, f"--screenshot={out}", size=size)
    assert out.is_file(), f"chromium wrote no screenshot of {page}"
    return out


def geometry(page: Path, selector: str, size: tuple[int, int] = (1000, 800)) -> list[dict]:
    """Text, class, ``data-label`` and bounding box of every element ``selector`` matches, as laid out."""
    probe = page.with_name(page.stem + ".probe.html")
    text = page.read_text(encoding="utf-8")
    probe.write_text(text.replace("</body>", PROBE % json.dumps(selector) + "</body>"), encoding="utf-8")
    dom = chromium(probe, "--dump-dom", size=size)
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title, "the probe wrote no title"
    return json.loads(unescape(title.group(1)))


def intersect(a: dict, b: dict) -> bool:
    """Whether two boxes share an area (touching edges do not count)."""
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]

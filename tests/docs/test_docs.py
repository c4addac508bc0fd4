"""The docs stay honest: every page is reachable from the README, no link points nowhere, and every doc the
code cites exists.

Docs rot quietly: a page nobody links is never found, a heading renamed breaks every `#anchor` to it, and a
docstring that says "see faina-format.md" is worse than none when that file is not in the repository. These
checks read only the repository's own files, so they run anywhere in milliseconds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
DOC_PAGES = sorted(DOCS.glob("*.md"))
MARKDOWN_FILES = [README, *DOC_PAGES]

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`]*`")
EXTERNAL = ("http://", "https://", "mailto:")
# A doc cited from code: a lower-case name ending in .md, optionally under docs/ (README.md is upper case).
CITATION = re.compile(r"(?<![\w./-])(?:docs/)?([a-z][a-z0-9-]*\.md)\b")
# Names ending in .md that the code writes as results, not docs it points a reader to.
WRITTEN_BY_THE_CODE = {"results.md", "table.md", "report.md"}
SKIPPED_FOLDERS = {".git", ".venv", "node_modules", "results", "outputs", "multirun"}


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks, where links and headings live."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link counts by its text
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a page, duplicates numbered the way GitHub numbers them (-1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(path):
        match = re.match(r"#{1,6}\s+(.*)", line)
        if not match:
            continue
        anchor = heading_anchor(match.group(1))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def relative_links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link in the page that is not a web address."""
    links = []
    for number, line in prose_lines(path):
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if not target.startswith(EXTERNAL):
                links.append((number, target))
    return links


def broken_link(page: Path, target: str) -> str | None:
    """Why a link of a page points nowhere, or None when it resolves (file, and heading when it has #)."""
    file_part, _, anchor = target.partition("#")
    linked = (page.parent / file_part).resolve() if file_part else page
    if not linked.exists():
        return f"{file_part} does not exist"
    if anchor:
        if linked.suffix != ".md":
            return f"#{anchor} points into {file_part}, which is not a markdown page"
        if anchor not in anchors(linked):
            shown = linked.relative_to(REPO) if linked.is_relative_to(REPO) else linked
            return f"{shown} has no heading with the anchor #{anchor}"
    return None


def python_files() -> list[Path]:
    """The repository's Python files, this one aside (its strings are examples of links, not citations)."""
    return [
        path
        for path in sorted(REPO.rglob("*.py"))
        if not SKIPPED_FOLDERS & set(path.relative_to(REPO).parts[:-1]) and path != Path(__file__).resolve()
    ]


def cited_docs() -> dict[str, list[str]]:
    """Doc name -> the places (file:line) in Python code that cite it."""
    citations: dict[str, list[str]] = {}
    for path in python_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for name in CITATION.findall(line):
                if name not in WRITTEN_BY_THE_CODE:
                    citations.setdefault(name, []).append(f"{path.relative_to(REPO)}:{number}")
    return citations


def test_there_are_docs_pages():
    assert len(DOC_PAGES) >= 10, f"docs/ holds {len(DOC_PAGES)} pages"


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda path: path.name)
def test_every_docs_page_is_linked_from_the_readme(page):
    targets = {(README.parent / target.partition("#")[0]).resolve() for _, target in relative_links(README)}
    assert page.resolve() in targets, f"README.md links no docs/{page.name}"


@pytest.mark.parametrize("page", MARKDOWN_FILES, ids=lambda path: str(path.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    problems = [
        f"{page.relative_to(REPO)}:{number}: ({target}) {reason}"
        for number, target in relative_links(page)
        if (reason := broken_link(page, target))
    ]
    assert problems == []


def test_links_with_anchors_are_checked():
    """The anchor check above must have something to check: the pages link into each other's sections."""
    anchored = [target for page in MARKDOWN_FILES for _, target in relative_links(page) if "#" in target]
    assert len(anchored) >= 20


def test_every_doc_the_code_cites_is_in_docs():
    citations = cited_docs()
    assert citations, "no citation of a doc found in the code: the pattern no longer matches how code cites docs"
    missing = {name: places for name, places in citations.items() if not (DOCS / name).is_file()}
    assert missing == {}


def test_readme_set_up_and_test_commands_are_the_ones_ci_runs():
    """.ci/run runs the README's set-up and test commands; the two must not drift apart. The fast tier's command is
    the contributor's, on every core (about half the time of one process on two cores: docs/design.md)."""
    readme = README.read_text(encoding="utf-8")
    assert ".venv/bin/python -m pytest -n auto " in readme, "README.md no longer shows the fast tier's command"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for command in (
        "bash scripts/setup.sh",
        ".venv/bin/python -m pytest --tiers all -n auto --maxprocesses 4 --dist loadfile",
    ):
        assert command in readme, f"README.md no longer shows {command!r}"
        assert command in ci, f".ci/run no longer runs {command!r}"


@pytest.mark.parametrize(
    "heading, anchor",
    [
        ("## Training: `train.py`", "training-trainpy"),
        ("## No data? The synthetic Missci sample", "no-data-the-synthetic-missci-sample"),
        (
            "## Span level (span-c, span-f) — Da San Martino et al. (2019) token-overlap measure",
            "span-level-span-c-span-f--da-san-martino-et-al-2019-token-overlap-measure",
        ),
        ("### [Outputs](x.md) of a run", "outputs-of-a-run"),
    ],
)
def test_heading_anchors_follow_github(heading, anchor):
    assert heading_anchor(heading.lstrip("#").strip()) == anchor


def test_a_broken_link_and_a_missing_anchor_are_reported(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n## Real section\n\n[gone](nowhere.md) [bad](#no-such) [good](#real-section)\n"
        "```\n[inside code](ignored.md)\n```\n",
        encoding="utf-8",
    )
    reasons = {target: broken_link(page, target) for _, target in relative_links(page)}
    assert reasons["#real-section"] is None
    assert "does not exist" in reasons["nowhere.md"]
    assert "no heading" in reasons["#no-such"]
    assert "ignored.md" not in reasons


def test_the_stats_example_of_label_variation_is_what_faina_stats_prints_on_the_sample(capsys, monkeypatch):
    """Every line of the example block (but the abridged ``...`` and γ, which needs the slow alignment) is a line
    ``python -m faina.stats faina/sample_data/sample.conll`` prints today."""
    from faina.stats import main as stats_main

    page = (DOCS / "label-variation.md").read_text(encoding="utf-8")
    block = page.split("On the synthetic sample it printed (abridged):", 1)[1].split("```")[1]
    shown = [line.rstrip() for line in block.splitlines() if line.strip() and line.strip() != "..."]
    monkeypatch.chdir(REPO)  # the example names the file as typed from the checkout
    stats_main(["faina/sample_data/sample.conll", "--no-gamma"])
    printed = {line.rstrip() for line in capsys.readouterr().out.splitlines()}
    checked = [line for line in shown if not line.startswith(("gamma ", "(ll row"))]
    assert len(checked) > 20 and [line for line in checked if line not in printed] == []

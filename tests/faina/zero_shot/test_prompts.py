"""Prompts of the four tasks and three label options; the definitions file against the inventory."""

from __future__ import annotations

import re

import pytest

from common.errors import UserError
from faina.formats.records import Post, PostRow
from faina.zero_shot.definitions import load_definitions
from faina.zero_shot.prompts import PROMPT_HEADINGS, PromptBuilder

POST = Post(
    "7",
    "2021-06",
    "public health",
    "Studio americano : la mutazione",
    ("Studio", "americano", ":", "la", "mutazione"),
    None,
)
ROW = PostRow("7", "2021-06", "public health", "Studio americano: la mutazione [URL]", ((), ()))
TASKS = [("span", "fine"), ("span", "coarse"), ("post", "fine"), ("post", "coarse")]
OPTIONS = ["names", "definitions", "macro"]


def build(inventory, definitions, level, grain, option):
    return PromptBuilder(level, grain, inventory, definitions, option)(POST if level == "span" else ROW)


def test_definitions_cover_exactly_the_inventory(inventory, definitions):
    assert set(definitions.fine) == set(inventory.fine) and len(definitions.fine) == 20
    assert set(definitions.coarse) == set(inventory.coarse)
    assert all(len(text.split()) >= 6 for text in [*definitions.fine.values(), *definitions.coarse.values()])


def test_definitions_file_missing_a_label_is_a_user_error(inventory, tmp_path):
    path = tmp_path / "defs.yaml"
    path.write_text("fine:\n  Slogan: a motto\ncoarse: {}\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing") as err:
        load_definitions(inventory, path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("level,grain", TASKS)
@pytest.mark.parametrize("option", OPTIONS)
def test_prompt_has_the_sections_in_order(inventory, definitions, level, grain, option):
    prompt = build(inventory, definitions, level, grain, option)
    positions = [prompt.index(heading) for heading in PROMPT_HEADINGS]
    assert positions == sorted(positions)
    assert prompt.rstrip().endswith("Answer:")
    assert "Find all the fallacies" in prompt
    assert "[None]" in prompt
    for label in inventory.labels_of(grain):
        assert label in prompt
    if level == "span":
        assert "[first-last = Label]" in prompt and "Spans may overlap" in prompt
        assert "\n1\tStudio\n2\tamericano\n3\t:\n4\tla\n5\tmutazione\n" in prompt
    else:
        assert "[Label]" in prompt and "overlap" not in prompt
        assert ROW.text in prompt and "1\tStudio" not in prompt


@pytest.mark.parametrize("level,grain", TASKS)
def test_names_option_lists_names_only(inventory, definitions, level, grain):
    prompt = build(inventory, definitions, level, grain, "names")
    labels_section = prompt.split("Labels:\n")[1].split("\n\n")[0]
    assert labels_section.splitlines() == [f"- {label}" for label in inventory.labels_of(grain)]


def test_fine_definitions_option_gives_every_definition(inventory, definitions):
    prompt = build(inventory, definitions, "span", "fine", "definitions")
    for label, text in definitions.fine.items():
        assert f"- {label}: {text}" in prompt
    assert not any(category in prompt for category in inventory.coarse)


def test_coarse_definitions_give_description_and_members(inventory, definitions):
    prompt = build(inventory, definitions, "post", "coarse", "definitions")
    line = next(li for li in prompt.splitlines() if li.startswith("- Insufficient-proof:"))
    assert definitions.coarse["Insufficient-proof"] in line
    assert "Evading-the-burden-of-proof" in line and "Vagueness" in line and "Slogan" not in line


def test_coarse_macro_lists_members_by_category(inventory, definitions):
    prompt = build(inventory, definitions, "span", "coarse", "macro")
    line = next(li for li in prompt.splitlines() if li.startswith("- Simplification:"))
    members = set(re.split(r",\s*", line.split(": ", 1)[1]))
    assert members == {
        "Hasty-generalization",
        "Vagueness",
        "False-dilemma",
        "Slippery-slope",
        "Causal-oversimplification",
        "Circular-reasoning",
        "Thought-terminating-cliches",
        "Cherry-picking",
    }


def test_fine_macro_groups_labels_under_categories(inventory, definitions):
    prompt = build(inventory, definitions, "post", "fine", "macro")
    section = prompt.split("Labels:\n")[1].split("\n\n")[0]
    groups, current = {}, None
    for line in section.splitlines():
        if not line.startswith(" "):
            current = line.rstrip(":")
            groups[current] = []
        else:
            groups[current].append(line.strip("- ").strip())
    assert set(groups) == set(inventory.coarse)
    assert groups["Insufficient-proof"] == ["Evading-the-burden-of-proof", "Vagueness"]
    assert {label for members in groups.values() for label in members} == set(inventory.fine)


def test_unknown_label_option_is_a_user_error(inventory, definitions):
    with pytest.raises(UserError, match="names, definitions, macro"):
        PromptBuilder("span", "fine", inventory, definitions, "everything")

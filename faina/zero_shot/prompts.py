"""Zero-shot prompts for the four Faina tasks, in the structure of the Faina paper's ZSWD baselines.

Every prompt has the same sections, in this order: the task, the label list (names only, names with
definitions, or grouped by macro-category), the instructions (find them all; spans may overlap), the
input (span tasks: one token per line with its index, so the model can point at tokens), and the answer
format (``[first-last = Label]`` items for spans, ``[Label]`` items for posts, ``[None]`` for nothing).
The wording is this project's own. The section headings are exported so the output audit can recognise
a model that continues the prompt instead of answering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from common.errors import UserError
from faina.formats.labels import LabelInventory
from faina.formats.records import Post, PostRow
from faina.zero_shot.definitions import LabelDefinitions

TASK_HEADING = "Task:"
LABELS_HEADING = "Labels:"
INSTRUCTIONS_HEADING = "Instructions:"
INPUT_HEADING = "Post:"
FORMAT_HEADING = "Answer format:"
ANSWER_CUE = "Answer:"
# headings that only a prompt (not an answer) contains: their presence in an output marks prompt continuation
PROMPT_HEADINGS = (TASK_HEADING, LABELS_HEADING, INSTRUCTIONS_HEADING, INPUT_HEADING, FORMAT_HEADING)
NONE_ITEM = "[None]"


# --- label lists: one renderer per (option, grain); the option is a config value ---------------------------
def _names(labels, inventory: LabelInventory, definitions: LabelDefinitions) -> list[str]:
    return [f"- {label}" for label in labels]


def _with_definitions(labels, inventory: LabelInventory, definitions: LabelDefinitions) -> list[str]:
    lines = []
    for label in labels:
        line = f"- {label}: {definitions.of(label)}"
        if label in inventory.coarse:
            line += f" It covers: {', '.join(_members(label, inventory))}."
        lines.append(line)
    return lines


def _macro(labels, inventory: LabelInventory, definitions: LabelDefinitions) -> list[str]:
    """Coarse tasks: each category with the fine fallacies it covers; fine tasks: labels grouped by category."""
    if set(labels) <= set(inventory.coarse):
        return [f"- {category}: {', '.join(_members(category, inventory))}" for category in labels]
    lines = []
    for category in inventory.coarse:
        lines.append(f"{category}:")
        lines += [f"  - {label}" for label in labels if category in inventory.roots_of[label]]
    return lines


def _members(category: str, inventory: LabelInventory) -> list[str]:
    return [label for label in inventory.fine if category in inventory.roots_of[label]]


LABEL_LISTS: dict[str, Callable[..., list[str]]] = {
    "names": _names,
    "definitions": _with_definitions,
    "macro": _macro,
}


@dataclass(frozen=True)
class PromptBuilder:
    """Builds the prompt of one post for a task (level ``span``/``post``, grain ``fine``/``coarse``)."""

    level: str
    grain: str
    inventory: LabelInventory
    definitions: LabelDefinitions
    label_option: str = "definitions"

    def __post_init__(self) -> None:
        if self.label_option not in LABEL_LISTS:
            raise UserError(
                f"unknown label option {self.label_option!r}",
                fix=f"set task.zero_shot.labels to one of {', '.join(LABEL_LISTS)}",
            )
        if self.level not in ("span", "post"):
            raise UserError(f"unknown task level {self.level!r}", fix="use task.level `span` or `post`")

    @property
    def labels(self) -> tuple[str, ...]:
        return self.inventory.labels_of(self.grain)

    def __call__(self, item: Post | PostRow) -> str:
        kind = "fallacy category" if self.grain == "coarse" else "fallacy label"
        sections = [
            TASK_HEADING + "\n" + self._task(kind),
            LABELS_HEADING
            + "\n"
            + "\n".join(LABEL_LISTS[self.label_option](self.labels, self.inventory, self.definitions)),
            INSTRUCTIONS_HEADING + "\n" + "\n".join(f"- {line}" for line in self._instructions(kind)),
            self._input(item),
            FORMAT_HEADING + "\n" + self._answer_format(kind),
        ]
        return "\n\n".join(sections) + "\n\n" + ANSWER_CUE

    def _task(self, kind: str) -> str:
        if self.level == "span":
            return (
                "Read the social media post below (written in Italian) and detect the fallacious arguments in "
                f"it. For each fallacy, give the stretch of tokens (the span) that expresses it and its {kind} "
                "from the list below."
            )
        return (
            "Read the social media post below (written in Italian) and tell which fallacies it contains, "
            f"giving the {kind} of each from the list below."
        )

    def _instructions(self, kind: str) -> list[str]:
        lines = [
            "Find all the fallacies in the post: a post can contain several of them, of the same or of "
            "different kinds, or none at all."
        ]
        if self.level == "span":
            lines += [
                "Spans may overlap: the same tokens can be part of more than one fallacy.",
                "The post is given one token per line, each preceded by its index.",
            ]
        lines.append(f"Use only the {kind}s listed above, spelled exactly as written there.")
        return lines

    def _input(self, item: Post | PostRow) -> str:
        if self.level == "span":
            if not isinstance(item, Post):
                raise TypeError("span prompts need a Post (tokens), not a PostRow")
            tokens = "\n".join(f"{index}\t{token}" for index, token in enumerate(item.tokens, start=1))
            return f"{INPUT_HEADING}\n{tokens}"
        return f"{INPUT_HEADING}\n{item.text}"

    def _answer_format(self, kind: str) -> str:
        if self.level == "span":
            return (
                "Write one item per fallacy, in the form [first-last = Label], where first and last are the "
                f"indices of the first and the last token of the span and Label is its {kind}. Write "
                f"{NONE_ITEM} if the post contains no fallacy. Write nothing else."
            )
        return (
            f"Write one item per fallacy found, in the form [Label], where Label is its {kind}. Write "
            f"{NONE_ITEM} if the post contains no fallacy. Write nothing else."
        )

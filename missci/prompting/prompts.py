"""Prompt templates for Missci: reconstruction (premise + class), classification given a premise, and
classification without a premise, each with any combination of class definitions (D), logical forms (L)
and examples (E).

The reconstruction wording follows the paper's best template idea ("p4-connect": ask explicitly for the
premise that connects the accurate premise and the publication context to the claim); the wording itself is
this project's. The model's chat template is applied later (models/llm/generation.py), not here.
"""

from __future__ import annotations

from dataclasses import dataclass

from missci.dataset.classes import FALLACY_CLASSES, FallacyClass
from missci.dataset.reader import Argument, Fallacy

ANSWER_PREMISE = "Fallacious premise"
ANSWER_CLASS = "Applied fallacy class"


@dataclass(frozen=True)
class PromptOptions:
    definitions: bool = True  # D
    logical_forms: bool = False  # L
    examples: bool = False  # E
    num_candidates: int = 3  # how many ranked answers to ask for (reconstruction / no-premise)

    @property
    def tag(self) -> str:
        """ "D", "LE", … or "names" — used in file names of runs."""
        letters = "".join(
            letter for letter, on in (("D", self.definitions), ("L", self.logical_forms), ("E", self.examples)) if on
        )
        return letters or "names"


def describe_class(fallacy_class: FallacyClass, options: PromptOptions) -> str:
    parts = [f"- {fallacy_class.name}"]
    details = []
    if options.definitions:
        details.append(f"Definition: {fallacy_class.definition}")
    if options.logical_forms:
        details.append(f"Logical form: {fallacy_class.logical_form}")
    if options.examples:
        details.append(f"Example: {fallacy_class.example}")
    if details:
        parts.append("\n".join("  " + d for d in details))
    return "\n".join(parts)


def class_catalogue(options: PromptOptions) -> str:
    return "\n".join(describe_class(c, options) for c in FALLACY_CLASSES)


def _setting(argument: Argument, fallacy: Fallacy) -> str:
    lines = [
        f"Claim (conclusion): {argument.claim}",
        f"Premise 1 (accurate, from the publication): {argument.accurate_premise}",
    ]
    if fallacy.context.strip():
        lines.append(f"Premise 2 (further content of the publication): {fallacy.context}")
    return "\n".join(lines)


INTRO = (
    "A claim misrepresents a scientific publication. The reasoning starts from accurate content of the "
    "publication but only reaches the claim through a hidden fallacious premise."
)


def reconstruction_prompt(argument: Argument, fallacy: Fallacy, options: PromptOptions = PromptOptions()) -> str:
    """Ask for ranked (fallacious premise, fallacy class) answers for one R_i."""
    return (
        f"{INTRO}\n\n{_setting(argument, fallacy)}\n\n"
        "Write the fallacious premise that connects Premise 1"
        + (" and Premise 2" if fallacy.context.strip() else "")
        + " to the conclusion, and name the fallacy class it applies. The classes are:\n"
        f"{class_catalogue(options)}\n\n"
        f"Give up to {options.num_candidates} different answers, the most likely first, one per line, "
        f"exactly in this form:\n{ANSWER_PREMISE}: <the premise>; {ANSWER_CLASS}: <one class name>"
    )


def classification_prompt(
    argument: Argument, fallacy: Fallacy, premise: str, options: PromptOptions = PromptOptions()
) -> str:
    """Ask for the class of a given fallacious premise (gold premise, or the model's own for consistency)."""
    return (
        f"{INTRO}\n\n{_setting(argument, fallacy)}\n{ANSWER_PREMISE}: {premise}\n\n"
        "Which fallacy class does the fallacious premise apply? The classes are:\n"
        f"{class_catalogue(options)}\n\n"
        f"Answer with one line, exactly in this form:\n{ANSWER_CLASS}: <one class name>"
    )


def classification_without_premise_prompt(
    argument: Argument, fallacy: Fallacy, options: PromptOptions = PromptOptions()
) -> str:
    """Ask only for ranked fallacy classes of the gap between the premises and the claim."""
    return (
        f"{INTRO}\n\n{_setting(argument, fallacy)}\n\n"
        "Which fallacy class does the hidden premise apply? The classes are:\n"
        f"{class_catalogue(options)}\n\n"
        f"Give up to {options.num_candidates} classes, the most likely first, one per line, exactly in this form:\n"
        f"{ANSWER_CLASS}: <one class name>"
    )

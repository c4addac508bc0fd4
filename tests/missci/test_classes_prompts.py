import pytest

from missci.dataset.classes import CLASS_NAMES, FALLACY_CLASSES, normalise_class
from missci.dataset.reader import load_split
from missci.prompting.prompts import (
    PromptOptions,
    classification_prompt,
    classification_without_premise_prompt,
    reconstruction_prompt,
)


def test_nine_classes_in_official_spelling():
    assert len(CLASS_NAMES) == 9 and list(CLASS_NAMES) == sorted(CLASS_NAMES)
    assert "False Dilemma / Affirming the Disjunct" in CLASS_NAMES
    assert all(c.definition and c.logical_form and c.example for c in FALLACY_CLASSES)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Cherry picking", "Fallacy of Exclusion"),
        ("false cause", "Causal Oversimplification"),
        ("Fallacy of Composition", "Fallacy of Division/Composition"),
        ("EQUIVOCATION", "Ambiguity"),
        ("False Dilemma", "False Dilemma / Affirming the Disjunct"),
        ("hasty generalisation (small sample)", "Hasty Generalization"),
        ("False Analogy, not a hasty generalization", "False Equivalence"),
        ("Appeal to Authority", "Other"),
        ("", "Other"),
    ],
)
def test_class_aliases(text, expected):
    assert normalise_class(text) == expected


def test_prompt_sections_follow_flags(data_dir):
    argument = load_split("dev", data_dir)[0]
    fallacy = argument.fallacies[0]
    hasty = next(c for c in FALLACY_CLASSES if c.name == "Hasty Generalization")
    names_only = reconstruction_prompt(argument, fallacy, PromptOptions(False, False, False))
    assert all(name in names_only for name in CLASS_NAMES)
    assert hasty.definition not in names_only and "Logical form" not in names_only
    full = reconstruction_prompt(argument, fallacy, PromptOptions(True, True, True, num_candidates=4))
    assert hasty.definition in full and hasty.logical_form in full and hasty.example in full
    assert argument.claim in full and argument.accurate_premise in full and fallacy.context in full
    assert "up to 4" in full and "Fallacious premise: <the premise>; Applied fallacy class:" in full
    assert PromptOptions(True, False, True).tag == "DE" and PromptOptions(False, False, False).tag == "names"
    gold = fallacy.interchangeable[0].premise
    assert gold in classification_prompt(argument, fallacy, gold, PromptOptions(False, True, False))
    assert "Logical form" in classification_without_premise_prompt(argument, fallacy, PromptOptions(False, True, False))

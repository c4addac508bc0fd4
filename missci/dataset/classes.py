"""The nine Missci fallacy classes, with a definition (D), a logical form (L) and an example (E) for each.

The texts are written for this project after the paper's Tables 5-6 (which follow Bennett 2012 and Cook et
al. 2018); they are not copies of those tables. Prompts combine any subset of D, L and E, so each class
carries all three. Class names are the exact strings of the official data files.
"""

from __future__ import annotations

from dataclasses import dataclass

OTHER = "Other"


@dataclass(frozen=True)
class FallacyClass:
    name: str
    definition: str
    logical_form: str
    example: str


FALLACY_CLASSES: tuple[FallacyClass, ...] = (
    FallacyClass(
        name="Ambiguity",
        definition="A word or phrase that can be read in more than one way is used with one meaning in one "
        "place and another meaning elsewhere, so the conclusion rests on the confusion.",
        logical_form="Claim X holds for A under one reading. A can also be read in another way. "
        "Therefore, X holds for A under the other reading.",
        example="The drug was 'effective' in the trial (it lowered a lab marker), so it is 'effective' "
        "against the disease.",
    ),
    FallacyClass(
        name="Biased Sample Fallacy",
        definition="A conclusion about a whole population is drawn from a sample that does not represent "
        "it, because of how the sample was selected.",
        logical_form="Sample S, drawn from population P in a skewed way, has property X. Therefore, P has property X.",
        example="Readers of a health-food blog who answered its poll like the supplement, so most people "
        "like the supplement.",
    ),
    FallacyClass(
        name="Causal Oversimplification",
        definition="An outcome is put down to one cause (or to a cause at all) when it has several causes, or "
        "when the events merely occurred together or one after the other.",
        logical_form="A happened together with (or before) B. Therefore, A caused B, and nothing else did.",
        example="Infections fell after the town opened a new park, so the park brought infections down.",
    ),
    FallacyClass(
        name="Fallacy of Division/Composition",
        definition="What is true of the parts is assumed true of the whole, or what is true of the whole is "
        "assumed true of each of its parts.",
        logical_form="A is part of B. A has property X. Therefore, B has property X (or the reverse: B has X, "
        "therefore its part A has X).",
        example="A compound in the plant kills viruses in a dish, so eating the plant kills viruses.",
    ),
    FallacyClass(
        name="Fallacy of Exclusion",
        definition="Evidence that would change the conclusion is left out, and only the part that supports "
        "the conclusion is kept (cherry-picking).",
        logical_form="Evidence A supports X and evidence B speaks against X. Only A is considered. Therefore, X.",
        example="One small study found a benefit, so the treatment works (the larger studies that found "
        "none are not mentioned).",
    ),
    FallacyClass(
        name="False Dilemma / Affirming the Disjunct",
        definition="Only two options are presented as if no others existed, or, of two options that can both "
        "be true, one is wrongly ruled out because the other holds.",
        logical_form="Either A or B. A is true. Therefore, B is false (or: not A, so B, with other options ignored).",
        example="The illness is caused either by the virus or by the vaccine; the virus was not found, so the "
        "vaccine caused it.",
    ),
    FallacyClass(
        name="False Equivalence",
        definition="Two things are treated as the same because they share some feature, although they differ "
        "in ways that matter for the conclusion.",
        logical_form="A and B share property X. A has property Y. Therefore, B has property Y.",
        example="Mice and humans are both mammals; the drug cured the mice, so it will cure humans.",
    ),
    FallacyClass(
        name="Hasty Generalization",
        definition="A general conclusion is drawn from too few cases, or from evidence that is too weak or "
        "too early to support it.",
        logical_form="A few cases of A have property X. Therefore, all (or most) A have property X.",
        example="Two patients recovered after taking the herb, so the herb cures the disease.",
    ),
    FallacyClass(
        name="Impossible Expectations",
        definition="A measure or result is rejected because it is not perfect or does not settle everything, "
        "although no measure could meet that standard.",
        logical_form="Measure A does not achieve X completely. Therefore, A is useless for X.",
        example="Masks do not stop every virus particle, so wearing masks is pointless.",
    ),
)

CLASS_NAMES: tuple[str, ...] = tuple(sorted(c.name for c in FALLACY_CLASSES))
"""The 9 class names in alphabetical order (the order the official random baseline draws from)."""

CLASS_BY_NAME: dict[str, FallacyClass] = {c.name: c for c in FALLACY_CLASSES}

# Lower-case phrases a model may use for a class, mapped to the class. The names of merged classes (the
# paper merged Division and Composition, False Cause and Single Cause, Equivocation into Ambiguity) and
# common synonyms are included. Longer phrases win over shorter ones inside them.
CLASS_ALIASES: dict[str, str] = {
    "ambiguity": "Ambiguity",
    "ambiguous": "Ambiguity",
    "equivocation": "Ambiguity",
    "biased sample": "Biased Sample Fallacy",
    "bias sample": "Biased Sample Fallacy",
    "sampling bias": "Biased Sample Fallacy",
    "selection bias": "Biased Sample Fallacy",
    "unrepresentative sample": "Biased Sample Fallacy",
    "causal oversimplification": "Causal Oversimplification",
    "oversimplification": "Causal Oversimplification",
    "false cause": "Causal Oversimplification",
    "false causality": "Causal Oversimplification",
    "single cause": "Causal Oversimplification",
    "post hoc": "Causal Oversimplification",
    "correlation does not imply causation": "Causal Oversimplification",
    "correlation-causality": "Causal Oversimplification",
    "questionable cause": "Causal Oversimplification",
    "division/composition": "Fallacy of Division/Composition",
    "composition": "Fallacy of Division/Composition",
    "division": "Fallacy of Division/Composition",
    "fallacy of exclusion": "Fallacy of Exclusion",
    "exclusion": "Fallacy of Exclusion",
    "cherry picking": "Fallacy of Exclusion",
    "cherry-picking": "Fallacy of Exclusion",
    "cherrypicking": "Fallacy of Exclusion",
    "suppressed evidence": "Fallacy of Exclusion",
    "argument from ignorance": "Fallacy of Exclusion",
    "false dilemma": "False Dilemma / Affirming the Disjunct",
    "affirming the disjunct": "False Dilemma / Affirming the Disjunct",
    "false dichotomy": "False Dilemma / Affirming the Disjunct",
    "black-and-white": "False Dilemma / Affirming the Disjunct",
    "false equivalence": "False Equivalence",
    "fallacy of equivalence": "False Equivalence",
    "false analogy": "False Equivalence",
    "faulty analogy": "False Equivalence",
    "hasty generalization": "Hasty Generalization",
    "hasty generalisation": "Hasty Generalization",
    "overgeneralization": "Hasty Generalization",
    "overgeneralisation": "Hasty Generalization",
    "impossible expectations": "Impossible Expectations",
    "impossible expectation": "Impossible Expectations",
    "false expectations": "Impossible Expectations",
    "imaginary expectations": "Impossible Expectations",
    "nirvana fallacy": "Impossible Expectations",
    "perfect solution": "Impossible Expectations",
}


def normalise_class(text: str | None) -> str:
    """Map a model's free-text class name to one of the 9 classes, or ``"Other"``.

    The alias that occurs first in the text wins (longest alias on ties), so "False Cause (not a Hasty
    Generalization)" counts as Causal Oversimplification.
    """
    if not text:
        return OTHER
    lowered = " ".join(text.lower().replace("_", " ").split())
    for name in CLASS_NAMES:
        if lowered == name.lower():
            return name
    best: tuple[int, int, str] | None = None
    for alias, name in list(CLASS_ALIASES.items()) + [(n.lower(), n) for n in CLASS_NAMES]:
        position = lowered.find(alias)
        if position >= 0:
            key = (position, -len(alias), name)
            if best is None or key < best:
                best = key
    return best[2] if best else OTHER

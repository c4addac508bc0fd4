"""A deterministic synthetic Missci sample in the official JSONL layout, for the tests and offline runs."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from common.errors import UserError
from missci.dataset.classes import CLASS_NAMES
from missci.dataset.reader import SAMPLE_DIR

DEFAULT_DEV = 12


DEFAULT_TEST = 30


DEFAULT_SEED = 0


SPLIT_FILES = {"dev": "dev.missci.jsonl", "test": "test.missci.jsonl"}


AMB, BSF, COS, DIV = (
    "Ambiguity",
    "Biased Sample Fallacy",
    "Causal Oversimplification",
    "Fallacy of Division/Composition",
)


EXC, DIL, FEQ, HAS, IMP = (
    "Fallacy of Exclusion",
    "False Dilemma / Affirming the Disjunct",
    "False Equivalence",
    "Hasty Generalization",
    "Impossible Expectations",
)


# Weights for dealing the classes of R_i: Missci's counts over all 550 interchangeable fallacies.
CLASS_WEIGHTS = {EXC: 150, FEQ: 99, COS: 87, AMB: 51, BSF: 47, DIV: 40, HAS: 38, DIL: 27, IMP: 11}


MIN_PER_CLASS = 2  # every class is the first class of at least this many R_i in each split


FALLACIES_PER_ARGUMENT = {1: 25, 2: 35, 3: 26, 4: 10, 5: 4}  # weights (Missci: 45/64/47/19/9)


EXTRA_ALTERNATIVES = {0: 74, 1: 22, 2: 4}  # weights (Missci: 335/87/13 R_i with 1/2/3+)


EMPTY_CONTEXT_RATE = 0.13  # Missci: 51 of 435 R_i have an empty fallacy context


HIDDEN_PREMISE_RATE = 0.4


# Classes that plausibly bridge the same gap (the interchangeable fallacies of one R_i).
NEIGHBOURS = {
    HAS: (BSF, EXC, FEQ),
    BSF: (HAS, FEQ),
    FEQ: (AMB, DIV, HAS),
    AMB: (FEQ, COS),
    COS: (DIL, EXC),
    DIV: (FEQ, HAS),
    EXC: (HAS, IMP, COS),
    DIL: (COS, IMP),
    IMP: (EXC, DIL),
}


# How many arguments each fact-check (topic) yields: several claims recur, as in Missci's test split.
TOPIC_REPEATS = (3, 3, 2, 2, 2, 2, 2)


PARAPHRASED_TOPIC = 0  # the arguments of this topic word the claim differently


VERDICTS = ("Inaccurate", "Unsupported", "Misleading", "Incorrect", "Flawed-Reasoning")


CATEGORIES = (
    "Overstates scientific confidence",
    "Misleading",
    "Cherry-picking",
    "Misrepresents source",
    "Fails to grasp significance of observation",
    "Lacks context",
)


URL_ROOT = "https://example.org/synthetic-missci"


@dataclass(frozen=True)
class Topic:
    """An invented remedy and the outcome a fact-checked claim says it affects."""

    remedy: str  # "velmora root"
    compound: str  # a substance in it
    outcome: str  # the disease or condition of the claim
    marker: str  # what studies measure instead of the outcome
    effect: str  # verb phrase of the claim, e.g. "prevents heart disease"
    other_factor: str  # a co-occurring cause
    alternative: str  # an established treatment


TOPICS: tuple[Topic, ...] = (
    Topic(
        "velmora root",
        "velminol",
        "heart disease",
        "blood cholesterol",
        "prevents heart disease",
        "exercised daily",
        "statins",
    ),
    Topic(
        "tarsil oil",
        "tarsilene",
        "memory loss",
        "a word-recall score",
        "stops memory loss",
        "took part in weekly reading groups",
        "cognitive training",
    ),
    Topic(
        "the Orlin diet",
        "orlinic acid",
        "type 2 diabetes",
        "fasting blood sugar",
        "reverses type 2 diabetes",
        "lost weight",
        "metformin",
    ),
    Topic(
        "Brevane nasal spray",
        "brevanol",
        "the flu",
        "virus counts in nasal swabs",
        "protects against the flu",
        "stayed at home during the study",
        "the flu vaccine",
    ),
    Topic(
        "zentite mineral water",
        "zentite salts",
        "kidney stones",
        "urine acidity",
        "dissolves kidney stones",
        "drank more water overall",
        "potassium citrate",
    ),
    Topic(
        "the Halden breathing method",
        "slow nasal breathing",
        "asthma attacks",
        "lung capacity",
        "cures asthma",
        "moved to a city with cleaner air",
        "inhaled steroids",
    ),
    Topic(
        "korra berry juice",
        "korranin",
        "skin cancer",
        "sun damage in skin samples",
        "prevents skin cancer",
        "used sunscreen",
        "sun protection",
    ),
    Topic(
        "lumic tea",
        "lumicin",
        "insomnia",
        "time to fall asleep",
        "cures insomnia",
        "stopped drinking coffee",
        "sleep hygiene therapy",
    ),
    Topic(
        "compound KX-12",
        "KX-12",
        "hair loss",
        "hair-follicle growth in a dish",
        "regrows lost hair",
        "changed their shampoo",
        "minoxidil",
    ),
    Topic(
        "ferrin seed powder",
        "ferrinol",
        "high blood pressure",
        "artery stiffness",
        "lowers blood pressure",
        "ate less salt",
        "blood-pressure medication",
    ),
    Topic(
        "the Sabel fasting plan",
        "ketone bodies",
        "migraine",
        "migraine days per month",
        "ends migraines",
        "slept more regularly",
        "migraine medication",
    ),
    Topic(
        "ostra mushroom extract",
        "ostrasan",
        "joint pain",
        "a blood marker of inflammation",
        "heals arthritis",
        "did physiotherapy",
        "anti-inflammatory drugs",
    ),
    Topic(
        "quellin patches",
        "quellinate",
        "smoking addiction",
        "daily cigarette counts",
        "ends smoking addiction",
        "joined a support group",
        "nicotine replacement",
    ),
    Topic(
        "dravine drops",
        "dravinol",
        "ear infections",
        "bacterial growth on a plate",
        "cures ear infections",
        "were also given antibiotics",
        "antibiotics",
    ),
    Topic(
        "pelna leaf capsules",
        "pelnadine",
        "depression",
        "a mood questionnaire score",
        "cures depression",
        "started therapy",
        "antidepressants",
    ),
    Topic(
        "the Viro light lamp",
        "blue light",
        "seasonal colds",
        "skin vitamin D levels",
        "prevents colds",
        "washed their hands more often",
        "hand washing",
    ),
    Topic(
        "marrow bone broth",
        "collagen",
        "bone fractures",
        "bone density scans",
        "prevents bone fractures",
        "took calcium supplements",
        "vitamin D with calcium",
    ),
    Topic(
        "sorrel clay baths",
        "sorrel clay",
        "eczema",
        "skin redness scores",
        "cures eczema",
        "switched to unscented soap",
        "steroid creams",
    ),
    Topic(
        "nuvo green powder",
        "nuvochlorin",
        "obesity",
        "appetite ratings",
        "melts away body fat",
        "counted calories",
        "diet and exercise programmes",
    ),
    Topic(
        "helix magnet bracelets",
        "magnetic fields",
        "back pain",
        "pain ratings after one week",
        "cures back pain",
        "rested more",
        "physiotherapy",
    ),
    Topic(
        "amber honey syrup",
        "amberol",
        "coughs in children",
        "cough frequency at night",
        "stops coughs",
        "were given more fluids",
        "rest and fluids",
    ),
    Topic(
        "the Pyra cold plunge",
        "cold exposure",
        "chronic fatigue",
        "energy questionnaire scores",
        "cures chronic fatigue",
        "reduced their working hours",
        "graded activity programmes",
    ),
    Topic(
        "vell seaweed tablets",
        "vellodine",
        "thyroid disease",
        "iodine levels in urine",
        "heals the thyroid",
        "took thyroid hormones",
        "thyroid hormone treatment",
    ),
    Topic(
        "cinder charcoal drinks",
        "activated cinder",
        "food poisoning",
        "toxin levels in a test tube",
        "flushes out food poisoning",
        "drank oral rehydration fluid",
        "oral rehydration",
    ),
    Topic(
        "rosal oil massage",
        "rosaline",
        "high stress",
        "cortisol in saliva",
        "eliminates stress",
        "took a week of holiday",
        "stress-management courses",
    ),
    Topic(
        "the Tamo walking cure",
        "walking",
        "dementia",
        "brain volume on scans",
        "prevents dementia",
        "had more social contact",
        "treating high blood pressure",
    ),
    Topic(
        "mirel spice capsules",
        "mirelone",
        "stomach ulcers",
        "acid levels in the stomach",
        "heals stomach ulcers",
        "stopped taking painkillers",
        "acid-blocking drugs",
    ),
    Topic(
        "the Corvin ion filter",
        "negative ions",
        "allergies",
        "pollen counts indoors",
        "cures allergies",
        "kept their windows shut",
        "antihistamines",
    ),
)


# Arguments whose claim is worded differently within the paraphrased topic.
PARAPHRASES = ("{Remedy} {effect}.", "{Remedy} is proven to help: it {effect}.", "Science shows {remedy} {effect}.")


@dataclass(frozen=True)
class Study:
    """What one (invented) publication did: the accurate premise p0 is about it."""

    kind: str
    subjects: str  # "mice", "patients", …
    size: int
    group: str  # who was in it, for the biased-sample context

    def p0(self, t: Topic, rng: random.Random) -> str:
        templates = {
            "mice": f"In mice, {t.compound} improved {t.marker} compared with untreated mice.",
            "cells": f"In cells grown in a dish, {t.compound} improved {t.marker}.",
            "trial": f"In a trial of {self.size} {self.group}, those given {t.remedy} improved their {t.marker}.",
            "survey": f"People who said they used {t.remedy} reported less trouble with {t.outcome} in a survey of "
            f"{self.size} {self.group}.",
            "case": f"A report describes {self.size} patients whose {t.marker} improved after using {t.remedy}.",
        }
        text = templates[self.kind]
        return text if rng.random() < 0.7 else text.replace(" improved", " clearly improved")


STUDIES = (
    Study("mice", "mice", 20, "young male mice"),
    Study("cells", "cell samples", 6, "cell lines from one donor"),
    Study("trial", "volunteers", 24, "university athletes"),
    Study("trial", "patients", 40, "patients at one private clinic"),
    Study("survey", "readers", 310, "readers of a wellness magazine"),
    Study("case", "patients", 3, "patients of one practitioner"),
    Study("trial", "volunteers", 15, "healthy young volunteers"),
)


def _premises(cls: str, t: Topic, s: Study) -> tuple[str, ...]:
    """Fallacious premises of ``cls`` (variants); each bridges p0 and the claim the way the class does."""
    return {
        HAS: (
            f"Results from {s.size} {s.subjects} are enough to conclude that {t.remedy} {t.effect} in everyone.",
            f"A handful of cases is enough to show that {t.remedy} {t.effect}.",
        ),
        BSF: (
            f"{s.group.capitalize()} are representative of everyone who might use {t.remedy}.",
            f"What was seen in {s.group} will be seen in the general population.",
        ),
        FEQ: (
            f"If {t.compound} works in {s.subjects}, {t.remedy} works the same way in people.",
            f"{s.subjects.capitalize()} and people respond to {t.remedy} in the same way.",
        ),
        AMB: (
            f"An improvement in {t.marker} is the same as protection from {t.outcome}.",
            f"A better {t.marker} means that {t.outcome} has been defeated.",
        ),
        COS: (
            f"{t.remedy.capitalize()} alone caused the improvement, and nothing else played a part.",
            f"Because the improvement followed {t.remedy}, {t.remedy} must be its cause.",
        ),
        DIV: (
            f"What {t.compound} does on its own, {t.remedy} as a whole does too.",
            f"If one part of {t.remedy} has an effect, the whole of {t.remedy} has that effect.",
        ),
        EXC: (
            f"Only the positive result about {t.remedy} matters; studies that found no effect can be ignored.",
            f"The one encouraging finding on {t.remedy} outweighs all the findings against it.",
        ),
        DIL: (
            f"Either {t.remedy} is used, or nothing can be done about {t.outcome}.",
            f"Since {t.alternative} is not the answer, {t.remedy} must be.",
        ),
        IMP: (
            f"Because {t.alternative} does not help every single person, it is useless and {t.remedy} is needed.",
            f"Any treatment that cannot guarantee results against {t.outcome}, like {t.alternative}, has failed.",
        ),
    }[cls]


def _context(cls: str, t: Topic, s: Study) -> str:
    """The publication content that exposes the gap of a fallacy of ``cls`` (s_i)."""
    return {
        HAS: f"The study included only {s.size} {s.subjects}.",
        BSF: f"All participants were {s.group}.",
        FEQ: f"The experiments were done in {s.subjects}, not in people with {t.outcome}.",
        AMB: f"The study measured {t.marker}, not {t.outcome} itself.",
        COS: f"During the study, the participants also {t.other_factor}.",
        DIV: f"The study tested {t.compound} on its own, not {t.remedy}.",
        EXC: f"Two larger studies found no effect of {t.remedy} on {t.outcome}.",
        DIL: f"The authors note that {t.alternative} also improved {t.marker}.",
        IMP: f"The authors write that {t.alternative} lowers the risk of {t.outcome}, though not for everyone.",
    }[cls]


def _comment(cls: str, t: Topic) -> str:
    """The annotators' consolidation comment for a fallacy of ``cls``."""
    return {
        HAS: "A few cases are not enough to draw general conclusions.",
        BSF: "The participants do not represent the people the claim is about.",
        FEQ: f"Findings in a model system do not carry over to people with {t.outcome}.",
        AMB: f"{t.marker.capitalize()} is not the same as {t.outcome}.",
        COS: "Other changes happened at the same time.",
        DIV: f"A single substance is not {t.remedy}.",
        EXC: "The claim ignores the studies that found nothing.",
        DIL: "There are more options than the remedy or nothing.",
        IMP: "No treatment works for everyone; that does not make it useless.",
    }[cls]


def _weighted(rng: random.Random, weights: dict) -> object:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


def _class_deck(rng: random.Random, slots: int) -> list[str]:
    """The first classes of ``slots`` R_i: every class MIN_PER_CLASS times, the rest in Missci's proportions."""
    deck = [name for name in CLASS_NAMES for _ in range(MIN_PER_CLASS)]
    deck += [_weighted(rng, CLASS_WEIGHTS) for _ in range(max(0, slots - len(deck)))]
    rng.shuffle(deck)
    return deck


def _deal_classes(rng: random.Random, sizes: list[int]) -> list[list[str]]:
    """Deal the deck into arguments of the given sizes so that no argument repeats a class."""
    deck = _class_deck(rng, sum(sizes))
    dealt: list[list[str]] = []
    for size in sizes:
        hand: list[str] = []
        while len(hand) < size:
            position = next((i for i, c in enumerate(deck) if c not in hand), None)
            hand.append(deck.pop(position) if position is not None else next(c for c in CLASS_NAMES if c not in hand))
        dealt.append(hand)
    return dealt


def _plan_topics(rng: random.Random, count: int) -> list[int]:
    """Topic index per argument: the first topics repeat (recurring claims), the others appear once (and
    again, in order, when more arguments are asked for than there are topics)."""
    plan = [topic for topic, repeats in enumerate(TOPIC_REPEATS) for _ in range(repeats)]
    singles = list(range(len(TOPIC_REPEATS), len(TOPICS)))
    while len(plan) < count:
        plan += singles
    plan = plan[:count]
    rng.shuffle(plan)
    return plan


def _claim(t: Topic, topic_index: int, occurrence: int) -> str:
    if topic_index == PARAPHRASED_TOPIC:
        template = PARAPHRASES[occurrence % len(PARAPHRASES)]
    else:
        template = PARAPHRASES[0]
    return template.format(Remedy=t.remedy[0].upper() + t.remedy[1:], remedy=t.remedy, effect=t.effect)


def _claim_date(rng: random.Random) -> date:
    return date(2016, 1, 1) + timedelta(days=rng.randrange(8 * 365))


def _format_date(day: date) -> str:
    """Missci's style: "16 Mar. 2019", "8 May 2020"."""
    month = day.strftime("%b")
    return f"{day.day} {month}{'' if month == 'May' else '.'} {day.year}"


def _fallacy(rng: random.Random, argument_id: str, number: int, first_class: str, t: Topic, s: Study) -> dict:
    extra = _weighted(rng, EXTRA_ALTERNATIVES)
    neighbours = list(NEIGHBOURS[first_class])
    rng.shuffle(neighbours)
    classes = [first_class] + neighbours[:extra]
    context = "" if rng.random() < EMPTY_CONTEXT_RATE else _context(first_class, t, s)
    fallacy_id = f"{argument_id}:{number}"
    alternatives = [
        {"premise": rng.choice(_premises(cls, t, s)), "class": cls, "id": f"{fallacy_id}:{j}"}
        for j, cls in enumerate(classes, start=1)
    ]
    return {
        "consolidation_comment": _comment(first_class, t),
        "fallacy_context": context,
        "id": fallacy_id,
        "interchangeable_fallacies": alternatives,
    }


def generate_arguments(
    dev: int = DEFAULT_DEV, test: int = DEFAULT_TEST, seed: int = DEFAULT_SEED
) -> dict[str, list[dict]]:
    """``{"dev": [...], "test": [...]}``: argument objects in the official layout, in file order."""
    if dev < 1 or test < 1:
        raise UserError(
            f"each split needs at least one argument (dev={dev}, test={test}).",
            fix="pass --dev and --test of 1 or more.",
        )
    rng = random.Random(seed)
    total = dev + test
    topics = _plan_topics(rng, total)
    numbers = rng.sample(range(1, total + 1), total)  # ids arg-1 … arg-N, in no particular file order
    studies = {}
    occurrences: Counter = Counter()
    dates = {topic: _claim_date(rng) for topic in sorted(set(topics))}
    verdicts = {
        topic: (rng.choice(VERDICTS), rng.sample(CATEGORIES, rng.choice((1, 2)))) for topic in sorted(set(topics))
    }
    splits: dict[str, list[dict]] = {}
    position = 0
    for split, count in (("dev", dev), ("test", test)):
        sizes = [_weighted(rng, FALLACIES_PER_ARGUMENT) for _ in range(count)]
        # with few arguments, grow them until every class fits MIN_PER_CLASS times
        while sum(sizes) < len(CLASS_NAMES) * MIN_PER_CLASS:
            smallest = min(range(count), key=lambda i: (sizes[i], i))
            if sizes[smallest] >= len(CLASS_NAMES):
                break
            sizes[smallest] += 1
        hands = _deal_classes(rng, sizes)
        arguments = []
        for hand in hands:
            topic_index = topics[position]
            t = TOPICS[topic_index]
            argument_id = f"arg-{numbers[position]}"
            position += 1
            occurrence = occurrences[topic_index]
            occurrences[topic_index] += 1
            study = STUDIES[(studies.setdefault(topic_index, rng.randrange(len(STUDIES))) + occurrence) % len(STUDIES)]
            slug = t.remedy.replace(" ", "-").lower() + "-" + t.outcome.replace(" ", "-")
            day = dates[topic_index]
            verdict, categories = verdicts[topic_index]
            hidden = []
            if rng.random() < HIDDEN_PREMISE_RATE:
                hidden = [
                    f"{t.remedy[0].upper() + t.remedy[1:]} contains {t.compound}.",
                    f"{t.marker[0].upper() + t.marker[1:]} is related to {t.outcome}.",
                ][: rng.choice((1, 2))]
            arguments.append(
                {
                    "id": argument_id,
                    "meta": {
                        "fc_article_url": f"{URL_ROOT}/fact-checks/{slug}/",
                        "fc_article_id": f"{slug}.html",
                        "fc_article_overall_verdict": verdict,
                        "fc_article_categories": str(categories),
                        "claim_date": _format_date(day),
                        "claim_date_parsed": day.isoformat(),
                    },
                    "argument": {
                        "claim": _claim(t, topic_index, occurrence),
                        "hidden_premises": hidden,
                        "accurate_premise_p0": {"premise": study.p0(t, rng)},
                        "fallacies": [
                            _fallacy(rng, argument_id, i, cls, t, study) for i, cls in enumerate(hand, start=1)
                        ],
                    },
                    "study": {"url": f"{URL_ROOT}/studies/{argument_id}-{study.kind}"},
                }
            )
        splits[split] = arguments
    return splits


def write_sample(
    out_dir: str | Path, dev: int = DEFAULT_DEV, test: int = DEFAULT_TEST, seed: int = DEFAULT_SEED
) -> tuple[dict[str, list[dict]], list[Path]]:
    """Write ``{dev,test}.missci.jsonl`` into ``out_dir`` (one JSON object per line, as the official files)."""
    splits = generate_arguments(dev, test, seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for split, arguments in splits.items():
        path = out / SPLIT_FILES[split]
        path.write_text("".join(json.dumps(a) + "\n" for a in arguments), encoding="utf-8")
        paths.append(path)
    return splits, paths


def default_sample_dir() -> Path:
    """The folder of the committed default sample (``sample`` as a Missci data folder means this one)."""
    return SAMPLE_DIR

from missci.prompting.answer_parser import parse_output

HG, FE, FX = "Hasty Generalization", "False Equivalence", "Fallacy of Exclusion"


def test_ranked_pairs_from_messy_markdown():
    text = """Sure! Here are my answers:

1. **Fallacious premise:** One patient is enough to generalise; **Applied fallacy class:** Hasty generalisation
2) Fallacious Premise 3: All cancers are alike. Applied fallacy: False Analogy
- Fallacious premise: "Other studies do not matter"
  Applied fallacy class: cherry-picking
I hope this helps!"""
    parsed = parse_output(text)
    assert parsed.pairs == [
        (HG, "One patient is enough to generalise"),
        (FE, "All cancers are alike"),
        (FX, "Other studies do not matter"),
    ]
    assert parsed.unparsed_lines == 2 and not parsed.fallback


def test_unknown_class_becomes_other_and_orphan_premise_kept():
    parsed = parse_output("Fallacious premise: X; Applied fallacy class: Appeal to nature\nFallacious premise: Y")
    assert parsed.pairs == [("Other", "X"), ("Other", "Y")]


def test_class_only_answers_and_class_first_lines():
    assert parse_output("Applied fallacy class: False Dilemma").classes == ["False Dilemma / Affirming the Disjunct"]
    assert parse_output("Class: Fallacy of Exclusion; Premise: only part counts").pairs == [(FX, "only part counts")]


def test_garbage_is_tolerated_and_counted():
    parsed = parse_output("asdf qwer\n\n!!!\nI think this is a hasty generalization.")
    assert parsed.fallback and parsed.unparsed_lines == 3 and parsed.pairs == [(HG, "")]
    empty = parse_output("")
    assert empty.fallback and empty.pairs == [("Other", "")]
    assert parse_output(None).pairs == [("Other", "")]

"""The answer parser on messy outputs: what it keeps, what it repairs and what it counts."""

from __future__ import annotations

import pytest

from common.errors import UserError
from faina.formats.records import Span
from faina.zero_shot.parser import LabelMatcher


@pytest.mark.parametrize(
    "written,label",
    [
        ("Loaded-language", "Loaded-language"),
        ("loaded language", "Loaded-language"),
        ("LOADED_LANGUAGE", "Loaded-language"),
        ("Name calling", "Name-calling-or-labelling"),
        ("Name-calling-or-labeling", "Name-calling-or-labelling"),
        ("name calling / labelling", None),  # split into two items by the parser, not by the matcher
        ("Thought-terminating clichés", "Thought-terminating-cliches"),
        ("Thought terminating cliche", "Thought-terminating-cliches"),
        ("Hasty generalisation", "Hasty-generalization"),
        ("Straw man fallacy", "Strawman"),
        ("Slogans", "Slogan"),
        ("**Doubt**", "Doubt"),
        ("Red herring", "Red-herring"),
        ("Evading the burden of proof", "Evading-the-burden-of-proof"),
        ("burden of proof", "Evading-the-burden-of-proof"),
        ("Appeal to", None),  # ambiguous: authority or emotion
        ("Appeal to fear", None),  # not in the inventory
        ("False dichotomy", None),
        ("Label", None),  # the answer-format placeholder copied
    ],
)
def test_label_variants_map_to_the_inventory(inventory, definitions, written, label):
    assert LabelMatcher(inventory.fine, definitions).match(written)[0] == label


def test_verbatim_flag(inventory, definitions):
    matcher = LabelMatcher(inventory.fine, definitions)
    assert matcher.match("Slogan") == ("Slogan", True)
    assert matcher.match("slogan") == ("Slogan", False)


def test_coarse_matcher_rejects_fine_labels(inventory, definitions):
    matcher = LabelMatcher(inventory.coarse, definitions)
    assert matcher.match("insufficient proof")[0] == "Insufficient-proof"
    assert matcher.match("Distractions")[0] == "Distraction"
    assert matcher.match("Loaded-language")[0] is None


def test_clean_span_answer(make_parser):
    parsed = make_parser().parse("[1-3 = Slogan]\n[2-5 = Loaded-language]", num_tokens=10)
    assert parsed.predictions == (Span(1, 3, "Slogan"), Span(2, 5, "Loaded-language"))
    assert parsed.counts["items"] == 2 and not parsed.said_none
    assert sum(v for k, v in parsed.counts.items() if k != "items") == 0


def test_none_answer(make_parser):
    parsed = make_parser().parse("[None]", num_tokens=10)
    assert parsed.predictions == () and parsed.said_none and parsed.has_items


def test_prompt_continuation_keeps_only_bracket_items(make_parser):
    output = (
        "[4-6 = Doubt]\n\nPost:\n1\tStudio\n2\tamericano\n\nAnswer format:\nWrite one item per fallacy, "
        "in the form [first-last = Label] ... Write [None] if the post contains no fallacy."
    )
    parsed = make_parser().parse(output, num_tokens=8)
    assert parsed.predictions == (Span(4, 6, "Doubt"),)
    assert parsed.counts["malformed"] == 1  # the copied template item
    assert parsed.counts["none"] == 1 and parsed.counts["none_with_items"] == 1
    assert parsed.said_none


def test_explanations_and_mentions_outside_brackets_are_ignored(make_parser):
    output = (
        'The post uses Loaded language ("sciagura") and is also an Appeal to emotion.\n'
        "[12-12 = Loaded language] because the word is emotionally charged."
    )
    parsed = make_parser().parse(output, num_tokens=20)
    assert parsed.predictions == (Span(12, 12, "Loaded-language"),)
    assert parsed.counts["label_normalised"] == 1
    assert parsed.counts["outside_mentions"] == 2  # Loaded language, Appeal to emotion in the prose


def test_wrong_labels_are_counted_and_dropped(make_parser):
    parsed = make_parser().parse("[1-2 = False dichotomy] [3-4 = Ad hoc] [5-6 = Slogan]", num_tokens=10)
    assert parsed.predictions == (Span(5, 6, "Slogan"),)
    assert parsed.counts["unknown_label"] == 2
    assert parsed.unknown_labels == ("False dichotomy", "Ad hoc")


def test_repeated_items_are_kept_once(make_parser):
    parsed = make_parser().parse("[1-3 = Slogan] [1-3 = Slogan] [1-3 = slogan] [1-3 = Slogan]", num_tokens=5)
    assert parsed.predictions == (Span(1, 3, "Slogan"),)
    assert parsed.counts["repeated"] == 3


def test_overlapping_spans_of_one_label_are_merged(make_parser):
    parsed = make_parser().parse("[1-4 = Doubt] [3-6 = Doubt] [5-6 = Slogan]", num_tokens=8)
    assert parsed.predictions == (Span(1, 6, "Doubt"), Span(5, 6, "Slogan"))
    assert parsed.counts["merged_overlap"] == 1


def test_out_of_range_indices_are_clipped(make_parser):
    parsed = make_parser(out_of_range="clip").parse(
        "[0-2 = Doubt] [8-15 = Slogan] [11-14 = Vagueness] [9-7 = Strawman]", num_tokens=10
    )
    assert parsed.predictions == (Span(1, 2, "Doubt"), Span(7, 9, "Strawman"), Span(8, 10, "Slogan"))
    assert parsed.counts["out_of_range_clipped"] == 2
    assert parsed.counts["out_of_range_rejected"] == 1  # 11-14 lies wholly after the last token
    assert parsed.counts["reversed_range"] == 1


def test_out_of_range_indices_are_rejected(make_parser):
    parsed = make_parser(out_of_range="reject").parse("[0-2 = Doubt] [8-15 = Slogan] [3-4 = Doubt]", num_tokens=10)
    assert parsed.predictions == (Span(3, 4, "Doubt"),)
    assert parsed.counts["out_of_range_rejected"] == 2


def test_unknown_out_of_range_policy_is_a_user_error(make_parser):
    with pytest.raises(UserError, match="clip, reject"):
        make_parser(out_of_range="wrap")


def test_tolerated_span_spellings(make_parser):
    output = "1. [3 – 5 = Slogan]\n2. [7 to 8: Doubt]\n3. [9 = Vagueness]\n4. [2-3 = Slogan, Doubt]"
    parsed = make_parser().parse(output, num_tokens=10)
    assert parsed.predictions == (
        Span(2, 3, "Doubt"),
        Span(2, 5, "Slogan"),
        Span(7, 8, "Doubt"),
        Span(9, 9, "Vagueness"),
    )


def test_span_items_without_indices_and_placeholders(make_parser):
    parsed = make_parser().parse("[Slogan] [URL] [USER] [3-4]", num_tokens=10)
    assert parsed.predictions == ()
    assert parsed.counts["malformed"] == 2 and parsed.counts["placeholders"] == 2
    assert parsed.counts["items"] == 2


def test_post_answers(make_parser):
    parsed = make_parser("post").parse(
        '["Slogan", "Doubt"] [slogan] [3-4 = Red herring] [Appeal to fear] Slogan outside', num_tokens=None
    )
    assert parsed.predictions == ("Doubt", "Red-herring", "Slogan")
    assert parsed.counts["repeated"] == 1 and parsed.counts["indices_ignored"] == 1
    assert parsed.counts["unknown_label"] == 1 and parsed.counts["outside_mentions"] == 1


def test_post_coarse_answer_with_fine_label(make_parser):
    parsed = make_parser("post", "coarse").parse("[Distraction]\n[Loaded-language]\n[Simplification]")
    assert parsed.predictions == ("Distraction", "Simplification")
    assert parsed.unknown_labels == ("Loaded-language",)


def test_empty_and_bracketless_outputs(make_parser):
    for text in ("", "I cannot find any fallacy.", "Slogan, Doubt"):
        parsed = make_parser("post").parse(text)
        assert parsed.predictions == () and not parsed.has_items and not parsed.said_none

"""The output audit: kinds of outputs and traits of answers (the Faina paper's Figures 5-6)."""

from __future__ import annotations

import pytest

from faina.zero_shot.audit import audit_output, continues_prompt, format_audit, summarise_audit

OUTPUTS = {
    "clean": "[1-3 = Slogan]\n[4-5 = Doubt]",
    "cue": "Answer: [1-3 = Slogan]",
    "explained": "[1-3 = Slogan] because it is a catchy motto that replaces reasoning.",
    "wrong_label": "[1-3 = False dichotomy]",
    "repeated": "[1-3 = Slogan] [1-3 = Slogan]",
    "continuation": "[1-3 = Slogan]\n\nInstructions:\n- Find all the fallacies in the post.",
    "echo": "1\tStudio\n2\tamericano\n3\t:\n4\tla",
    "chat_marker": "<|im_start|>user\nRead the post",
    "nothing": "The post is about public health.",
    "empty": "",
}


@pytest.fixture
def audits(make_parser):
    parser = make_parser()
    return {name: audit_output(text, parser.parse(text, num_tokens=10)) for name, text in OUTPUTS.items()}


def test_output_kinds(audits):
    kinds = {name: audit.kind for name, audit in audits.items()}
    assert kinds == {
        "clean": "answer_only",
        "cue": "answer_only",
        "explained": "answer_only",
        "wrong_label": "answer_only",
        "repeated": "answer_only",
        "continuation": "answer_and_instructions",
        "echo": "instructions_only",
        "chat_marker": "instructions_only",
        "nothing": "nothing",
        "empty": "nothing",
    }


def test_answer_traits(audits):
    assert audits["clean"].requested_format and audits["cue"].requested_format
    assert not audits["explained"].requested_format and audits["explained"].explanations
    assert not audits["clean"].explanations and not audits["continuation"].explanations
    assert audits["wrong_label"].labels_outside_inventory and audits["wrong_label"].requested_format
    assert audits["repeated"].repetitions and not audits["clean"].repetitions
    assert not audits["continuation"].requested_format


def test_answer_text_is_not_mistaken_for_instructions():
    assert not continues_prompt("Answer: [1-3 = Slogan]\nThe post shows a slogan.")
    assert continues_prompt("[1-3 = Slogan]\nTask:\nRead the social media post below")
    assert continues_prompt("### Instruction: find fallacies")


def test_summary_shares_and_counts(make_parser):
    parser = make_parser()
    texts = [
        OUTPUTS[name]
        for name in ("clean", "explained", "repeated", "continuation", "echo", "nothing", "wrong_label", "cue")
    ]
    parsed = [parser.parse(t, num_tokens=10) for t in texts]
    summary = summarise_audit(texts, parsed)
    assert summary["outputs"] == 8 and summary["answers"] == 6
    assert summary["output_kinds"] == {
        "answer_only": 5 / 8,
        "instructions_only": 1 / 8,
        "answer_and_instructions": 1 / 8,
        "nothing": 1 / 8,
    }
    assert summary["answer_traits"] == {
        "requested_format": 4 / 6,
        "explanations": 1 / 6,
        "labels_outside_inventory": 1 / 6,
        "repetitions": 1 / 6,
    }
    assert summary["parser_counts"]["repeated"] == 1 and summary["parser_counts"]["unknown_label"] == 1
    assert summary["unknown_labels"] == {"False dichotomy": 1}
    assert summary["posts_with_predictions"] == 5
    table = format_audit(summary)
    assert "answer only 62.5%" in table and "'False dichotomy'×1" in table


def test_summary_of_no_outputs_is_all_zero():
    summary = summarise_audit([], [])
    assert summary["outputs"] == 0 and set(summary["output_kinds"].values()) == {0.0}


def test_copied_prompt_lines_and_numbered_echo_are_prompt_continuation():
    prompt = "Instructions:\n- The post is given one token per line, each preceded by its index.\n"
    copied = "1\n\nThe post is given one token per line, each preceded by its index."
    assert continues_prompt(copied, prompt) and not continues_prompt(copied)
    assert continues_prompt("1. Buongiorno\n2. a\n3. tutti\n4. ho")
    assert not continues_prompt("[1-3 = Slogan]\nThe post is a slogan.", prompt)

"""Supervised fine-tuning examples for Missci: (prompt, answer) texts and their answer-only token labels.

The prompt of every example is the one the zero-shot path sends (``missci/prompting/prompts.py``, rendered through the
model's chat template by ``models.llm.generation.render_prompt``), and the answer is one line in exactly the form
that prompt asks for and the shared parser reads (``missci/prompting/answer_parser.py``). So a fine-tuned model is prompted,
parsed and scored by the same code as a zero-shot one, and a test can check that every answer parses back.

Each interchangeable fallacy (premise, class) of an R_i is its own example: any one of them bridges the gap,
so all are correct targets for the same prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from missci.dataset.reader import Argument
from missci.prompting.prompts import (
    ANSWER_CLASS,
    ANSWER_PREMISE,
    PromptOptions,
    classification_prompt,
    reconstruction_prompt,
)
from models.llm.generation import render_prompt

log = logging.getLogger(__name__)
IGNORE_INDEX = -100  # label of tokens that do not count in the loss (prompt and padding)


@dataclass(frozen=True)
class SftExample:
    argument_id: str
    fallacy_id: str
    prompt: str  # the task text, before the chat template
    answer: str  # what the model must write after the prompt


def reconstruction_answer(premise: str, fallacy_class: str) -> str:
    return f"{ANSWER_PREMISE}: {' '.join(premise.split())}; {ANSWER_CLASS}: {fallacy_class}"


def classification_answer(fallacy_class: str) -> str:
    return f"{ANSWER_CLASS}: {fallacy_class}"


def reconstruction_examples(arguments: Sequence[Argument], options: PromptOptions) -> list[SftExample]:
    """One example per interchangeable (premise, class) of every R_i (missci-gen)."""
    return [
        SftExample(
            argument.id,
            fallacy.id,
            reconstruction_prompt(argument, fallacy, options),
            reconstruction_answer(alt.premise, alt.fallacy_class),
        )
        for argument in arguments
        for fallacy in argument.fallacies
        for alt in fallacy.interchangeable
    ]


def classification_examples(arguments: Sequence[Argument], options: PromptOptions) -> list[SftExample]:
    """One example per interchangeable fallacy with its gold premise in the prompt (missci-cls)."""
    return [
        SftExample(
            argument.id,
            fallacy.id,
            classification_prompt(argument, fallacy, alt.premise, options),
            classification_answer(alt.fallacy_class),
        )
        for argument in arguments
        for fallacy in argument.fallacies
        for alt in fallacy.interchangeable
    ]


def end_of_answer_ids(tokenizer) -> list[int]:
    """The token that closes the assistant's turn (EOS, else SEP), so the model learns to stop."""
    for token_id in (tokenizer.eos_token_id, getattr(tokenizer, "sep_token_id", None)):
        if token_id is not None:
            return [int(token_id)]
    return []


def encode_example(
    tokenizer,
    example: SftExample,
    use_chat_template: bool = True,
    system_prompt: str | None = None,
    max_length: int | None = None,
) -> dict[str, list[int]]:
    """Token ids of prompt + answer and labels that are ``IGNORE_INDEX`` on every prompt token.

    Prompt and answer are tokenised separately, exactly as at generation time (the rendered prompt is encoded
    on its own, the model continues from its last token), so the boundary the loss sees is the one the model
    meets when it generates. Too long examples lose prompt tokens from the left; the answer stays whole.
    """
    rendered = render_prompt(tokenizer, example.prompt, use_chat_template, system_prompt)
    has_template = use_chat_template and bool(getattr(tokenizer, "chat_template", None))
    prompt_ids = tokenizer(rendered, add_special_tokens=not has_template)["input_ids"]
    answer_ids = tokenizer(example.answer, add_special_tokens=False)["input_ids"] + end_of_answer_ids(tokenizer)
    truncated = False
    if max_length is not None and len(prompt_ids) + len(answer_ids) > max_length:
        keep = max(max_length - len(answer_ids), 1)
        prompt_ids, truncated = prompt_ids[-keep:], True
    return {
        "input_ids": list(prompt_ids) + list(answer_ids),
        "labels": [IGNORE_INDEX] * len(prompt_ids) + list(answer_ids),
        "truncated": truncated,
    }


def encode_examples(
    tokenizer,
    examples: Sequence[SftExample],
    use_chat_template: bool = True,
    system_prompt: str | None = None,
    max_length: int | None = None,
) -> list[dict[str, list[int]]]:
    encoded = [encode_example(tokenizer, e, use_chat_template, system_prompt, max_length) for e in examples]
    cut = sum(bool(e.pop("truncated")) for e in encoded)
    if cut:
        log.warning(
            "%d of %d training examples were longer than max_length=%s; their prompts were cut from the "
            "left (raise lora.max_length to keep them whole).",
            cut,
            len(encoded),
            max_length,
        )
    return encoded

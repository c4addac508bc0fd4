"""What the LLM actually wrote, in the categories of the Faina paper's Figures 5-6.

Per output: does it contain an answer (at least one bracket item), extra instructions (it continues the
prompt: prompt headings, chat-role markers, or the echoed token list), both, or nothing usable. Among the
outputs with an answer: is the answer in the requested format (only well-formed items, no other text),
does it come with explanations, does it use labels outside the inventory, does it repeat items. Shares are
fractions of the outputs (first group) and of the answers (second group); the parser's repair counts are
summed alongside, so a score can be read together with how much repairing it needed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from faina.zero_shot.parser import ParsedAnswer
from faina.zero_shot.prompts import ANSWER_CUE, PROMPT_HEADINGS

_HEADINGS = "|".join(re.escape(h.rstrip(":")) for h in PROMPT_HEADINGS)
INSTRUCTION_LINE_RE = re.compile(
    rf"^\s*(?:#+\s*)?(?:{_HEADINGS}|instructions?|input|question|text|system|user|assistant)\s*(?::|$)"
    r"|<\|[a-z_]+\|>|\[/?INST\]",
    re.IGNORECASE | re.MULTILINE,
)
# "12<TAB>token" or "12. token": the prompt's input (or its label list) echoed one item per line
TOKEN_LINE_RE = re.compile(r"^\s*\d+(?:\t|[.):]?[ \t]+)\S+\s*$", re.MULTILINE)
COPIED_LINE_MIN_WORDS = 5
LIST_MARK_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
ECHO_MIN_TOKEN_LINES = 3
EXPLANATION_MIN_WORDS = 3
WORD_RE = re.compile(r"[^\W\d_]{2,}")

OUTPUT_KINDS = ("answer_only", "instructions_only", "answer_and_instructions", "nothing")
ANSWER_TRAITS = ("requested_format", "explanations", "labels_outside_inventory", "repetitions")


@dataclass(frozen=True)
class OutputAudit:
    has_answer: bool
    has_instructions: bool
    requested_format: bool
    explanations: bool
    labels_outside_inventory: bool
    repetitions: bool

    @property
    def kind(self) -> str:
        if self.has_answer:
            return "answer_and_instructions" if self.has_instructions else "answer_only"
        return "instructions_only" if self.has_instructions else "nothing"


def continues_prompt(text: str, prompt: str | None = None) -> bool:
    """Whether the output contains prompt material: a heading or role marker, the echoed token list, or
    (when the prompt is given) a line of at least five words copied from the prompt."""
    if INSTRUCTION_LINE_RE.search(text) or len(TOKEN_LINE_RE.findall(text)) >= ECHO_MIN_TOKEN_LINES:
        return True
    if prompt:
        for line in text.splitlines():
            line = LIST_MARK_RE.sub("", line).strip()
            if len(line.split()) >= COPIED_LINE_MIN_WORDS and line in prompt:
                return True
    return False


def explanation_words(residual: str) -> list[str]:
    """Words outside the items, ignoring prompt material (a heading and its section up to the next blank
    line, echoed token lines) and the answer cue."""
    kept, in_section = [], False
    for line in residual.splitlines():
        in_section = bool(line.strip()) and (in_section or bool(INSTRUCTION_LINE_RE.search(line)))
        if not in_section and not TOKEN_LINE_RE.match(line):
            kept.append(line)
    text = "\n".join(kept).replace(ANSWER_CUE, " ")
    return WORD_RE.findall(text)


def audit_output(text: str, parsed: ParsedAnswer, prompt: str | None = None) -> OutputAudit:
    words = explanation_words(parsed.residual)
    leftover = WORD_RE.findall(parsed.residual.replace(ANSWER_CUE, " "))
    return OutputAudit(
        has_answer=parsed.has_items,
        has_instructions=continues_prompt(text, prompt),
        requested_format=parsed.has_items and not leftover and parsed.counts["malformed"] == 0,
        explanations=len(words) >= EXPLANATION_MIN_WORDS,
        labels_outside_inventory=parsed.counts["unknown_label"] > 0,
        repetitions=parsed.counts["repeated"] > 0,
    )


def summarise_audit(texts: Sequence[str], parsed: Sequence[ParsedAnswer], prompts: Sequence[str] | None = None) -> dict:
    """Shares of output kinds and answer traits, summed parser counts, and the most frequent unknown labels."""
    prompts = list(prompts) if prompts is not None else [None] * len(texts)
    audits = [audit_output(text, p, prompt) for text, p, prompt in zip(texts, parsed, prompts, strict=True)]
    n = len(audits)
    kinds = Counter(a.kind for a in audits)
    answers = [a for a in audits if a.has_answer]
    parser_counts: Counter = Counter()
    unknown: Counter = Counter()
    for p in parsed:
        parser_counts.update(p.counts)
        unknown.update(p.unknown_labels)
    return {
        "outputs": n,
        "output_kinds": {kind: _share(kinds[kind], n) for kind in OUTPUT_KINDS},
        "answers": len(answers),
        "answer_traits": {
            trait: _share(sum(getattr(a, trait) for a in answers), len(answers)) for trait in ANSWER_TRAITS
        },
        "parser_counts": dict(sorted(parser_counts.items())),
        "posts_with_none": sum(p.said_none for p in parsed),
        "posts_with_predictions": sum(bool(p.predictions) for p in parsed),
        "unknown_labels": dict(unknown.most_common(20)),
    }


def _share(count: int, total: int) -> float:
    return count / total if total else 0.0


def format_audit(audit: dict, title: str = "Output audit") -> str:
    def shares(values: dict) -> str:
        return "  ".join(f"{key.replace('_', ' ')} {100 * value:.1f}%" for key, value in values.items())

    repairs = ", ".join(f"{k} {v}" for k, v in audit["parser_counts"].items() if v) or "nothing to repair"
    lines = [
        f"{title} ({audit['outputs']} outputs, {audit['answers']} with an answer)",
        f"  outputs:  {shares(audit['output_kinds'])}",
        f"  answers:  {shares(audit['answer_traits'])}",
        f"  parser:   {repairs}",
    ]
    if audit["unknown_labels"]:
        lines.append("  unknown labels: " + ", ".join(f"{k!r}×{v}" for k, v in audit["unknown_labels"].items()))
    return "\n".join(lines)

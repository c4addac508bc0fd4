"""The post's context as model input: its topic keywords and its date (the header lines of every Faina file), put
before the post's text as a text prefix, so the encoder reads them as it reads the words.

FadeIT encourages using the posts' time and topic metadata. ``data.context`` lists the header fields a model reads
(``[]``: none, the default and what the paper trained; ``[topic]``, ``[topic, date]``): the fields' values joined by
``" | "`` and closed by the tokenizer's separator token (or a colon when it has none) come before the post's
subwords. The prefix carries no label, so span tags and word alignment are those of the post alone, and the saved
model records its context so ``predict`` / ``tag`` / ``export`` build the same input (docs/training.md, "Post context").
"""

from __future__ import annotations

from collections.abc import Sequence

from common.errors import UserError

# a field name → the record attribute holding it (records of both levels have both)
CONTEXT_FIELDS = {"topic": "topic", "date": "date"}
SEPARATOR = " | "


def check_context(value, option: str = "data.context") -> tuple[str, ...]:
    """``data.context`` as a tuple of known, distinct field names; anything else is one message naming ``option``."""
    if value is None:
        return ()
    fields = [value] if isinstance(value, str) else value
    if not isinstance(fields, Sequence) or any(not isinstance(name, str) for name in fields):
        raise UserError(f"{option}={value!r} must be a list of header fields", fix=f"e.g. {option}=[topic,date]")
    unknown = [name for name in fields if name not in CONTEXT_FIELDS]
    if unknown:
        raise UserError(
            f"{option} names {', '.join(map(repr, unknown))}, not a context field",
            fix=f"use some of {', '.join(CONTEXT_FIELDS)} (e.g. {option}=[topic,date]), or {option}=[] for none",
        )
    if len(set(fields)) != len(fields):
        raise UserError(
            f"{option}={list(fields)} names a field twice", fix=f"name each of {', '.join(CONTEXT_FIELDS)} once"
        )
    return tuple(fields)


def context_text(record, fields: Sequence[str]) -> str:
    """The prefix's text: the record's values of ``fields`` in order (an empty value stays an empty slot)."""
    return SEPARATOR.join(str(getattr(record, CONTEXT_FIELDS[name])).strip() for name in fields)


def context_ids(record, fields: Sequence[str], tokenizer) -> list[int]:
    """The subword ids that come before the post's own: none without ``fields``."""
    if not fields:
        return []
    text = context_text(record, fields)
    separator = tokenizer.sep_token_id
    if separator is None:
        return tokenizer(f"{text}:", add_special_tokens=False)["input_ids"]
    return [*tokenizer(text, add_special_tokens=False)["input_ids"], separator]

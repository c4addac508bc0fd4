"""How Faina splits a post's text into tokens: the one rule, used by the sample generator and by raw-text tagging.

Faina's CoNLL files hold one token per line: words and punctuation marks, with the anonymisation
placeholders kept whole. The rule (a single regular expression, tried left to right at each position):

1. a placeholder ``[USER]``, ``[URL]``, ``[EMAIL]``, ``[PHONE]`` is one token;
2. a hashtag ``#word`` is one token;
3. an elided word keeps its apostrophe: ``l'Italia`` → ``l'`` ``Italia``, ``dell'ONU`` → ``dell'`` ``ONU``;
4. a word is a run of letters/digits/underscore; a number keeps its inner separators (``1.000``, ``3,5``);
5. any other non-space character is a token on its own (``...`` → ``.`` ``.`` ``.``; each emoji code point);
6. whitespace separates tokens and is never part of one.

Every token is a slice of the text, so each token's character offsets in the original post are exact
(``tokenize_with_offsets``), which is how predicted spans are mapped back to the text a user gave.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOKEN_PATTERN = re.compile(r"\[(?:USER|URL|EMAIL|PHONE)\]|#\w+|\w+'|\w+(?:[.,]\d+)*|[^\w\s]")


@dataclass(frozen=True)
class Token:
    """One token and its character offsets in the text: ``text[start:end] == token.text``."""

    text: str
    start: int
    end: int


def tokenize_with_offsets(text: str) -> list[Token]:
    """The tokens of ``text`` (Faina's rule, see the module docstring) with their character offsets."""
    return [Token(match.group(), match.start(), match.end()) for match in TOKEN_PATTERN.finditer(text)]


def tokenize(text: str) -> list[str]:
    """The token strings of ``text`` (Faina's rule)."""
    return TOKEN_PATTERN.findall(text)

"""Turn a model's free text into ranked (class, premise) pairs, tolerating and counting garbage.

Accepted shapes (case-insensitive, list markers and markdown emphasis ignored):
- one line: ``Fallacious premise: P; Applied fallacy class: C`` (also ``Premise 3: P. Fallacy: C``);
- two lines: a premise line followed by a class line;
- class-only lines (``Applied fallacy class: C``, ``Class: C``) for classification prompts.
Class texts are normalised to the 9 classes or "Other". Lines that fit none of these count as unparsed.
If nothing fits, the first class name mentioned anywhere is used (premise empty), else ("Other", "").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from missci.dataset.classes import OTHER, normalise_class

_MARKERS = re.compile(r"^\s*(?:[-*•>]+|\(?\d+[.)]|\(?[a-z][.)]\s)?\s*")
_CLASS_KEY = r"(?:applied\s+)?(?:fallacy|fallacy\s+class|class|fallacy\s+type|type\s+of\s+fallacy)"
_PREMISE_KEY = r"(?:fallacious\s+|hidden\s+|missing\s+)?premise(?:\s*\d+(?:\.\d+)?)?"
_SAME_LINE = re.compile(
    rf"{_PREMISE_KEY}\s*[:=]\s*(?P<premise>.+?)\s*[;,.|]?\s*{_CLASS_KEY}\s*[:=]\s*(?P<cls>.+)$", re.IGNORECASE
)
_CLASS_FIRST = re.compile(
    rf"{_CLASS_KEY}\s*[:=]\s*(?P<cls>[^;|]+?)\s*[;,|]\s*{_PREMISE_KEY}\s*[:=]\s*(?P<premise>.+)$", re.IGNORECASE
)
_PREMISE_ONLY = re.compile(rf"^{_PREMISE_KEY}\s*[:=]\s*(?P<premise>.+)$", re.IGNORECASE)
_CLASS_ONLY = re.compile(rf"^{_CLASS_KEY}\s*[:=]\s*(?P<cls>.+)$", re.IGNORECASE)


@dataclass
class ParsedOutput:
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (class, premise), rank order
    unparsed_lines: int = 0
    fallback: bool = False  # True when no structured answer was found

    @property
    def classes(self) -> list[str]:
        return [c for c, _ in self.pairs]


def _clean(line: str) -> str:
    line = line.replace("**", "").replace("__", "").replace("`", "").strip()
    return _MARKERS.sub("", line, count=1).strip()


def _clean_premise(text: str) -> str:
    text = text.strip().strip('"“”').strip()
    return re.sub(r"\s*[;,|]\s*$", "", text)


def parse_output(text: str) -> ParsedOutput:
    """Ranked (class, premise) pairs from a reconstruction or classification answer."""
    result = ParsedOutput()
    pending_premise: str | None = None
    for raw_line in (text or "").splitlines():
        line = _clean(raw_line)
        if not line:
            continue
        match = _SAME_LINE.search(line) or _CLASS_FIRST.search(line)
        if match:
            result.pairs.append((normalise_class(match["cls"]), _clean_premise(match["premise"])))
            pending_premise = None
        elif (match := _PREMISE_ONLY.match(line)) is not None:
            if pending_premise is not None:  # a premise without class: keep it, class unknown
                result.pairs.append((OTHER, pending_premise))
            pending_premise = _clean_premise(match["premise"])
        elif (match := _CLASS_ONLY.match(line)) is not None:
            result.pairs.append((normalise_class(match["cls"]), pending_premise or ""))
            pending_premise = None
        else:
            result.unparsed_lines += 1
    if pending_premise is not None:
        result.pairs.append((OTHER, pending_premise))
    if not result.pairs:
        result.fallback = True
        result.pairs.append((normalise_class(text), ""))
    return result

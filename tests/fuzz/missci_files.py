"""Valid Missci files drawn as JSON objects, and the projection a correct reader must return for each line.

``expected_argument(obj)`` reads a line's known fields *without* checking them, applying only the documented
defaults of optional fields; a reader that accepts a line must return exactly that, so a value it coerced
(a number turned into a string, a wrong-typed field replaced by a default) shows as a difference.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.faina_files import TOKEN_ALPHABET
from missci.dataset.classes import CLASS_NAMES
from missci.dataset.reader import Argument, Fallacy, InterchangeableFallacy

texts = st.text(st.sampled_from(TOKEN_ALPHABET + '\t\n"\\é'), min_size=1, max_size=12).filter(str.strip)
maybe_empty = st.text(st.sampled_from(TOKEN_ALPHABET + "\n"), max_size=8)
ids = st.text(st.sampled_from("arg-0123456789:x"), min_size=1, max_size=8).filter(str.strip)


@st.composite
def argument_objects(draw, argument_id: str, max_fallacies: int = 3) -> dict:
    fallacies = []
    for i in range(draw(st.integers(1, max_fallacies))):
        alternatives = [
            {
                "premise": draw(texts),
                "class": draw(st.sampled_from(CLASS_NAMES)),
                "id": f"{argument_id}:{i + 1}:{j + 1}",
            }
            for j in range(draw(st.integers(1, 3)))
        ]
        fallacy = {
            "fallacy_context": draw(maybe_empty),
            "id": f"{argument_id}:{i + 1}",
            "interchangeable_fallacies": alternatives,
        }
        if draw(st.booleans()):
            fallacy["consolidation_comment"] = draw(maybe_empty)
        fallacies.append(fallacy)
    body = {"claim": draw(texts), "accurate_premise_p0": {"premise": draw(texts)}, "fallacies": fallacies}
    if draw(st.booleans()):
        body["hidden_premises"] = draw(st.lists(texts, max_size=2))
    obj = {"id": argument_id, "argument": body}
    if draw(st.booleans()):
        obj["meta"] = draw(st.dictionaries(st.sampled_from(("claim_date", "fc_article_url")), maybe_empty))
    if draw(st.booleans()):
        obj["study"] = {"url": draw(maybe_empty)} if draw(st.booleans()) else {}
    return obj


@st.composite
def missci_files(draw, max_arguments: int = 4) -> list[dict]:
    names = draw(st.lists(ids, min_size=1, max_size=max_arguments, unique=True))
    return [draw(argument_objects(name)) for name in names]


def expected_argument(obj: dict) -> Argument:
    body = obj["argument"]
    fallacies = tuple(
        Fallacy(
            f["id"],
            f["fallacy_context"],
            f.get("consolidation_comment") or "",
            tuple(InterchangeableFallacy(a["id"], a["premise"], a["class"]) for a in f["interchangeable_fallacies"]),
        )
        for f in body["fallacies"]
    )
    study = obj.get("study") or {}
    return Argument(
        obj["id"],
        body["claim"],
        body["accurate_premise_p0"]["premise"],
        tuple(body.get("hidden_premises") or ()),
        fallacies,
        study.get("url") or "",
        obj.get("meta") or {},
    )


def json_paths(value, prefix=()) -> list[tuple]:
    """Every key/index path into a JSON value (where a corruption can be planted)."""
    paths = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            paths += json_paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += json_paths(item, prefix + (index,))
    return paths


def replaced(value, path: tuple, new, delete: bool = False):
    """A deep copy of ``value`` with the item at ``path`` replaced by ``new`` (or deleted)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    out = dict(value) if isinstance(value, dict) else list(value)
    if delete and not rest:
        del out[head]
    else:
        out[head] = replaced(value[head], rest, new, delete)
    return out

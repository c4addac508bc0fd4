"""What every fuzz test of a reader shares: its settings, its input counter and the byte-level corruptions.

Each reader's test draws files (valid ones, and valid ones spoiled in one way), writes them to a scratch file
and hands the path to the reader exactly as a user would. ``tried(reader)`` counts the inputs per reader for
the summary ``tests/conftest.py`` prints at the end of the run. ``fuzz_settings(base)`` scales a
reader's tuned example count by the active profile (``FALLACY_FUZZ_PROFILE``: ``fuzz`` by default, ``quick`` for
a tenth (what the fast test tier runs: ``tests/tiers.py`` sets it), ``slow`` for ten times more), always derandomized and without an example database, so a run is reproducible.

Import it as ``from fuzz.support import ...`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import collections
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from common.errors import UserError

PROFILE_ENV = "FALLACY_FUZZ_PROFILE"
SCALE = {"quick": 0.1, "fuzz": 1, "slow": 10}
QUICK_MINIMUM = 12  # examples per test even in the quick profile
COUNTS: collections.Counter = collections.Counter()
FAILURES: collections.Counter = collections.Counter()

settings.register_profile(
    "fuzz",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("slow", parent=settings.get_profile("fuzz"))
settings.register_profile("quick", parent=settings.get_profile("fuzz"))


def active_profile() -> str:
    name = os.environ.get(PROFILE_ENV, "fuzz")
    if name not in SCALE:
        raise pytest.UsageError(f"{PROFILE_ENV}={name!r}: use one of {', '.join(SCALE)}")
    return name


def fuzz_settings(base: int) -> settings:
    """The profile's settings with ``base`` examples (times the profile's scale)."""
    name = active_profile()
    examples = base * SCALE[name] if SCALE[name] >= 1 else max(QUICK_MINIMUM, round(base * SCALE[name]))
    return settings(settings.get_profile(name), max_examples=int(examples))


def tried(reader: str) -> None:
    COUNTS[reader] += 1


# a RAM-backed folder when the machine has one: thousands of small writes cost a tenth of the disk's time
SCRATCH = Path(tempfile.mkdtemp(prefix="fallacy-fuzz-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))


def scratch_file(name: str, data: bytes) -> Path:
    """``data`` written to a file called ``name`` in the session's scratch folder (the suffix is what readers see)."""
    path = SCRATCH / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def outcome(read: Callable[[], object]):
    """``(result, None)`` or ``(None, UserError)``; any other exception fails the test (a traceback for a user)."""
    try:
        return read(), None
    except UserError as err:
        assert str(err).strip(), "a UserError without a message"
        return None, err


# --- byte-level corruptions every text reader must survive -----------------------------------------------
BOM = "\ufeff".encode("utf-8")
INVALID_UTF8 = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\x80")


@st.composite
def spoiled_bytes(draw, data: bytes) -> tuple[str, bytes]:
    """``(kind, bytes)``: ``data`` truncated, re-encoded, given bad bytes, a BOM, CRLF endings or NUL bytes.

    Kinds: ``truncated`` (may still be a valid file), ``bom`` (harmless: the same records), the rest (an error
    is the only right answer: invalid UTF-8, UTF-16, NUL bytes, CRLF, emptiness)."""
    text = data.decode("utf-8")
    kind = draw(
        st.sampled_from(("truncated", "bom", "latin-1", "utf-16", "invalid-utf8", "nul", "crlf", "empty", "blank"))
    )
    if kind == "truncated":
        return kind, data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if kind == "bom":
        return kind, BOM + data
    if kind == "latin-1":  # only a real change when the text has a non-ASCII character latin-1 can hold
        spoiled = text.encode("latin-1", errors="replace")
        return ("latin-1" if spoiled != data else "same"), spoiled
    if kind == "utf-16":
        return kind, text.encode(draw(st.sampled_from(("utf-16", "utf-16-le", "utf-16-be"))))
    if kind == "invalid-utf8":
        at = draw(st.integers(0, len(data)))
        return kind, data[:at] + draw(st.sampled_from(INVALID_UTF8)) + data[at:]
    if kind == "nul":
        at = draw(st.integers(0, len(data)))
        return kind, data[:at] + b"\x00" + data[at:]
    if kind == "crlf":
        return kind, data.replace(b"\n", b"\r\n") if b"\n" in data else data + b"\r\n"
    if kind == "empty":
        return kind, b""
    return kind, draw(st.sampled_from((b"\n", b"\n\n\n", b"  \t \n", b" ")))


MUST_FAIL = {"utf-16", "invalid-utf8", "nul", "crlf", "empty", "blank"}

# values that break naive numeric or structural code when they turn up in a JSON/YAML field
JUNK_SCALARS = (
    None,
    True,
    False,
    0,
    -1,
    2**70,
    -(2**70),
    1.5,
    math.nan,
    math.inf,
    -math.inf,
    "",
    " ",
    "x" * 5000,
    "\u0000",
    [],
    {},
    "NaN",
)


def nested_junk(depth: int) -> str:
    """A JSON text nested ``depth`` levels deep (deep enough to exhaust a recursive parser when large)."""
    return "[" * depth + "1" + "]" * depth


def json_junk() -> st.SearchStrategy:
    """Arbitrary JSON values: scalars of the junk list and small nested lists/objects of them."""
    scalars = st.sampled_from(JUNK_SCALARS) | st.integers() | st.floats() | st.text(max_size=10)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8,
    )

"""The checks the fuzz tests of the Faina format readers (CoNLL, TSV) make alike, on a drawn file.

``drawn`` is ``(text, records, num_views)`` from ``fuzz.faina_files``; ``read(data)`` gives ``(corpus, error)``
(``fuzz.support.outcome``); ``assert_lossless(corpus, text)`` is the format's own rule for an accepted file.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from fuzz.support import MUST_FAIL, spoiled_bytes

SPOILINGS_PER_FILE = 4  # several spoilings of each drawn file: drawing the file is the costly part


def check_round_trip(read: Callable, format_text: Callable, drawn) -> None:
    """A valid file reads to exactly the drawn records and is written back byte for byte."""
    text, records, num_views = drawn
    corpus, err = read(text.encode("utf-8"))
    assert err is None, err
    assert list(corpus.items) == records and corpus.num_views == num_views
    assert format_text(corpus).encode("utf-8") == text.encode("utf-8")


def check_spoiled_bytes(read: Callable, data: st.DataObject, drawn, assert_lossless: Callable) -> None:
    """Bytes that cannot be a Faina file end in one ``UserError``; a BOM changes nothing; a spoiled file that is
    still valid reads without losing a line."""
    text, records, _ = drawn
    for _ in range(SPOILINGS_PER_FILE):
        kind, spoiled = data.draw(spoiled_bytes(text.encode("utf-8")))
        corpus, err = read(spoiled)
        if kind in MUST_FAIL:
            assert err is not None, kind
        elif kind == "bom":
            assert err is None and list(corpus.items) == records
        elif corpus is not None:
            assert_lossless(corpus, spoiled.decode("utf-8"))


def check_structural(read: Callable, data: st.DataObject, drawn, spoil, assert_lossless: Callable) -> None:
    """``spoil(drawn)`` draws ``(expect, text)``: ``error`` must fail, ``same`` must read the drawn records, and
    anything else may read (then without losing a line)."""
    records = drawn[1]
    for _ in range(SPOILINGS_PER_FILE):
        expect, spoiled = data.draw(spoil(drawn))
        corpus, err = read(spoiled.encode("utf-8"))
        if expect == "error":
            assert err is not None, spoiled
        elif expect == "same":
            assert err is None, err
            assert list(corpus.items) == records
        elif corpus is not None:
            assert_lossless(corpus, spoiled)

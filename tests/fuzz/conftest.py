"""The fuzz suite's profiles and its summary: how many inputs each reader was given in this run.

Profiles (``tests/fuzz/support.py``): ``fuzz`` (default, thousands of inputs per reader in about a minute)
and ``slow`` (ten times more), chosen with ``FALLACY_FUZZ_PROFILE=slow``. Both are derandomized and keep
no example database, so every run tries the same inputs. The summary is printed by pytest's terminal
reporter, so it shows without ``-s``.
"""

from __future__ import annotations

from fuzz.support import COUNTS, active_profile


def pytest_terminal_summary(terminalreporter):
    if not COUNTS:
        return
    terminalreporter.section(f"fuzzed readers (profile {active_profile()}): inputs tried")
    for reader, count in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{reader:<40} {count:>8}")
    terminalreporter.write_line(f"{'total':<40} {sum(COUNTS.values()):>8}")

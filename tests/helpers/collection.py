"""``pytest --collect-only -q`` of this repository in a child process: what the tier and count tests read."""

from __future__ import annotations

import os
import subprocess
import sys

from tests_paths import REPO


def collect_only(*options: str, **env: str) -> str:
    """The collection's stdout (test ids, then ``KEPT/ALL tests collected``), run as a contributor would: without
    the tier variables of this session and without pytest's cache; ``env`` adds variables (``PYTHONHASHSEED``)."""
    variables = {k: v for k, v in os.environ.items() if k not in ("FALLACY_TEST_TIERS", "PYTEST_ADDOPTS")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *options],
        cwd=REPO,
        env={**variables, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout

"""The code style is checked, not hoped for: ``ruff check`` (lint) and ``ruff format --check`` pass on the tree.

Both read their settings from ``pyproject.toml`` (line length 120). To fix what they report:
``ruff check --fix . && ruff format .``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests_paths import REPO


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_passes(command):
    done = subprocess.run([sys.executable, "-m", "ruff", *command], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]

"""Paths tests share (importable because pytest puts tests/ on the path, see pyproject.toml)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SHARED = REPO.parent / "shared"

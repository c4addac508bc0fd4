"""The layers of design.md, checked on the source: common/ knows no task, metrics/ knows no model code."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {"common": {"faina", "missci", "models", "metrics"}, "metrics": {"models", "missci"}}


def imported_packages(path: Path) -> set[str]:
    """Top-level packages a module imports, at module level or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer):
    offending = {str(path.relative_to(REPO)): sorted(imported_packages(path) & FORBIDDEN[layer])
                 for path in sorted((REPO / layer).rglob("*.py"))}
    assert {path: names for path, names in offending.items() if names} == {}

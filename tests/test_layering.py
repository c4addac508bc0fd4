"""The layers of docs/design.md, checked on the source, every import counted (module level or inside a function).

From the floor up: ``common`` (knows no task) < ``metrics`` (records, no model code) and ``models`` (tensors and
label ids, no file formats) < ``faina`` and ``missci`` (datasets; never each other) < ``fallacy`` (the umbrella
command) and the entry points. No module may reach a layer above its own, and the import graph between the
project's modules has no cycle, a function-local import included (such an import only hides a cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("common", "metrics", "models", "faina", "missci", "fallacy")
FORBIDDEN = {
    "common": {"faina", "missci", "models", "metrics", "fallacy"},
    "metrics": {"faina", "missci", "models", "fallacy"},
    "models": {"faina", "missci", "metrics", "fallacy"},
    "faina": {"missci", "fallacy"},
    "missci": {"faina", "fallacy"},
    "fallacy": set(),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in PACKAGES
        if (REPO / package).is_dir()
        for path in sorted((REPO / package).rglob("*.py"))
    }


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """Project modules a file imports (``from pkg import mod`` counts as ``pkg.mod`` when that is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in known}
    return {name for name in found if name in known}


def import_graph() -> dict[str, set[str]]:
    modules = source_modules()
    known = set(modules)
    return {name: imported_modules(path, known) - {name} for name, path in modules.items()}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer):
    offending = {}
    for name, imports in import_graph().items():
        if name.split(".")[0] == layer:
            above = sorted(i for i in imports if i.split(".")[0] in FORBIDDEN[layer])
            if above:
                offending[name] = above
    assert offending == {}


# The rooms inside faina/ (docs/design.md#layers), from the floor up: each imports only rooms below it. The package
# itself (``faina``: the label file's folder) is the floor; the python -m faina.<tool> commands sit on top of all.
FAINA_ROOMS = ("formats", "data", "scoring", "analysis", "serving", "zero_shot", "training", "benchmarks")
FAINA_BESIDE = {"zero_shot": {"serving", "training"}, "training": {"zero_shot"}}  # rooms that never meet


def faina_room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "faina" or len(parts) == 1:
        return None
    return parts[1] if parts[1] in FAINA_ROOMS else "commands"


@pytest.mark.parametrize("room", FAINA_ROOMS)
def test_a_faina_room_imports_no_room_above_it(room):
    """E.g. serving (what a trained model is and how it predicts) never reaches into training; nothing imports the
    command modules."""
    above = {*FAINA_ROOMS[FAINA_ROOMS.index(room) + 1 :], "commands"} | FAINA_BESIDE.get(room, set())
    offending = {}
    for name, imports in import_graph().items():
        if faina_room(name) == room:
            reached = sorted(i for i in imports if faina_room(i) in above)
            if reached:
                offending[name] = reached
    assert offending == {}


def test_the_faina_rooms_are_every_subpackage():
    rooms = {path.parent.name for path in (REPO / "faina").glob("*/__init__.py")}
    assert rooms == set(FAINA_ROOMS)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    graph = {name: {i for i in imports if not name.startswith(i + ".")} for name, imports in import_graph().items()}
    assert cycles(graph) == []


def test_cycle_finder_finds_a_hidden_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_package_is_checked():
    top_level = {path.parent.name for path in REPO.glob("*/__init__.py")}
    assert top_level <= set(PACKAGES), f"add {sorted(top_level - set(PACKAGES))} to the layers of this test"

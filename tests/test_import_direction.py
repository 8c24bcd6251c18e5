"""Imports run one way: the subgoal language at the bottom, the harness at the top.

``subgoals`` (the grammar and the number words) imports nothing of the project, so the envs,
the memory and the policies can all read and write subgoal text without importing each other;
the memory never imports the policies (nor the simulator, see ``test_memory_isolation``); the
envs import neither the policies nor the memory; and no module of the project sits on an
import cycle, counting imports made inside functions, which only hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("subgoals", "envs", "memory", "policies", "wrappers", "experiments")
ALLOWED = {
    "subgoals": {"subgoals"},
    "memory": {"memory", "subgoals"},
    "envs": {"envs", "subgoals"},
    "policies": {"policies", "subgoals", "envs"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Project modules imported anywhere in ``path`` (top level or inside a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in found if m.split(".")[0] in PACKAGES}


MODULES = {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}
GRAPH = {name: {m for m in _imports(path) if m in MODULES and m != name} for name, path in MODULES.items()}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_sits_below_it(package):
    bad = sorted(
        f"{name} -> {dep}"
        for name, deps in GRAPH.items() if name.split(".")[0] == package
        for dep in deps if dep.split(".")[0] not in ALLOWED[package]
    )
    assert not bad, f"{package} may import only {sorted(ALLOWED[package])}: {bad}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` re-exporting its own modules is not a cycle of meaning."""
    return {v: {w for w in deps if not (w in MODULES and MODULES[w].name == "__init__.py" and v.startswith(w + "."))}
            for v, deps in graph.items()}


def test_no_module_sits_on_an_import_cycle():
    cycles = _cycles(_without_package_inits(GRAPH))
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_itself_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]

"""Imports run one way: the subgoal language at the bottom, the harness at the top.

``subgoals`` (the grammar and the number words) imports nothing of the project, so the envs,
the memory and the policies can all read and write subgoal text without importing each other;
the memory never imports the policies (nor the simulator, see ``test_memory_isolation``); the
envs import neither the policies nor the memory; and no module of the project sits on an
import cycle, counting imports made inside functions, which only hide a cycle.

Inside ``experiments`` and ``memory`` the packages are layered too (``LAYERS``): a package imports
only the ones listed below it, so the folders show the architecture. ``experiments``: audit
instruments < the run loop < reporting < the commands (``experiments/<command>.py``). ``memory``:
the harness contract < the store < the language front end < perception < the robot's own signals
< events < access and control < tools < ``memory.layer`` (our memory) and the examples.
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


LAYERS: dict[str, tuple[str, ...]] = {
    "experiments": ("audit", "loop", "reporting"),
    "memory": ("contract", "store", "language", "perception", "robot", "events", "control", "tools"),
}
"""Per package, its sub-packages from the bottom up; any other module of it sits above them all."""


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


def _layer(module: str) -> tuple[str, int] | None:
    """(package, rank) of ``module`` inside a layered package; a module outside every sub-package
    (a command, ``memory.layer``) ranks above all of them."""
    parts = module.split(".")
    if parts[0] not in LAYERS or len(parts) == 1:
        return None
    order = LAYERS[parts[0]]
    return parts[0], order.index(parts[1]) if parts[1] in order else len(order)


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for name, deps in graph.items():
        mine = _layer(name)
        for dep in deps:
            theirs = _layer(dep)
            if mine and theirs and mine[0] == theirs[0] and theirs[1] > mine[1]:
                bad.append(f"{name} -> {dep}")
    return sorted(bad)


def test_packages_inside_experiments_and_memory_import_downwards():
    bad = _layer_violations(GRAPH)
    assert not bad, f"an import upwards across {LAYERS}: {bad}"


def test_every_sub_package_is_placed_in_a_layer():
    for package, order in LAYERS.items():
        found = sorted(p.name for p in (ROOT / package).iterdir() if (p / "__init__.py").exists())
        assert set(found) <= set(order) | {"examples"}, (package, found)


def test_the_layer_check_itself_finds_an_upward_import():
    graph = {"memory.store.records": {"memory.tools.base"}, "experiments.loop.unit": {"experiments.audit.assessment"},
             "experiments.audit.assessment": {"experiments.run"}}
    assert _layer_violations(graph) == ["experiments.audit.assessment -> experiments.run", "memory.store.records -> memory.tools.base"]

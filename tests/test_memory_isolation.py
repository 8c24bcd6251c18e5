"""The memory's information boundary, checked on the source of every module under memory/.

The memory must never reach the simulator (``envs`` or the physics packages), and task
knowledge may enter only through instruction wording: no benchmark task is named in
memory code. These checks walk the syntax tree of every file, so they also cover tools
added later.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

MEMORY = Path(__file__).resolve().parents[1] / "memory"
FILES = sorted(MEMORY.rglob("*.py"))
FORBIDDEN_ROOTS = {"envs", "mani_skill", "sapien", "mplib"}
TASK_NAMES = (
    "PickXtimes SwingXtimes BinFill StopCube VideoUnmask ButtonUnmask VideoUnmaskSwap ButtonUnmaskSwap "
    "PickHighlight VideoRepick VideoPlaceButton VideoPlaceOrder MoveCube InsertPeg PatternLock RouteStick"
).split()


def _imported_modules(tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                found.append(str(node.args[0].value))
    return found


def test_memory_package_is_not_empty():
    names = {p.relative_to(MEMORY).as_posix() for p in FILES}
    assert {"layer.py", "store.py", "spec.py", "access.py", "records.py", "tools/base.py"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(MEMORY).as_posix())
def test_no_simulator_imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = [m for m in _imported_modules(tree) if m.split(".")[0] in FORBIDDEN_ROOTS]
    assert not bad, f"{path} imports {bad}: the memory may not see the simulator"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(MEMORY).as_posix())
def test_no_task_names(path: Path):
    text = path.read_text(encoding="utf-8")
    named = [name for name in TASK_NAMES if re.search(rf"\b{name}\b", text)]
    assert not named, f"{path} names tasks {named}; task knowledge must come from the instruction wording"


def test_the_check_itself_catches_imports():
    tree = ast.parse("import envs\nfrom envs.tasks import x\nimport importlib\nimportlib.import_module('envs.y')")
    assert set(_imported_modules(tree)) == {"envs", "envs.tasks", "importlib", "envs.y"}

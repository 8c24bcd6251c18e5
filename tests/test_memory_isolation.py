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
    # the test-only envs under tests/generality/, which check that the memory generalises
    " BallUnderBowl"
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
    assert {"layer.py", "store/memory_store.py", "language/spec.py", "control/access.py", "store/records.py", "tools/base.py"} <= names


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


# --------------------------------------------------------------------------- proven, in a fresh interpreter

_IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
import memory
names = [m.name for m in pkgutil.walk_packages(memory.__path__, "memory.")]
for name in names:
    importlib.import_module(name)
from memory.layer import MemoryLayer, MemoryConfig
from memory.tools.registry import default_tools
MemoryLayer(MemoryConfig(), default_tools())
roots = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"modules": names, "roots": roots}))
"""


def test_importing_all_of_memory_loads_no_simulator_module():
    """Transitive imports too (``memory -> policies.x -> envs`` would pass the syntax walk above)."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _IMPORT_EVERYTHING], cwd=root, capture_output=True, text=True,
                         timeout=120, check=True, stdin=subprocess.DEVNULL)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(seen["modules"]) >= 20  # the walk really imported the package
    leaked = sorted(set(seen["roots"]) & (FORBIDDEN_ROOTS | {"experiments", "wrappers", "torch"}))
    assert not leaked, f"importing memory loaded {leaked}"


def test_the_subprocess_check_sees_a_leak():
    """The same probe, with one simulator import added, reports it (the check can fail)."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    code = "import envs.episodes\n" + _IMPORT_EVERYTHING
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                         check=True, stdin=subprocess.DEVNULL)
    assert "envs" in json.loads(out.stdout.strip().splitlines()[-1])["roots"]


# --------------------------------------------------------------------------- run-time boundary

def _layer():
    from memory.layer import MemoryConfig, MemoryLayer
    from memory.tools.registry import default_tools

    layer = MemoryLayer(MemoryConfig(), default_tools())
    layer.reset("pick up the red cube", [])
    return layer


class _TaggedArray(__import__("numpy").ndarray):
    """An ndarray subclass that could smuggle an attribute (e.g. a segmentation) along."""


def test_only_str_and_frames_of_plain_arrays_cross():
    import numpy as np

    from memory.contract.frames import Frame

    layer = _layer()
    rgb = np.zeros((8, 8, 3), np.uint8)
    layer.observe(Frame(step=1, rgb=rgb))
    with pytest.raises(TypeError, match="must be a str"):
        layer.revise(np.str_("pick up the red cube"), Frame(step=2, rgb=rgb))
    with pytest.raises(TypeError, match="memory.contract.frames.Frame"):
        layer.observe({"step": 3, "rgb": rgb, "segmentation": rgb})
    with pytest.raises(TypeError, match="goal crossing"):
        layer.reset(b"pick up the red cube", [])

    class SimFrame(Frame):
        pass

    with pytest.raises(TypeError, match="SimFrame"):
        layer.observe(SimFrame(step=4, rgb=rgb))
    tagged = rgb.view(_TaggedArray)
    tagged.truth = "the green cube is under the left container"
    frame = Frame(step=5, rgb=tagged)
    assert type(frame.rgb) is np.ndarray and not hasattr(frame.rgb, "truth")  # stripped at the door
    layer.observe(frame)
    assert layer.revise("pick up the red cube", Frame(step=6, rgb=rgb)).text == "pick up the red cube"

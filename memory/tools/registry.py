"""The default tool set of the memory layer, one constructor per tool.

Tools that other suites add register here; the experiment harness removes groups or read kinds
per ablation (``experiments/memory_factory.py``). Every tool only sees frames, actions, the goal
and the proposed subgoal.
"""

from __future__ import annotations

from collections.abc import Callable

from memory.tools.base import Tool


def _colour_blobs() -> Tool:
    from memory.tools.colour_blobs import ColourBlobTool

    return ColourBlobTool()


def _scene_layout() -> Tool:
    from memory.tools.scene_layout import SceneLayoutTool

    return SceneLayoutTool()


def _repetition_counter() -> Tool:
    from memory.tools.repetition_counter import RepetitionCounter

    return RepetitionCounter()


TOOL_FACTORIES: dict[str, Callable[[], Tool]] = {
    "colour_blobs": _colour_blobs,
    "scene_layout": _scene_layout,
    "repetition_counter": _repetition_counter,
}


def default_tools(exclude: frozenset[str] = frozenset()) -> list[Tool]:
    """A fresh instance of every registered tool (tools keep per-episode state)."""
    return [make() for name, make in TOOL_FACTORIES.items() if name not in exclude]

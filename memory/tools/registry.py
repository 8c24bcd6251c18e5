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


def _flash_counter() -> Tool:
    from memory.tools.flash_counter import FlashCounter

    return FlashCounter()


def _deposit_counter() -> Tool:
    from memory.tools.deposit_counter import DepositCounter

    return DepositCounter()


def _pass_timer() -> Tool:
    from memory.tools.pass_timer import PassTimer

    return PassTimer()


def _cover_flow() -> Tool:
    from memory.tools.cover_tracker import OpticalFlowCue

    return OpticalFlowCue()


def _cover_binding_demo() -> Tool:
    from memory.tools.cover_binding import CoverBindingTool

    return CoverBindingTool("video")


def _cover_follow_demo() -> Tool:
    from memory.tools.cover_tracker import CoverFollowTool

    return CoverFollowTool("video")


def _cover_binding_live() -> Tool:
    from memory.tools.cover_binding import CoverBindingTool

    return CoverBindingTool("live")


def _cover_follow_live() -> Tool:
    from memory.tools.cover_tracker import CoverFollowTool

    return CoverFollowTool("live")


def _highlight_marks() -> Tool:
    from memory.tools.highlight_marks import HighlightMarkTool

    return HighlightMarkTool()


def _route_reader() -> Tool:
    from memory.tools.route_reader import RouteReader

    return RouteReader()


def _demo_handled() -> Tool:
    from memory.tools.demo_handled import DemoHandledTool

    return DemoHandledTool()


def _demo_places() -> Tool:
    from memory.tools.demo_places import DemoPlacesTool

    return DemoPlacesTool()


def _manner_reader() -> Tool:
    from memory.tools.manner_reader import MannerReader

    return MannerReader()


def _peg_reader() -> Tool:
    from memory.tools.peg_reader import PegReader

    return PegReader()


TOOL_FACTORIES: dict[str, Callable[[], Tool]] = {
    "colour_blobs": _colour_blobs,
    "scene_layout": _scene_layout,
    "repetition_counter": _repetition_counter,
    "flash_counter": _flash_counter,
    "deposit_counter": _deposit_counter,
    "pass_timer": _pass_timer,
    "cover_flow": _cover_flow,
    "cover_binding_demo": _cover_binding_demo,
    "cover_follow_demo": _cover_follow_demo,
    "cover_binding_live": _cover_binding_live,
    "cover_follow_live": _cover_follow_live,
    "route_reader": _route_reader,
    "highlight_marks": _highlight_marks,
    "demo_handled": _demo_handled,
    "demo_places": _demo_places,
    "manner_reader": _manner_reader,
    "peg_reader": _peg_reader,
}


def default_tools(exclude: frozenset[str] = frozenset(), perception=None) -> list[Tool]:
    """A fresh instance of every registered tool (tools keep per-episode state), each handed
    ``perception`` (:class:`memory.perception.Perception`; ``None``: the colour default)."""
    tools = [make() for name, make in TOOL_FACTORIES.items() if name not in exclude]
    if perception is not None:
        for tool in tools:
            tool.use_perception(perception)
    return tools

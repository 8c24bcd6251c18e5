"""Tools are switched on by typed needs: each declares what it serves, the layer enables from the
specification alone, and no tool reads the goal's wording."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from envs import ALL_TASKS
from memory.contract.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer
from memory.language.needs import Need, needs_of
from memory.language.spec import specify
from memory.store.memory_store import MemoryStore
from memory.tools.base import Tool
from memory.tools.registry import default_tools
from tests.goal_cases import goal_cases, rewordings_of

# what each task's template enables (besides the scene tools every episode runs)
EXPECTED: dict[str, set[str]] = {
    "BinFill": {"deposit_counter"},
    "PickXtimes": {"repetition_counter"},
    "SwingXtimes": {"repetition_counter", "flash_counter"},
    "StopCube": {"pass_timer"},
    "VideoUnmask": {"cover_binding_demo", "cover_binding_live", "cover_follow_demo", "cover_follow_live", "cover_flow"},
    "PickHighlight": {"highlight_marks"},
    "VideoPlaceButton": {"demo_places"},
    "VideoPlaceOrder": {"demo_places"},
    "MoveCube": {"manner_reader"},
    "InsertPeg": {"peg_reader"},
    "PatternLock": {"route_reader"},
    "RouteStick": {"route_reader"},
}
SCENE_TOOLS = {"colour_blobs", "scene_layout"}


def enabled(goal: str) -> set[str]:
    spec = specify(goal)
    return {t.name for t in default_tools() if t.enabled_by(spec)}


def test_every_tool_declares_the_needs_it_serves():
    for tool in default_tools():
        name = tool.name
        assert tool.serves and all(isinstance(n, Need) for n in tool.serves), name


def test_no_tool_reads_the_goal_text():
    for tool in default_tools():
        name = tool.name
        source = inspect.getsource(inspect.getmodule(tool))
        assert not re.search(r"\bspec\.goal\b", source), f"{name} reads the goal text"


@pytest.mark.parametrize("case", goal_cases(range(0, 20, 3)), ids=lambda c: f"{c.task}-{c.episode}")
def test_rewordings_enable_the_templates_tools(case):
    want = enabled(case.template)
    if case.task in EXPECTED:
        assert want - SCENE_TOOLS == EXPECTED[case.task] or case.task == "VideoRepick", (case.task, want)
    for text in rewordings_of(case, "dev") + rewordings_of(case, "held_out"):
        assert enabled(text) == want, (case.task, text)


def test_video_repick_enables_the_handled_object_and_its_count():
    assert enabled("watch the video, then pick up the block that was picked up in it twice, then press the button to stop") \
        == SCENE_TOOLS | {"demo_handled", "repetition_counter"}


def test_needs_come_from_typed_fields_only():
    """Two goals with the same typed fields but no shared words get the same needs."""
    a = specify("pick up the green cube, move it to the top of the right-side target, then move it to the top of the "
                "left-side target, repeating this back-and-forth motion two times, finally press the button to stop")
    b = specify("grab the green block and shuttle it between the left-side disc and the right-side disc twice, then hit the stop button")
    assert needs_of(a) == needs_of(b) and Need.ROUND_TRIP_COUNT in needs_of(a)


class _Counting(Tool):
    name = "counting"
    serves = frozenset({Need.REPETITION_COUNT})

    def __init__(self):
        self.frames = 0

    def observe(self, frame, store):
        self.frames += 1


def test_layer_feeds_only_the_tools_the_spec_enables():
    tool = _Counting()
    layer = MemoryLayer(MemoryConfig(), [tool])
    frame = Frame(step=0, rgb=np.zeros((8, 8, 3), np.uint8))
    layer.reset("pick up the red cube and put it in the bin, then press the button", [])
    layer.observe(frame)
    assert tool.frames == 0 and not tool.active and layer.diagnostics()["enabled_tools"] == []
    layer.reset("pick up the red cube and set it on the target three times, then press the button to stop", [])
    layer.observe(Frame(step=1, rgb=np.zeros((8, 8, 3), np.uint8)))
    assert tool.frames == 1 and tool.active and "repetition_count" in layer.diagnostics()["needs"]
    assert MemoryStore  # the store is the layer's; tools get it through reset/observe only


def test_all_tasks_covered():
    assert set(EXPECTED) <= set(ALL_TASKS)

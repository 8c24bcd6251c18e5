"""Bring your own memory: the interface (memory/contract/interface.py), the example memory, and its run
through the real harness with the same audit as ours."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.loop.conditions import condition_from_name, condition_sort_key
from memory.examples.last_seen import LastSeenMemory
from memory.contract.frames import Frame
from memory.contract.interface import Memory, check_memory, load_memory_class
from memory.layer import MemoryConfig, MemoryLayer
from memory.store.memory_store import EditOp, Snapshot
from memory.tools.registry import default_tools

EXAMPLE = "memory.examples.last_seen:LastSeenMemory"


def test_our_layer_and_the_example_are_memories():
    assert isinstance(MemoryLayer(MemoryConfig(), default_tools()), Memory)
    assert isinstance(check_memory(LastSeenMemory()), LastSeenMemory)
    assert load_memory_class(EXAMPLE) is LastSeenMemory


@pytest.mark.parametrize("path, message", [
    ("last_seen", "must be written 'package.module:Class'"),
    ("no.such.module:Thing", "cannot import module 'no.such.module'"),
    ("memory.examples.last_seen:Nope", "has no class 'Nope'"),
    ("memory.contract.frames:Frame", "lacks reset, observe, revise, snapshot, diagnostics"),
])
def test_bad_memory_paths_are_named(path, message):
    with pytest.raises(ValueError, match=message):
        condition_from_name(f"memory:{path}")


def test_check_memory_names_what_is_missing():
    class Half:
        def reset(self, goal, demo): ...
        def observe(self, frame): ...

    with pytest.raises(TypeError, match="lacks revise, snapshot, diagnostics"):
        check_memory(Half())


def test_custom_condition_name_round_trips_and_sorts_after_ours():
    c = condition_from_name(f"memory:{EXAMPLE}")
    assert c.memory and c.custom == EXAMPLE and c.name == f"memory:{EXAMPLE}"
    names = sorted([f"memory:{EXAMPLE}", "memory", "no-memory", "oracle", "memory-no-count"], key=condition_sort_key)
    assert names == ["oracle", "no-memory", "memory", f"memory:{EXAMPLE}", "memory-no-count"]


def _frame(step, green_at=None, source="live"):
    rgb = np.full((256, 256, 3), 120, np.uint8)
    if green_at is not None:
        y, x = green_at
        rgb[y - 4:y + 5, x - 4:x + 5] = (20, 200, 40)
    return Frame(step=step, rgb=rgb, source=source)


def test_example_recalls_a_colour_out_of_view_with_an_edit_history():
    m = LastSeenMemory()
    m.reset("pick up the container hiding the green cube", [_frame(1, (50, 60), "video"), _frame(2, (52, 64), "video")])
    m.observe(_frame(5))  # the cube is covered now: nothing of it in view
    rev = m.revise("pick up the container hiding the green cube at <200, 10>", _frame(6))
    assert rev.rewritten and rev.read and rev.text.endswith("<52, 64>")
    # in view: nothing to recall, the proposal passes unchanged
    seen = m.revise("pick up the green cube at <200, 10>", _frame(7, (100, 100)))
    assert not seen.rewritten and seen.text == "pick up the green cube at <200, 10>"
    # the audit's view: typed records replayed to any step, with their edit history
    early, late = Snapshot.from_dict(m.snapshot(1)), Snapshot.from_dict(m.snapshot(6))
    assert early.records["last_seen/green"].position == (50, 60) and late.records["last_seen/green"].position == (52, 64)
    assert [e.op for e in m.store.history("last_seen/green")] == [EditOp.ADD, EditOp.UPDATE]
    assert m.diagnostics()["reads"] == 1


def test_example_abstains_on_a_colour_never_seen():
    m = LastSeenMemory()
    m.reset("pick up the red cube", [])
    rev = m.revise("pick up the red cube at <10, 10>", _frame(3))
    assert not rev.rewritten and rev.abstained


def test_example_runs_through_the_harness_with_the_audit(tmp_path):
    from experiments.loop.config import ExperimentConfig
    from experiments.loop.records import WorkUnit
    from experiments.loop.unit import run_unit

    cfg = ExperimentConfig.from_flat(tasks=("VideoUnmask",), wandb="disabled", out=str(tmp_path))
    row = run_unit(WorkUnit("VideoUnmask", "train", 0, f"memory:{EXAMPLE}", 7), cfg)
    assert row.status in ("success", "fail", "timeout") and row.error is None
    memory = row.memory
    assert memory["colours"] and set(memory["colours"]) <= set(row.goal.split())  # the goal's colours
    assessment = memory["assessment"]["by_kind"]
    assert assessment["binding"]["asked"] > 0  # the audit asked its questions of this memory's snapshots
    # the same decision audit as ours: every decision right, corrected, wrong, abstained or silent
    h = row.history_audit
    assert h["decisions"] > 0 and h["right"] + h["wrong"] + h["abstained"] + h["silent_wrong"] == h["decisions"]

"""Counts completed repetitions of a pick-and-place and gates "repeat or stop" on that count.

The instruction says how many times ("repeating this action three times") and which object
("the green cube"); nothing in the scene records how many times it has been done. The evidence
for one completed repetition is a *release* in the executed actions (the gripper command going
from closed to open) followed, within a few rendered frames, by the watched object resting on a
target disc from the scene layout, after it had been seen away from every target since the last
counted repetition. Only then is the count incremented (an UPDATE of the progress record); a
release without that sight (a dropped cube, or a re-grasp that never lifted it off the target)
is rejected.

The gate (read kind ``count_gate``): when the proposal is to stop ("press the button") while the
verified count is below the goal's, it is rewritten into the next pick of the watched object,
re-grounded on its blob in the current view; when the proposal is another pick although the count
is reached, it is rewritten into pressing the button at its layout position. A rewrite is
latched while the proposal and the verified count stay the same, so the executed subgoal (and
its point) does not flicker from one query to the next.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.control.count_gate import CountGate
from memory.events import GRIPPER_LIVE, events_for
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.store.records import ProgressRecord
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import find_blobs
from memory.tools.scene_layout import layout_points
from memory.language.words import colour_of
from subgoals import phrases
from subgoals.edits import Replace, SubgoalEdit
from subgoals.actions import Action, action_of
from subgoals.grammar import try_parse
from subgoals.record_names import RecordName
from memory.tools.groups import ToolGroup

KEY = "progress/repetitions"


@dataclass(frozen=True)
class RepetitionThresholds:
    """The numbers :class:`RepetitionCounter` verifies a repetition with (frames fed to the tool, pixels in the 256x256 frame)."""

    verify_within: int = 12
    """Frames after a gripper release within which the object must be seen resting on a target, or the release is not counted."""
    on_target_px: float = 9.0
    """The object's blob this close to a target is on it (farther than this plus 6 px: away, so the next arrival counts)."""


@register_tool(order=30)
class RepetitionCounter(Tool):
    name = "repetition_counter"
    # a release is verified by the object resting on a target within the next rendered frames
    render = RenderNeed(stride=4, video=False)
    serves = frozenset({Need.REPETITION_COUNT})
    group = ToolGroup.PROGRESS
    gate_kind = ReadKind.COUNT_GATE

    def __init__(self, verify_within: int = 12, on_target_px: float = 9.0):
        self.config = RepetitionThresholds(verify_within=verify_within, on_target_px=on_target_px)

    def thresholds(self) -> tuple:
        return (self.config, GRIPPER_LIVE)

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        self.target = spec.repetitions if self.active else None
        self.phrase = spec.watch[0] if spec.watch else None
        self.colour = colour_of(self.phrase.split()) if self.phrase else None
        self._pending: int | None = None  # frames left to verify a release
        self.counter = CountGate(self.target or 0)
        if self.target:
            events_for(store).attach(GRIPPER_LIVE)
        self.rejected = 0
        self._last_rgb = None
        self._left_target = True  # the object starts wherever it was put, not on a counted place
        self._latched: tuple | None = None
        if self.target:
            store.add(KEY, ProgressRecord(name=RecordName.REPETITIONS, count=0, target=self.target), step=store.last_step or 0,
                      reason=f"goal asks for {self.target} repetitions")

    def _where(self, rgb, store) -> str:
        """'on' a target, 'away' from every target, or 'unseen' (occluded, or no target known)."""
        targets = layout_points(store, "target")
        if not targets or self.colour is None:
            return "unseen"
        blobs = find_blobs(rgb, [self.colour], min_area=8)
        if not blobs:
            return "unseen"
        d = min(min(b.distance(t) for t in targets) for b in blobs)
        if d <= self.config.on_target_px:
            return "on"
        return "away" if d > self.config.on_target_px + 6 else "unseen"

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.target or frame.source != "live":
            return
        if frame.rgb is not None:
            self._last_rgb = frame.rgb
        if any(e.kind == "release" for e in events_for(store).events(frame, GRIPPER_LIVE)):
            self._pending = self.config.verify_within
        if frame.rgb is None:
            return
        where = self._where(frame.rgb, store)
        if where == "away":
            self._left_target = True
        if self._pending is None:
            return
        if where == "on" and self._left_target:
            self._left_target = False
            self.counter.add()
            self._pending = None
            self.commit(store, KEY, ProgressRecord(name=RecordName.REPETITIONS, count=self.count, target=self.target),
                        step=frame.step, reason="release seen and the object rests on the target", accepted=True)
            return
        self._pending -= 1
        if self._pending <= 0:
            self._pending = None
            self.rejected += 1

    @property
    def count(self) -> int:
        """Repetitions verified so far (the count gate's count)."""
        return self.counter.count

    def _object_point(self) -> tuple[int, int] | None:
        if self._last_rgb is None or self.colour is None:
            return None
        blobs = find_blobs(self._last_rgb, [self.colour], min_area=8)
        return None if not blobs else (blobs[0].point.y, blobs[0].point.x)

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.target or self.phrase is None:
            return None
        return self.latched((proposed, self.count), lambda: self._decide(proposed, store))[0]

    def _decide(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        sg = try_parse(proposed)
        if sg is None:
            return None
        action = action_of(sg)
        verdict = self.counter.verdict(stops=action is Action.PRESS, continues=action is Action.PICK)
        nxt = self.counter.next_ordinal()
        if verdict == "continue":
            if not layout_points(store, "target"):
                return None  # no target disc to have counted places on: no evidence either way
            p = self._object_point()
            if p is None:
                return None
            return Replace(phrases.pick(self.phrase, p, time=nxt))
        if verdict == "stop":
            buttons = layout_points(store, "button")
            if not buttons:
                return None
            return Replace(phrases.press(buttons[0], purpose="stop"))
        return None

    def diagnostics(self) -> dict:
        return {"count": self.count, "target": self.target, "rejected_releases": self.rejected}

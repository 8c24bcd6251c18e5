"""Reads *how* a demonstrated object was brought to its target, and gates the first live step on it.

Goals such as "move the cube to the target in the same manner as before" name a procedure that no
frame of the live scene shows: three ways of moving the cube look identical once it is done (push it
with a tool, push it with the closed fingers, or pick it up and put it down), and the live scene is
a fresh configuration. The evidence is in the conditioning video and in the robot's own joint
states:

* the tool (a pale, low-saturation bar) **moved before the cube moved**: its pixels appear away from
  where the bar lay in the first frame (occlusion by the arm only removes pixels; displacement adds
  new ones elsewhere);
* the tool-centre point's height, from the joint states by forward kinematics of the arm (a Franka
  Panda, whose kinematic parameters are public robot facts, not scene knowledge): how far it
  travelled **low over the table** (a push) and whether the cube's blob moved while the hand was
  **high** (a carry, i.e. the cube was lifted);
* the cube's blob ends up displaced from its first position and rests there (the demonstration was
  completed).

A manner becomes ``verified`` only when these cues agree (a tool push: tool moved first *and* low
travel; a finger push: tool still, low travel, no carry; a grasp: tool still, a carry, no low
travel) and the cube was seen resting displaced; then one
:class:`~memory.store.records.TrajectoryRecord` ``"demonstrated procedure"`` is written whose segments are
the procedure's steps. Anything else stays a candidate in the tool's diagnostics and the gate
abstains. For a tool push the reader also notes which end of the bar the hand closed on ("near" =
the end nearer the robot, at the top of the image, or "far"): the hand's point when it first went
down to the table, projected into the image with the fixed front camera's calibration
(:data:`FRONT_CAMERA`), lies on one half of the bar's first-frame pixels.

Which object is moved and which is the tool are the roles of the episode's
:class:`~memory.language.state_kinds.DemonstratedManner` (the word table's: an object role, and a role
listed in ``TOOL_ROLES``), so the steps and sentences name whatever the goal names; the pixel
readers do not follow them: the moved object is the largest red blob and the tool a pale warm bar,
the looks of the benchmark's cube and peg.

The gate (read kind ``procedure_reference``): a proposal that starts a different procedure than the
verified one ("pick up the cube at ..." when the video pushed it, ...) is rewritten into the first
step of the demonstrated procedure, with every object it names found in the latest live frame from
pixels (bar end, cube and target blobs). The rewrite is latched per proposal so the executed
subgoal does not flicker while the arm moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from memory.robot.arm_view import FRONT_CAMERA, panda_tcp, to_pixel
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.language.state_kinds import DemonstratedManner, state_kinds_of
from memory.store.records import Source, TrajectoryRecord
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import find_blobs, hsv
from memory.language.words import DEFAULT_OBJECT_ROLE, OBJECT_ROLES, ROLE_SYNONYMS, TOOL_ROLES
from subgoals import phrases
from subgoals.actions import Action, action_of
from subgoals.edits import Abstain, Replace, SubgoalEdit
from subgoals.grammar import try_parse
from subgoals.record_names import RecordName
from memory.tools.groups import ToolGroup

__all__ = [
    "FRONT_CAMERA",
    "manner_steps",
    "MannerReader",
    "MannerThresholds",
    "bar_ends",
    "bar_mask",
    "panda_tcp",
    "purple_point",
    "to_pixel",
]

KEY = "trajectory/procedure"

# robot kinematics and the front camera's calibration live in memory.robot.arm_view (re-exported here)


# ------------------------------------------------------------------ pixel predicates
def bar_mask(rgb: np.ndarray, min_area: int = 15, table_gap_deg: float = 5.0) -> np.ndarray:
    """Pixels of a warm bar, pale or saturated, in components >= ``min_area``.

    Pale: hue <= 35 deg, saturation 0.2-0.5, bright (the table is the same hue but saturated, about
    0.6; saturated red cubes are above 0.7; the robot is grey, below 0.1). Saturated (0.5-0.7, the
    official envs' salmon peg): only where the hue is at least ``table_gap_deg`` from the table's own,
    read from this frame (the median hue of its saturated warm pixels: the table fills most of it).
    """
    h, s, v = hsv(rgb)
    warm = ((h < 35) | (h > 345)) & (v > 120)
    pale = warm & (s > 0.2) & (s < 0.5)
    mid = warm & (s >= 0.5) & (s < 0.7)
    if mid.any():
        table_hue = float(np.median(h[mid]))
        gap = np.abs(((h - table_hue) + 180.0) % 360.0 - 180.0)
        m = pale | (mid & (gap >= table_gap_deg))
    else:
        m = pale
    lab, n = ndimage.label(m)
    if n == 0:
        return m
    areas = ndimage.sum(m, lab, index=np.arange(1, n + 1))
    keep = np.zeros(n + 1, bool)
    keep[1:] = areas >= min_area
    return keep[lab]


def bar_ends(mask: np.ndarray) -> dict[str, tuple[int, int]] | None:
    """Centres ``(y, x)`` of the two halves of the largest bar blob, keyed ``near`` (upper, toward the
    robot) and ``far``; ``None`` without a bar."""
    lab, n = ndimage.label(mask)
    if n == 0:
        return None
    areas = ndimage.sum(mask, lab, index=np.arange(1, n + 1))
    ys, xs = np.nonzero(lab == int(np.argmax(areas)) + 1)
    if len(ys) < 15:
        return None
    pts = np.stack([ys, xs], 1).astype(float)
    c = pts.mean(0)
    _, _, vt = np.linalg.svd(pts - c, full_matrices=False)
    t = (pts - c) @ vt[0]
    a, b = pts[t < 0].mean(0), pts[t >= 0].mean(0)
    near, far = (a, b) if a[0] <= b[0] else (b, a)
    return {"near": (int(round(near[0])), int(round(near[1]))), "far": (int(round(far[0])), int(round(far[1])))}


def purple_point(rgb: np.ndarray, min_area: int = 8) -> tuple[int, int] | None:
    """Centre ``(y, x)`` of the largest purple region (a target disc), or ``None``."""
    h, s, v = hsv(rgb)
    m = (h > 265) & (h < 305) & (s > 0.3) & (v > 80)
    lab, n = ndimage.label(m)
    if n == 0:
        return None
    areas = ndimage.sum(m, lab, index=np.arange(1, n + 1))
    k = int(np.argmax(areas))
    if areas[k] < min_area:
        return None
    ys, xs = np.nonzero(lab == k + 1)
    return int(round(ys.mean())), int(round(xs.mean()))


def _red_blob(rgb: np.ndarray):
    blobs = find_blobs(rgb, ["red"], min_area=6)
    return max(blobs, key=lambda b: b.area) if blobs else None


# ------------------------------------------------------------------ procedures
def manner_steps(moved: str, tool: str | None) -> dict[str, tuple[str, ...]]:
    """The steps of each manner of bringing an object of role ``moved`` to the target, a tool push
    holding an object of role ``tool`` (both from the episode's
    :class:`~memory.language.state_kinds.DemonstratedManner`: ``cube`` and ``peg``)."""
    return {
        "tool_push": (f"pick up the {tool}", f"hook the {moved} to the target with the {tool}"),
        "finger_push": (f"close the gripper and push the {moved} to the target",),
        "grasp_place": (f"pick up the {moved}", f"place the {moved} onto the target"),
    }


def proposal_manner(text: str) -> tuple[str, bool] | None:
    """(manner a proposal belongs to, whether it is that manner's first step), or ``None``, from the
    typed subgoal, whatever its wording: taking hold of a tool (an object role the word table lists
    in ``TOOL_ROLES``) starts a tool push and pushing something *with* one continues it; pushing
    without a tool is a finger push (its only step); taking hold of another object (the moved one)
    starts a grasp-and-place and placing it ends one."""
    sg = try_parse(text)
    if sg is None:
        return None
    act = action_of(sg)
    roles = [ROLE_SYNONYMS.get(np_.head.lower()) for np_ in sg.noun_phrases]
    first = roles[0] if roles else None
    moved = first in OBJECT_ROLES and first not in TOOL_ROLES
    if act == Action.PICK:
        if first in TOOL_ROLES:
            return "tool_push", True
        return ("grasp_place", True) if moved else None
    if act == Action.PUSH:
        return ("tool_push", False) if any(r in TOOL_ROLES for r in roles[1:]) else ("finger_push", True)
    if act == Action.PLACE and moved:
        return "grasp_place", False
    return None


@dataclass(frozen=True)
class MannerThresholds:
    """The numbers :class:`MannerReader` reads a demonstrated manner with (heights from the joint
    states by forward kinematics, pixels in the 256x256 video frame)."""

    low_z: float = 0.04
    """Hand "low over the table" (m): below it, horizontal travel counts toward a push."""
    high_z: float = 0.06
    """Hand clearly lifted (m): cube-blob motion above it counts toward a carry."""
    push_travel: float = 0.05
    """Horizontal travel low over the table that makes a push (m)."""
    moved_px: float = 8.0
    """The cube blob displaced this far from its first position: it started moving (px)."""
    rested_px: float = 5.0
    """The cube rests this far from its first position (>= 3 cm on the table) (px)."""
    carry_px: float = 4.0
    """Cumulative cube-blob motion while the hand is high that makes a carry (px)."""
    no_travel: float = 0.02
    """Below this low travel the cube cannot have been pushed (m)."""
    bar_new_px: int = 25
    """Bar pixels away from the first-frame bar that make it moved (occlusion only removes pixels)."""


@register_tool(order=160)
class MannerReader(Tool):
    """Demonstrated manner of moving an object (tool push / finger push / grasp and place)."""

    name = "manner_reader"
    render = RenderNeed(stride=4, video=True, video_stride=2)  # the manner read the same (once better) at video stride 2 and 4 on train 0-3 (benchmarks/video_stride_train.md); thresholds counted in frames were measured at this stride
    serves = frozenset({Need.DEMO_MANNER})
    group = ToolGroup.MANNER
    gate_kind = ReadKind.PROCEDURE_REFERENCE

    def __init__(self, config: MannerThresholds | None = None) -> None:
        self.config = config or MannerThresholds()

    def thresholds(self) -> tuple[MannerThresholds]:
        return (self.config,)

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        # the moved object and the tool are the episode's DemonstratedManner's roles (word table)
        state = next((s for s in state_kinds_of(spec) if isinstance(s, DemonstratedManner)), None)
        self.moved = DEFAULT_OBJECT_ROLE if state is None else state.role
        self.tool = None if state is None or not state.tools else state.tools[0]
        self._bar0: np.ndarray | None = None
        self._bar0_far: np.ndarray | None = None
        self._bar0_ends: dict | None = None
        self._cube0: tuple[float, float] | None = None
        self._cube0_area = 0
        self._prev_cube: tuple[float, float] | None = None
        self._prev_tcp: np.ndarray | None = None
        self.low_travel = 0.0
        self.carry_px = 0.0
        self.low_cube_px = 0.0
        self.bar_moved_step: int | None = None
        self.cube_moved_step: int | None = None
        self.grasped_end: str | None = None
        self._rest: list[tuple[float, float]] = []
        self.candidate: str | None = None
        self.manner: str | None = None  # verified
        self.why = "no demonstration seen"
        self._demo_done = False
        self._live_rgb: np.ndarray | None = None
        self._latched: tuple | None = None
        self.rewrites = 0
        self.abstained = 0

    # ---------------------------------------------------------------- demonstration
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active:
            return
        if frame.source == "live":
            if not self._demo_done:
                self._finish_demo(store, frame.step)
            if frame.rgb is not None:
                self._live_rgb = frame.rgb
            return
        if frame.rgb is None:
            return
        rgb = frame.rgb
        tcp = None if frame.joint_state is None or len(frame.joint_state) < 7 else panda_tcp(frame.joint_state)
        bar = bar_mask(rgb)
        red = _red_blob(rgb)
        if self._bar0 is None:
            if bar.sum() < 15 or red is None:
                return
            self._bar0 = bar
            self._bar0_far = ~ndimage.binary_dilation(bar, iterations=6)
            self._bar0_ends = bar_ends(bar)
            self._cube0, self._cube0_area = (red.y, red.x), red.area
            self._prev_tcp = tcp
            return
        # the bar: new pixels away from its first place
        if self.bar_moved_step is None and int((bar & self._bar0_far).sum()) >= self.config.bar_new_px:
            self.bar_moved_step = frame.step
        # which end the hand covered when it first went down (before the bar moved)
        if (tcp is not None and self.grasped_end is None and self.bar_moved_step is None and tcp[2] < self.config.low_z
                and self._bar0_ends is not None):
            self.grasped_end = self._grasped_end(tcp)
        # the cube
        if red is not None and self._cube0 is not None:
            here = (red.y, red.x)
            if self.cube_moved_step is None and np.hypot(here[0] - self._cube0[0], here[1] - self._cube0[1]) > self.config.moved_px:
                self.cube_moved_step = frame.step
            whole = red.area >= 0.7 * self._cube0_area
            if self._prev_cube is not None and whole and tcp is not None:
                d = float(np.hypot(here[0] - self._prev_cube[0], here[1] - self._prev_cube[1]))
                if tcp[2] > self.config.high_z:
                    self.carry_px += d
                elif tcp[2] < self.config.low_z:
                    self.low_cube_px += d
            self._prev_cube = here if whole else None
            self._rest.append(here)
            self._rest = self._rest[-6:]
        else:
            self._prev_cube = None
        # the hand
        if tcp is not None and self._prev_tcp is not None and tcp[2] < self.config.low_z and self._prev_tcp[2] < self.config.low_z:
            self.low_travel += float(np.hypot(*(tcp[:2] - self._prev_tcp[:2])))
        if tcp is not None:
            self._prev_tcp = tcp

    def _grasped_end(self, tcp: np.ndarray) -> str | None:
        """The end of the first-frame bar under the hand (the hand's point projected into the image)."""
        assert self._bar0_ends is not None
        gy, gx = to_pixel(tcp)
        d = {k: float(np.hypot(gy - p[0], gx - p[1])) for k, p in self._bar0_ends.items()}
        end = min(d, key=d.get)
        return end if d[end] <= 8.0 else None

    def _finish_demo(self, store: MemoryStore, step: int) -> None:
        self._demo_done = True
        rested = (
            self._cube0 is not None and len(self._rest) >= 3
            and all(np.hypot(p[0] - self._rest[-1][0], p[1] - self._rest[-1][1]) < 3 for p in self._rest[-3:])
            and np.hypot(self._rest[-1][0] - self._cube0[0], self._rest[-1][1] - self._cube0[1]) > self.config.rested_px
        )
        bar_first = self.bar_moved_step is not None and (self.cube_moved_step is None or self.bar_moved_step <= self.cube_moved_step)
        pushed = self.low_travel >= self.config.push_travel
        # a carry: the cube's blob moved while the hand was high, or it was displaced although the hand
        # never travelled low over the table
        carried = self.carry_px >= self.config.carry_px or self.low_travel < self.config.no_travel
        if bar_first and pushed:
            self.candidate = "tool_push"
        elif self.bar_moved_step is None and pushed and not carried:
            self.candidate = "finger_push"
        elif self.bar_moved_step is None and carried and not pushed:
            self.candidate = "grasp_place"
        else:
            self.candidate = None
        if self.candidate is None:
            self.why = "cues disagree"
            return
        if not rested:
            self.why = f"the {self.moved} was not seen resting displaced"
            return
        if self.candidate == "tool_push" and self.tool is None:
            self.why = "a tool push, but the word table names no tool"
            return
        self.manner = self.candidate
        self.why = "verified"
        segments = manner_steps(self.moved, self.tool)[self.manner]
        if self.manner == "tool_push" and self.grasped_end is not None:
            segments = (f"pick up the {self.tool} by its {self.grasped_end} end",) + segments[1:]
        self.commit(
            store, KEY, TrajectoryRecord(name=RecordName.DEMONSTRATED_PROCEDURE, segments=segments, index=0, source=Source.DEMONSTRATION),
            step=step, accepted=True,
            reason=(f"{self.manner}: bar moved first={bar_first}, low travel {self.low_travel:.3f} m, "
                    f"carry {self.carry_px:.1f} px, {self.moved} rested displaced"),
        )

    # ---------------------------------------------------------------- gate
    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active:
            return None
        return self.latched((proposed,), lambda: self._decide(proposed, store))[0]

    def _decide(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        got = proposal_manner(proposed)
        if got is None or not got[1]:
            return None
        rec = store.get(KEY)
        if rec is None or self._live_rgb is None:
            self.abstained += 1
            return Abstain("no demonstrated manner read" if rec is None else "no current view")
        manner = self._manner_of(rec)
        if manner is None or manner == got[0]:
            return None
        out = self._first_step(manner, self._live_rgb)
        if out is None:
            self.abstained += 1
            return Abstain(f"the {manner} start is not visible in the current view")
        self.rewrites += 1
        return Replace(out)

    @staticmethod
    def _manner_of(rec: TrajectoryRecord) -> str | None:
        first = rec.segments[0] if rec.segments else ""
        got = proposal_manner(first)
        return None if got is None else got[0]

    def _first_step(self, manner: str, rgb: np.ndarray) -> str | None:
        """The first subgoal of ``manner`` in the current view (a subgoal-language sentence)."""
        red = _red_blob(rgb)
        if manner == "tool_push":
            ends = bar_ends(bar_mask(rgb))
            if ends is None:
                return None
            return phrases.pick(self.tool, ends[self.grasped_end or "near"])
        if red is None:
            return None
        if manner == "grasp_place":
            return phrases.pick(self.moved, red.point)
        goal = purple_point(rgb)
        if goal is None:
            return None
        return phrases.push_to(red.point, goal)

    def diagnostics(self) -> dict:
        return {
            "manner": self.manner, "candidate": self.candidate, "why": self.why,
            "bar_moved_step": self.bar_moved_step, "cube_moved_step": self.cube_moved_step,
            "low_travel_m": round(self.low_travel, 4), "carry_px": round(self.carry_px, 2),
            "low_cube_px": round(self.low_cube_px, 2), "grasped_end": self.grasped_end,
            "rewrites": self.rewrites, "abstained": self.abstained,
        }

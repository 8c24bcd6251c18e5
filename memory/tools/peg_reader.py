"""Which of several look-alike bars the demonstration grasped, by which end, and from which side it
inserted it; gates the pick and the insertion side on that reading.

Goals such as "grasp the same end of the same peg you've picked before and insert it into the same
side of the box" refer to three choices the live scene cannot show: the bars look alike (the same two
end colours on each, any colour, grey included), and after the hidden reset every bar is back where
it started. The evidence is in the conditioning video and the arm's joint states:

1. **Where the hand closed.** The tool-centre point (forward kinematics of the arm from the joint
   states) at the lowest point of its first descent to the table, projected into the image with the
   fixed front camera's calibration (:data:`~memory.tools.manner_reader.FRONT_CAMERA`).
2. **Which bar, seen leaving.** From the moment the hand is up again until the box flashes, the
   pixels of the first frame that stay changed in (nearly) every frame around that point are the
   place the grasped bar left (the arm only passes over the other bars, so their pixels change for a
   few frames only). The grasp point must lie on that footprint.
3. **Which end.** The footprint's half (along its long axis) that holds the grasp point: "near"
   (upper in the image, nearer the robot) or "far".
4. **Accepted insertion, and the side.** The box flashes (a large saturated red region appears; in a
   scene without red in its first frame, a small red mark appearing is enough: the official envs');
   during the last 4 cm the hand moved before that, it went along the hole: toward -y (arm base
   frame) means it came from the +y side ("left"), toward +y from "right".

The reading becomes one :class:`~memory.store.records.EntityRecord` (binding ``"peg end grasped in the
demonstration"``, position = the grasp point, status ``verified``) and one
:class:`~memory.store.records.TrajectoryRecord` ``"demonstrated insertion"`` (``"grasp the <near|far>
end"``, ``"insert from the <left|right> side"``) only when all of it was seen. Otherwise nothing is
written and the gate abstains.

Which object is grasped is the role of the episode's
:class:`~memory.language.state_kinds.DemonstratedGrasp` (an object the word table gives parts),
so proposals are matched and sentences written with that role; the record names stay the audit's
contract (:mod:`subgoals.record_names`), and the pixel readers follow the benchmark's bars.

The gate (read kind ``demo_reference``): a pick of a bar is rewritten to the grasped end of the
demonstrated bar, after checking in the latest live frame that the bar is back at its first-frame
place (its footprint's pixels match the video's first frame again); an insertion from the other side
is rewritten to the demonstrated side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from memory.events import DescentConfig, events_for
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.language.state_kinds import DemonstratedGrasp, state_kinds_of
from memory.store.records import EntityRecord, EntityStatus, Source, TrajectoryRecord
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import find_blobs
from subgoals import phrases
from subgoals.edits import Abstain, Replace, SetPoint, SubgoalEdit
from subgoals.grammar import Point, Subgoal, try_parse
from subgoals.record_names import RecordName
from memory.tools.groups import ToolGroup
from memory.robot.arm_view import FRONT_CAMERA, panda_tcp, to_pixel  # noqa: F401 (re-exported)

__all__ = ["FRONT_CAMERA", "PegReader", "PegThresholds", "to_pixel"]  # the camera helpers live in manner_reader

ENTITY_KEY = "demo/grasped end"  # the grasped end of the demonstrated object (record: RecordName.PEG_END_GRASPED)
TRAJ_KEY = "trajectory/insertion"
BINDING = RecordName.PEG_END_GRASPED
TRAJ_NAME = RecordName.DEMONSTRATED_INSERTION



def _heads(sg: Subgoal, role: str) -> bool:
    """Whether the proposal's first noun phrase is headed by the role's own noun (the subgoal
    language's canonical noun; proposals say "the peg")."""
    return bool(sg.noun_phrases) and sg.noun_phrases[0].head.lower() == role


def _peg_pick(sg: Subgoal | None, role: str) -> Point | None:
    """Where a proposal picking up the object of ``role`` (the peg) grasps it: the first point of its
    noun phrases, on the peg ("pick up the peg at <y, x> by its far end") or on the end it names
    ("pick up the peg by grasping the far end at <y, x>", the official wording); None for any other proposal."""
    if sg is None or sg.verb.lower() != "pick up" or not _heads(sg, role):
        return None
    return next((np_.point for np_ in sg.noun_phrases if np_.point is not None), None)


def _insert_side(sg: Subgoal | None, role: str) -> str | None:
    """The side a proposal "insert the peg ... <left|right> side" inserts from (the object of
    ``role``), or None."""
    if sg is None or sg.verb.lower() != "insert" or not _heads(sg, role):
        return None
    sides = [w.lower() for np_ in sg.noun_phrases if np_.head.lower() == "side"
             for w in np_.modifiers if w.lower() in ("left", "right")]
    return sides[-1] if sides else None


def _halves(region: np.ndarray) -> dict[str, np.ndarray]:
    """Centres ``(y, x)`` of the two halves of a bar region along its long axis: ``near`` (upper,
    toward the robot) and ``far``."""
    ys, xs = np.nonzero(region)
    pts = np.stack([ys, xs], 1).astype(float)
    c = pts.mean(0)
    _, _, vt = np.linalg.svd(pts - c, full_matrices=False)
    t = (pts - c) @ vt[0]
    a, b = pts[t < 0].mean(0), pts[t >= 0].mean(0)
    return {"near": a, "far": b} if a[0] <= b[0] else {"near": b, "far": a}


@dataclass(frozen=True)
class PegThresholds:
    """The numbers :class:`PegReader` reads the demonstrated bar, end and side with (heights from the
    joint states by forward kinematics, pixels in the 256x256 video frame)."""

    low_z: float = 0.03
    """The hand at the table (m): the first descent below it is the grasp."""
    up_z: float = 0.09
    """The hand lifted (m): from then on the grasped bar's footprint is gathered."""
    changed: float = 60.0
    """Summed |RGB| change that makes a pixel changed."""
    kept: float = 0.9
    """Share of lifted frames a footprint pixel stays changed in (the arm passes over the other bars
    for a few frames only)."""
    window: int = 14
    """Half-size of the search window around the grasp point (px)."""
    same: float = 30.0
    """Mean summed |RGB| difference under which a live bar is "back in place"."""
    flash_px: int = 250
    """A red region this large is the box flashing (a bar's red end is under 120 px)."""
    mark_px: int = 30
    """In a scene with no red in its first frame, a red region this large appearing is the box's
    acceptance mark (the official envs light a small red dot on the box face, 45-75 px, instead of
    flashing the whole box)."""


@register_tool(order=170)
class PegReader(Tool):
    """The demonstrated bar, its grasped end and the insertion side; gates pick and side."""

    name = "peg_reader"
    render = RenderNeed(stride=4, video=True, video_stride=2)  # the grasped end and side the same at video stride 2 on train 0-3, lost at 4 (benchmarks/video_stride_train.md); thresholds counted in frames were measured at this stride
    serves = frozenset({Need.DEMO_GRASP})
    group = ToolGroup.PEG_END_SIDE
    gate_kind = ReadKind.DEMO_REFERENCE

    def __init__(self, config: PegThresholds | None = None) -> None:
        self.config = config or PegThresholds()
        # the first descent is the grasp (its lowest point)
        self.descent_config = DescentConfig(low_z=self.config.low_z, up_z=self.config.up_z)

    def thresholds(self) -> tuple[PegThresholds, DescentConfig]:
        return (self.config, self.descent_config)

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        # the grasped object's role is the episode's DemonstratedGrasp's (the word table's object with parts)
        state = next((s for s in state_kinds_of(spec) if isinstance(s, DemonstratedGrasp)), None)
        self.role: str | None = None if state is None else state.role
        self._rgb0: np.ndarray | None = None
        self._descent = events_for(store).attach(self.descent_config) if self.active else None
        self._lifted = False
        self._kept: np.ndarray | None = None
        self._up_frames = 0
        self._tcp: list[tuple[int, np.ndarray]] = []
        self._flash_step: int | None = None
        self._signal_px = self.config.flash_px
        self._done = False
        self.grasp_px: tuple[int, int] | None = None
        self.end: str | None = None  # near | far
        self.side: str | None = None
        self.footprint: np.ndarray | None = None
        self.why = "no demonstration seen"
        self._live_rgb: np.ndarray | None = None
        self._latched: tuple | None = None
        self.rewrites = 0
        self.abstained = 0
        self.counts: dict = {}

    # ---------------------------------------------------------------- demonstration
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active:
            return
        if frame.source == "live":
            if not self._done:
                self._finish(store, frame.step)
            if frame.rgb is not None:
                self._live_rgb = frame.rgb
            return
        if frame.rgb is None or frame.joint_state is None or len(frame.joint_state) < 7:
            return
        rgb = frame.rgb
        tcp = panda_tcp(frame.joint_state)
        descents = events_for(store).events(frame, self.descent_config)  # the first frame is the home pose, high
        if self._rgb0 is None:
            self._rgb0 = rgb
            self._kept = np.zeros(rgb.shape[:2], int)
            # with red already in the scene (a bar's red end), only a whole-box flash is the signal
            self._signal_px = self.config.flash_px if find_blobs(rgb, ["red"], min_area=10) else self.config.mark_px
            return
        self._tcp.append((frame.step, tcp))
        if not self._lifted:
            self._lifted = bool(descents)  # the hand up again after its first descent: the grasp is over
            return
        if self._flash_step is not None:
            return
        if find_blobs(rgb, ["red"], min_area=self._signal_px):
            self._flash_step = frame.step
            return
        if tcp[2] > self.config.up_z:
            self._up_frames += 1
            self._kept += np.abs(rgb.astype(int) - self._rgb0.astype(int)).sum(2) > self.config.changed

    def _finish(self, store: MemoryStore, step: int) -> None:
        self._done = True
        if not self._lifted or self._up_frames < 5 or self._kept is None:
            self.why = "no grasp-and-lift seen in the video"
            return
        gy, gx = self._descent.done[0].point
        self.grasp_px = (int(round(gy)), int(round(gx)))
        # the bar's first-frame place: pixels that stayed changed after the lift, around the grasp point
        kept = self._kept >= self.config.kept * self._up_frames
        win = np.zeros_like(kept)
        y0, x0 = self.grasp_px
        w = self.config.window
        win[max(0, y0 - w):y0 + w + 1, max(0, x0 - w):x0 + w + 1] = True
        lab, n = ndimage.label(kept & win)
        if n == 0:
            self.why = "no bar left its place under the grasp"
            return
        ys, xs = np.nonzero(lab)
        d = np.hypot(ys - gy, xs - gx)
        region = lab == lab[ys[int(np.argmin(d))], xs[int(np.argmin(d))]]
        area = int(region.sum())
        self.counts = {"footprint_px": area, "grasp_gap_px": round(float(d.min()), 1), "lifted_frames": self._up_frames}
        if area < 8 or d.min() > 4:
            self.why = "the bar under the grasp was not seen leaving"
            return
        self.footprint = region
        halves = _halves(region)
        self.end = min(halves, key=lambda k: float(np.hypot(*(halves[k] - (gy, gx)))))
        if self._flash_step is None:
            self.why = "no accepted insertion (flash) seen"
            return
        before = [(s, p) for s, p in self._tcp if s <= self._flash_step]
        last = before[-1][1]
        start = next((p for s, p in reversed(before) if np.hypot(*(p[:2] - last[:2])) >= 0.04), None)
        if start is None:
            self.why = "no push into the box seen"
            return
        dy, dx = last[1] - start[1], last[0] - start[0]
        if abs(dy) < abs(dx):
            self.why = "the push did not run along y"
            return
        self.side = "left" if dy < 0 else "right"
        self.why = "verified"
        self.commit(store, ENTITY_KEY, EntityRecord(identity=f"{self.role} end", role=self.role, position=self.grasp_px, binding=BINDING,
                                                    status=EntityStatus.VERIFIED, source=Source.DEMONSTRATION),
                    step=step, accepted=True,
                    reason=f"grasped at {self.grasp_px}; a {area}-px bar left that place; its {self.end} end")
        self.commit(store, TRAJ_KEY, TrajectoryRecord(name=TRAJ_NAME, segments=(f"grasp the {self.end} end", f"insert from the {self.side} side"),
                                                      index=0, source=Source.DEMONSTRATION),
                    step=step, accepted=True, reason=f"push along y by {dy:+.3f} m, then the box flashed")

    # ---------------------------------------------------------------- gate
    def _back_in_place(self, rgb: np.ndarray) -> bool:
        """The demonstrated bar is where the video first showed it (the reset put it back)."""
        if self.footprint is None or self._rgb0 is None:
            return False
        diff = np.abs(rgb.astype(int) - self._rgb0.astype(int)).sum(2)[self.footprint]
        return float(diff.mean()) < self.config.same

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active:
            return None
        return self.latched((proposed,), lambda: self._decide(proposed, store))[0]

    def _decide(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        sg = try_parse(proposed)
        pick, ins = _peg_pick(sg, self.role), _insert_side(sg, self.role)
        if pick is None and ins is None:
            return None
        ent, traj = store.get(ENTITY_KEY), store.get(TRAJ_KEY)
        if ent is None or traj is None or not ent.readable or ent.position is None:
            self.abstained += 1
            return Abstain(f"no readable demonstrated {self.role} grasp")
        if ins is not None:
            side = traj.segments[1].split()[3]
            if ins == side:
                return None
            self.rewrites += 1
            return Replace(phrases.insert_from_side(side, noun=self.role))
        if self._live_rgb is None or not self._back_in_place(self._live_rgb):
            self.abstained += 1
            return Abstain(f"the {self.role} is not back where the demonstration grasped it")
        y, x = ent.position
        end = traj.segments[0].split()[2]
        py, px = pick.as_tuple()
        if np.hypot(py - y, px - x) <= 2 and f"the {end} end" in proposed:
            return None
        self.rewrites += 1
        sentence = phrases.pick(self.role, (y, x), by_end=end)
        moved = SetPoint(0, (y, x))
        if moved.applies_to(proposed) and moved.apply(proposed) == sentence:
            return moved  # only the point was wrong: a slot edit of the proposal
        return Replace(sentence)

    def diagnostics(self) -> dict:
        return {"grasp_px": self.grasp_px, "end": self.end, "side": self.side, "why": self.why,
                "rewrites": self.rewrites, "abstained": self.abstained, **self.counts}

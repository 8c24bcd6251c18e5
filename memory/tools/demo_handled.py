"""Which object the demonstration handled, followed through the swaps: "the same block", "the correct cube".

Goals such as "pick up the same block that was previously picked up" point at the object the
video picked up. After the video put it back and (possibly) shuffled it with its look-alikes,
the current view cannot tell which one it was. This tool reads the video:

1. **Slots.** The resting cubes of the first video frames (saturated colour blobs, seen at the
   same place on ``confirm_frames`` frames) are the slots.
2. **Handled.** From the first frame on which some slot's cube is disturbed (not seen whole, i.e.
   with at least ``whole_share`` of its area, within ``present_px`` of its slot) until the scene is
   at rest again (every cube whole and still for ``rest_frames`` frames), each slot counts its
   disturbed frames and follows its cube by mean-shift on its colour (a window smaller than a
   cube). A cube the gripper carries off drags the window more than ``rise_px`` from its slot; a
   neighbour the arm merely hides on its way vanishes but does not move. The slot dragged farthest
   is the handled one; if none was dragged that far (the gripper hid the whole lift), the slot
   disturbed longest is. Where its cube rests now is where the video set it down.
3. **Kinematics first.** When the video frames carry the arm's joint angles, the grasp itself says
   which cube was taken: the tool-centre point (forward kinematics) sinks to cube height over it,
   and projected through the fixed front camera's calibration it lands on that cube's slot. This
   beats the pixel evidence in crowded scenes (fifteen cubes; the arm hides a neighbour for longer
   than the lift shows the handled one) and is used whenever the colour under the grasp is known (a
   slot within ``2 * grasp_px`` of the first low point, or a blob within ``grasp_px`` of where the
   cube now rests). Where the hand went down a second time is where it set the cube down: the
   record starts there, not at a blob's centroid (look-alikes touching it render as one blob). It is
   decided as soon as the hand has set the cube down, not at the next rest: the video may shuffle
   it right after, and a look-alike it was set down against keeps the scene from ever looking at
   rest. The pixel evidence above is the fallback for joint-less videos.
4. **Following.** From then on the cube is followed frame by frame (nearest blob of its colour
   within ``follow_px``), so a swap that moves it (two cubes exchanging places along two lanes)
   carries the record with it.

Which kind of object it is comes from the episode's state (a
:class:`~memory.language.state_kinds.DemonstratedObject` and its role from the word table), not from
this module: the pixel readers below follow colour blobs of any object (their sizes were measured on
cubes). At the first live frame the answer becomes an entity record ``"<colour> <role>"`` with the
binding ``reference_binding(role)`` (``"reference cube"`` for cubes, status ``verified``) that
structured access reads for "the correct cube".
Live, the tool keeps the record's place current (the robot puts the cube back a little off; a
grasp that missed can push it further: its place goes bare and a blob of its colour stands where
none rested) and counts the picks of that cube: a grip that held something apart and rose from the
cube's place, counted when it rose (the hand's own finger and joint readings,
:mod:`memory.events.lift`); where the frames carry no finger readings, its blob leaving its place
in the closed grip, then a release. Its gate turns "press the button" into the next pick while the
goal's count is not reached, and a further pick into the press once it is; a pick counted at its
lift whose cube is still in the hand is the pick under way, so the gate decides on the picks
finished before it (the next ordinal would be a new subgoal, and the executor would let go).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.control.count_gate import CountGate
from memory.events import GRIPPER_LIVE, LIFT_LIVE, DescentConfig, DescentDetector, events_for
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.language.state_kinds import DemonstratedObject, state_kinds_of
from memory.store.records import EntityRecord, EntityStatus, ProgressRecord, Source
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import Blob, bare_table, colour_mask, find_blobs
from memory.tools.cover_binding import local_centre
from memory.tools.scene_layout import layout_points
from memory.language.words import COLOUR_WORDS
from subgoals.record_names import reference_binding, reference_picks
from subgoals import phrases
from subgoals.edits import Replace, SubgoalEdit
from subgoals.actions import Action, action_of
from subgoals.grammar import Point, try_parse
from memory.tools.groups import ToolGroup

__all__ = ["DemoHandledTool", "HandledThresholds", "key_for"]



def key_for(role: str) -> str:
    """The store key of the demonstrated object of ``role`` (``"demo/reference cube"``)."""
    return f"demo/{reference_binding(role)}"

COUNT_KEY = "progress/repicks"


@dataclass
class _Slot:
    colour: str
    pos: tuple[float, float]
    seen: int = 1
    area: int = 0
    track: tuple[float, float] | None = None
    disturbed: int = 0
    rise: float = 0.0  # largest shift of the mean-shift track from the slot
    ms: tuple[float, float] | None = None


@dataclass(frozen=True)
class HandledThresholds:
    """The numbers :class:`DemoHandledTool` reads and follows the handled cube with (rendered frames, pixels in the 256x256 frame, heights in m); the module docstring says where each enters."""

    confirm_frames: int = 3
    """A resting cube of the first video frames seen at the same place on this many frames is a slot."""
    present_px: float = 4.0
    """A cube seen whole within this of its slot is present there (undisturbed); live, within this of the record it is still on its place."""
    rest_frames: int = 8
    """Every cube whole and still for this many frames: the scene is at rest again, the handling is over."""
    follow_px: float = 8.0
    """A cube is followed to the nearest blob of its colour within this (px) per frame, so a swap carries the record with it."""
    window_px: float = 5.0
    """Radius (px) of the mean-shift window a slot follows its cube with: smaller than a cube, so a hidden neighbour does not drag it."""
    settle_px: float = 12.0
    """Live, with the hand open, a blob within this of the record is the cube where it rests (the robot puts it back a little off)."""
    whole_share: float = 0.75
    """A blob with at least this share of the slot cube's area is the cube seen whole."""
    rise_px: float = 6.0
    """A slot whose window was dragged farther than this from it was carried off (a neighbour the arm merely hides does not move)."""
    reground_px: float = 18.0
    """How far (px) from the record a blob of its colour may be to re-ground it."""
    min_area: int = 20
    """Smallest colour blob (px) taken as a cube."""
    max_area: int = 900
    """Largest colour blob (px) taken as a cube (larger: several touching, or not a cube)."""
    grasp_z: float = 0.045
    """The hand at cube height (m): its stays there in the video are the grasp and the put-down."""
    took_px: float = 8.0
    """Live, a lift whose lowest point (the hand's pixel under the closing fingers) lies within this of the
    cube's place took that cube (2-6 px off on train; a touching neighbour's centre is a cube's width, 10 px or more, away)."""
    push_px: float = 40.0
    """Live, a cube pushed off its place (its place bare) is looked for this far (px); a missed grasp pushed one 22 px on train."""
    grasp_px: float = 6.0
    """The colour under the grasp is known from a slot within twice this of the first low point, or a blob within this of where the cube now rests (px)."""


@register_tool(order=140)
class DemoHandledTool(Tool):
    """The cube the video picked up, followed through the swaps; live pick count and stop gate."""

    name = "demo_handled"
    group = ToolGroup.DEMONSTRATION
    gate_kind = ReadKind.DEMO_REFERENCE
    serves = frozenset({Need.DEMO_HANDLED})
    render = RenderNeed(stride=4, video=True, video_stride=2)  # handled cubes the same at video stride 2 and 4 on train 0-3 (benchmarks/video_stride_train.md); thresholds counted in frames were measured at this stride

    def __init__(self, *, confirm_frames: int = 3, present_px: float = 4.0, rest_frames: int = 8, follow_px: float = 8.0,
                 window_px: float = 5.0, settle_px: float = 12.0, whole_share: float = 0.75, rise_px: float = 6.0,
                 reground_px: float = 18.0, min_area: int = 20, max_area: int = 900, grasp_z: float = 0.045,
                 grasp_px: float = 6.0, took_px: float = 8.0) -> None:
        self.config = HandledThresholds(
            confirm_frames=confirm_frames, present_px=present_px, rest_frames=rest_frames, follow_px=follow_px,
            window_px=window_px, settle_px=settle_px, whole_share=whole_share, rise_px=rise_px,
            reground_px=reground_px, min_area=min_area, max_area=max_area, grasp_z=grasp_z, grasp_px=grasp_px,
            took_px=took_px,
        )
        self.active = False
        self._reset_state()

    def thresholds(self) -> tuple:
        return (self.config, self.descent_config, GRIPPER_LIVE, LIFT_LIVE)

    def _reset_state(self) -> None:
        self.role: str | None = None  # the demonstrated object's role (the episode's DemonstratedObject)
        self.slots: list[_Slot] = []
        self._slots_fixed = False
        self.handled: int | None = None
        self.colour: str | None = None
        self.pos: tuple[float, float] | None = None
        self._vel = (0.0, 0.0)
        self._phase = "slots"  # slots -> follow -> live
        self._episode = False
        self._still = 0
        self._video_frames = 0
        self.target: int = 1
        self.picks = CountGate(self.target)
        self._gripper = None
        self._away = 0
        self._lifted = False
        self._lift = None
        self._took: tuple[float, float] | None = None  # where the hand lifted something this grip
        self._in_hand = False  # the pick counted at this grip's lift is still in the hand (not yet let go)
        self._last_rgb: np.ndarray | None = None
        self._others: list[tuple[float, float]] | None = None  # look-alikes' places when the cube was last seen resting
        self._latched: tuple | None = None
        self._events: list[str] = []
        # the tool-centre point's first stay at cube height in the video: (lowest z, its pixel)
        self._grasp: tuple[float, tuple[float, float]] | None = None
        self._grasp_done = False
        self._release: tuple[float, tuple[float, float]] | None = None
        self._release_done = False
        self._descent: DescentDetector | None = None
        self._first_q: np.ndarray | None = None
        self._arm_moved = False

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self._reset_state()
        self.active = self.enabled_by(spec)
        state = next((s for s in state_kinds_of(spec) if isinstance(s, DemonstratedObject)), None)
        self.role = None if state is None else state.role
        # "pick up the same block ... three times"; without a count the goal asks for one pick
        self.target = spec.repetitions or 1
        self.picks = CountGate(self.target)
        if self.active:
            hub = events_for(store)
            self._gripper = hub.attach(GRIPPER_LIVE)
            self._lift = hub.attach(LIFT_LIVE)
            self._descent = hub.attach(self.descent_config)

    @property
    def descent_config(self) -> DescentConfig:
        """The hand's stays at cube height in the video: the first is the grasp, the second the put-down."""
        return DescentConfig(low_z=self.config.grasp_z, up_z=self.config.grasp_z, min_drop=1e-4)

    @property
    def count(self) -> int:
        """Picks of the reference cube verified so far (the count gate's count)."""
        return self.picks.count

    def _blobs(self, rgb: np.ndarray, colours=COLOUR_WORDS) -> list[Blob]:
        return [b for b in find_blobs(rgb, colours, min_area=self.config.min_area, max_area=self.config.max_area) if b.y > 20]

    # ------------------------------------------------------------------ frames
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active:
            return
        if frame.source == "live":
            if self._phase != "live":
                self._finish(frame, store)
            self._live(frame, store)
            return
        if frame.rgb is None:
            return
        self._video_frames += 1
        self._watch_grasp(frame, store)
        if self._phase == "slots" and self._slots_fixed and self._release_done and self._decide_by_grasp(frame.step, frame.rgb):
            return  # the hand has set it down and the joint angles named it: followed from the next frame on
        if self._phase == "slots":
            self._watch_slots(frame)
        elif self._phase == "follow":
            self._follow(frame.rgb)

    def _watch_slots(self, frame: Frame) -> None:
        blobs = self._blobs(frame.rgb)
        if not self._slots_fixed:
            for b in blobs:
                s = next((s for s in self.slots if s.colour == b.colour and b.distance(s.pos) <= self.config.present_px), None)
                if s is None:
                    self.slots.append(_Slot(b.colour, (b.y, b.x), area=b.area))
                else:
                    s.seen += 1
                    s.area = max(s.area, b.area)
            if self.slots and all(s.seen >= self.config.confirm_frames for s in self.slots if s.seen > 0):
                self.slots = [s for s in self.slots if s.seen >= self.config.confirm_frames]
                self._slots_fixed = bool(self.slots)
            return
        disturbed_now = False
        still = True
        masks = {c: colour_mask(frame.rgb, c) for c in {s.colour for s in self.slots}}
        for s in self.slots:
            mine = [b for b in blobs if b.colour == s.colour and b.distance(s.track or s.pos) <= self.config.follow_px]
            b = min(mine, key=lambda b: b.distance(s.track or s.pos)) if mine else None
            whole = b is not None and b.area >= self.config.whole_share * s.area
            if not whole or b.distance(s.pos) > self.config.present_px:
                disturbed_now = True
                if self._episode:
                    s.disturbed += 1
            if b is None or not whole or (s.track is not None and b.distance(s.track) > 1.0):
                still = False
            s.track = (b.y, b.x) if b is not None and whole else s.track
            if self._episode or disturbed_now:
                # follow each cube by mean-shift on its colour (a window smaller than a cube): a cube
                # carried off by the gripper drags the window with it; one the arm merely hides does not move
                start = s.ms or s.pos
                found = local_centre(masks[s.colour], start, radius=self.config.window_px, iters=8, min_pixels=12)
                if found is not None and np.hypot(found[0][0] - start[0], found[0][1] - start[1]) <= self.config.follow_px:
                    s.ms = found[0]
                    s.rise = max(s.rise, float(np.hypot(s.ms[0] - s.pos[0], s.ms[1] - s.pos[1])))
        if disturbed_now and not self._episode:
            self._episode = True
            for s in self.slots:
                s.disturbed += 0
        if not self._episode:
            return
        self._still = self._still + 1 if still else 0
        if self._still < self.config.rest_frames or not any(s.disturbed for s in self.slots):
            return
        if self._arm_moved and not self._grasp_done:
            # the joint angles say the arm is at work but no grasp has ended yet: it only passed by
            # (hiding a cube for a few frames); the handled cube is decided at the first rest after the grasp
            return
        # the scene is at rest again after the first disturbance (the pick and the put-down): the
        # cube kept away from its place (lifted, carried, set down) the longest is the handled one;
        # a neighbour the arm merely hid on its way is away for a few frames only
        self._decide_handled(frame.step, frame.rgb)

    def _watch_grasp(self, frame: Frame, store: MemoryStore) -> None:
        """The tool-centre point's first two stays below ``grasp_z``: the grasp, then the put-down.
        Each keeps the pixel of its lowest point (the cube's centre under the closing fingers);
        the stays are the shared descent detector's (:mod:`memory.events.descent`)."""
        if self._release_done or frame.joint_state is None or len(frame.joint_state) < 7:
            return
        q = np.asarray(frame.joint_state, float)[:7]
        if self._first_q is None:
            self._first_q = q
        self._arm_moved = self._arm_moved or float(np.abs(q - self._first_q).max()) > 1e-3
        events_for(store).events(frame, self.descent_config)
        d = self._descent
        self._grasp, self._release = d.nth(0), d.nth(1)
        self._grasp_done, self._release_done = len(d.done) >= 1, len(d.done) >= 2

    def _grasped_slot(self, radius: float | None = None) -> int | None:
        if self._grasp is None or not self.slots:
            return None
        gy, gx = self._grasp[1]
        d = [np.hypot(s.pos[0] - gy, s.pos[1] - gx) for s in self.slots]
        i = int(np.argmin(d))
        return i if d[i] <= (self.config.grasp_px if radius is None else radius) else None

    def _decide_by_grasp(self, step: int, rgb: np.ndarray | None = None) -> bool:
        """The joint angles name the handled cube: the one under the grasp, now where the hand set it
        down (look-alikes touching it make one blob whose centroid lies between them; the hand's point
        does not). False where no grasp was seen or no colour is known under it."""
        if self._grasp is None:
            return False
        at = self._release[1] if self._release is not None else self._grasp[1]
        slot = self._grasped_slot(radius=2 * self.config.grasp_px)
        colour = self.slots[slot].colour if slot is not None else None
        if colour is None and rgb is not None:
            near = [b for b in self._blobs(rgb) if b.distance(at) <= self.config.grasp_px]
            colour = min(near, key=lambda b: b.distance(at)).colour if near else None
        if colour is None:
            return False
        self.handled, self.colour, self.pos = slot, colour, (float(at[0]), float(at[1]))
        self._phase = "follow"
        self._events.append(f"{step}: {colour} {self.role} grasped at {tuple(round(v) for v in self._grasp[1])} "
                            f"(by grasp); set down at {tuple(round(v) for v in self.pos)}")
        return True

    def _decide_handled(self, step: int, rgb: np.ndarray | None = None) -> None:
        if self._decide_by_grasp(step, rgb):
            return
        risen = [i for i, s in enumerate(self.slots) if s.rise >= self.config.rise_px]
        if len(risen) == 1:
            self.handled = risen[0]
        else:
            self.handled = max(risen or range(len(self.slots)), key=lambda i: (self.slots[i].rise, self.slots[i].disturbed))
        s = self.slots[self.handled]
        self.colour, self.pos = s.colour, s.track or s.pos
        self._phase = "follow"
        self._events.append(f"{step}: {s.colour} {self.role} from {tuple(round(v) for v in s.pos)} was handled "
                            f"(by pixels; away {s.disturbed} frames); at rest at {tuple(round(v) for v in self.pos)}")

    def _follow(self, rgb: np.ndarray) -> bool:
        """Mean-shift on the colour mask from the predicted place (last place + last motion), in a
        window smaller than a cube, so that a look-alike touching it (two cubes passing each other
        in a swap render as one blob) does not capture the track."""
        mask = colour_mask(rgb, self.colour)
        guess = (self.pos[0] + self._vel[0], self.pos[1] + self._vel[1])
        found = local_centre(mask, guess, radius=self.config.window_px, iters=8, min_pixels=12)
        if found is None or np.hypot(found[0][0] - self.pos[0], found[0][1] - self.pos[1]) > self.config.follow_px:
            self._vel = (0.0, 0.0)
            return False
        (y, x), _ = found
        self._vel = (0.5 * (y - self.pos[0]), 0.5 * (x - self.pos[1]))
        self.pos = (y, x)
        return True

    def _finish(self, frame: Frame, store: MemoryStore) -> None:
        ok = self._phase == "follow"
        self._phase = "live"
        if not self._video_frames:
            return
        if not ok and self._episode and any(sl.disturbed or sl.rise >= self.config.rise_px for sl in self.slots):
            # the video ended (its hidden arm reset) before the scene was seen at rest: decide from
            # the evidence gathered so far, and find the cube where it rests in the first live view
            self._decide_handled(frame.step, frame.rgb)
            self._phase = "live"
            ok = True
        if not ok:
            self._events.append(f"no answer: the handled {self.role} was not seen lifted and put down")
            return
        if frame.rgb is not None:  # the whole blob's centroid, not the tracking window's (one cube's blob only)
            near = [b for b in self._blobs(frame.rgb, [self.colour])
                    if b.distance(self.pos) <= self.config.follow_px and not self._merged(b)]
            if near:
                b = min(near, key=lambda b: b.distance(self.pos))
                self.pos = (b.y, b.x)
        point = Point(int(round(self.pos[0])), int(round(self.pos[1])))
        self.commit(store, key_for(self.role), EntityRecord(identity=f"{self.colour} {self.role}", role=self.role,
                                                            position=point.as_tuple(), binding=reference_binding(self.role),
                                                            status=EntityStatus.VERIFIED,
                                             source=Source.DEMONSTRATION),
                    step=frame.step, reason="handled in the video, at rest again, followed to the end", accepted=True)
        self.commit(store, COUNT_KEY, ProgressRecord(name=reference_picks(self.role), count=0, target=self.target), step=frame.step,
                    reason=f"goal asks for {self.target} picks", accepted=True)
        self._events.append(f"{frame.step}: correct {self.role} = {self.colour} at {point}")

    # ------------------------------------------------------------------ live
    def _live(self, frame: Frame, store: MemoryStore) -> None:
        if self.pos is None:
            return
        for e in events_for(store).events(frame, LIFT_LIVE):
            if e.kind == "lift":
                self._took = e.point
                if self._picked():  # the hand's own sensing: the pick happened when it lifted the cube
                    self._count_pick(frame, store, f"the hand lifted something from the {self.role}'s place")
                    self._in_hand = True
        if any(e.kind == "release" for e in events_for(store).events(frame, GRIPPER_LIVE)):
            if not self._lift.sensing and self._picked():  # pixels only: the cube left its place, then was let go
                self._count_pick(frame, store, f"the {self.role} left its place in a closed grip, then was released")
            self._lifted, self._away, self._took, self._in_hand = False, 0, None, False
        if frame.rgb is None:
            return
        self._last_rgb = frame.rgb
        blobs = self._blobs(frame.rgb, [self.colour])
        here = [b for b in blobs if b.distance(self.pos) <= self.config.present_px]
        if self._gripper.closed:
            # in a closed grip: is the cube still on its place? (it is not while carried)
            self._away = 0 if here else self._away + 1
            if self._away >= 2:
                self._lifted = True
            return
        # open hand: keep the record on the cube where it rests (the robot puts it back a little off)
        near = [b for b in blobs if b.distance(self.pos) <= self.config.settle_px]
        if not near:
            self._pushed(frame, blobs, store)
            return
        b = min(near, key=lambda b: b.distance(self.pos))
        self._others = [(o.y, o.x) for o in blobs if o is not b]
        if b.distance(self.pos) <= 1.0 or self._merged(b):
            return  # a look-alike touching it pulls the blob's centroid off the cube: keep the place
        self._move_record(frame, store, b, f"the {self.role} rests a little further")

    def _pushed(self, frame: Frame, blobs: list[Blob], store: MemoryStore) -> None:
        """The cube's place is bare table and no blob of its colour rests near it: a grasp that missed
        pushed it away. It is the one blob of its colour, within ``push_px``, at a place where none
        rested when the cube was last seen (its look-alikes stay where they were); two or none: the
        place stands, and the pick count waits for a lift from it."""
        if self._others is None or not bare_table(frame.rgb, self.pos):
            return
        new = [b for b in blobs if b.distance(self.pos) <= self.config.push_px and not self._merged(b)
               and all(b.distance(o) > 2 * self.config.present_px for o in self._others)]
        if len(new) == 1:
            self._events.append(f"{frame.step}: the {self.role} was pushed from "
                                f"{tuple(round(v) for v in self.pos)} to {(round(new[0].y), round(new[0].x))}")
            self._move_record(frame, store, new[0], f"the {self.role} was pushed off its place (its place is bare, "
                                                     "a blob of its colour stands where none rested)")

    def _move_record(self, frame: Frame, store: MemoryStore, b: Blob, reason: str) -> None:
        self.pos = (b.y, b.x)
        rec = store.get(key_for(self.role))
        p = (int(round(b.y)), int(round(b.x)))
        if isinstance(rec, EntityRecord) and rec.position is not None and np.hypot(p[0] - rec.position[0], p[1] - rec.position[1]) > 2:
            self.commit(store, key_for(self.role), rec.evolve(position=p), step=frame.step, reason=reason, accepted=True)

    def _count_pick(self, frame: Frame, store: MemoryStore, reason: str) -> None:
        self.picks.add()
        self.commit(store, COUNT_KEY, ProgressRecord(name=reference_picks(self.role), count=self.count, target=self.target),
                    step=frame.step, accepted=True, reason=reason)
        self._events.append(f"{frame.step}: pick {self.count} of the correct {self.role} done")

    def _picked(self) -> bool:
        """Whether the grip picked the reference cube. Where the hand logs its fingers (asked at the lift),
        its own sensing decides: something held the fingers apart and rose, taken within
        ``took_px`` of the cube's place (a grasp that closed on nothing, or on a neighbour, is no
        pick; one that lifted it is a pick even if it slips out on the way). Otherwise the pixels
        (asked at the release): the cube left its place in the closed grip."""
        if self._lift is not None and self._lift.sensing:
            return self._took is not None and bool(
                np.hypot(self._took[0] - self.pos[0], self._took[1] - self.pos[1]) <= self.config.took_px)
        return self._lifted

    def _merged(self, blob: Blob) -> bool:
        """Whether ``blob`` is more than one cube (larger than the smallest slot's cube by 40 %)."""
        return bool(self.slots) and blob.area > 1.4 * min(s.area for s in self.slots)

    def reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        if (not self.active or frame.rgb is None or entity.binding != reference_binding(self.role)
                or entity.position is None or self.colour is None):
            return None
        near = [b for b in self._blobs(frame.rgb, [self.colour]) if b.distance(entity.position) <= self.config.reground_px]
        if not near:
            # the arm or gripper in front of it (reaching for this very cube): the view cannot
            # contradict the record, so its place stands; bare table there would contradict it
            return None if bare_table(frame.rgb, entity.position) else Point(*entity.position)
        b = min(near, key=lambda b: b.distance(entity.position))
        if self._merged(b):
            # a look-alike touches it (one blob of two cubes, its centroid between them): the
            # record's own point, followed from the hand, is the better place
            return Point(*entity.position)
        return b.point

    # ------------------------------------------------------------------ gate
    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active or store.get(key_for(self.role)) is None:
            return None
        return self.latched((proposed, self.count, self._in_hand), lambda: self._decide(proposed, store))[0]

    def _decide(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        sg = try_parse(proposed)
        if sg is None:
            return None
        action = action_of(sg)
        # a pick counted when the hand lifted the cube is still under way while the hand holds it:
        # the proposals are about that pick (a "pick up" now is the same pick; asking for the next
        # ordinal would hand the executor a new subgoal and it would let go to start again), so the
        # gate decides on the picks finished before it
        settled = CountGate(self.target, self.count - int(self._in_hand))
        verdict = settled.verdict(stops=action is Action.PRESS, continues=action is Action.PICK)
        if verdict == "continue":
            rec = store.get(key_for(self.role))
            if self._last_rgb is None or not isinstance(rec, EntityRecord):
                return None
            p = self.reground(rec, Frame(step=0, rgb=self._last_rgb))
            if p is None:
                return None
            return Replace(phrases.pick(f"correct {self.role}", p, time=settled.next_ordinal()))
        if verdict == "stop":
            buttons = layout_points(store, "button")
            if not buttons:
                return None
            return Replace(phrases.press(buttons[0], purpose="finish"))
        return None

    def diagnostics(self) -> dict:
        return {
            "active": self.active,
            "video_frames": self._video_frames,
            "slots": [[s.colour, round(s.pos[0], 1), round(s.pos[1], 1)] for s in self.slots][:16],
            "handled": self.handled,
            "grasp_px": None if self._grasp is None else [round(v, 1) for v in self._grasp[1]],
            "release_px": None if self._release is None else [round(v, 1) for v in self._release[1]],
            "answer": None if self.pos is None else [round(v, 1) for v in self.pos],
            "count": self.count,
            "target": self.target,
            "picks_from": None if self._lift is None else ("hand" if self._lift.sensing else "pixels"),
            "events": self._events[:20],
        }

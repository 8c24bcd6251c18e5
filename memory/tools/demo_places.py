"""Where the demonstration put the object down, in order, and when it pressed the button.

Goals such as "place the blue cube on the second target it was previously placed on" or "... on
the target where it was last placed before the button was pressed" ask for a place that only
the conditioning video shows: at decision time the targets are identical discs and the cube
sits on bare table. This tool reads the video into an ordered list of *places* and *press*
events and answers the goal's question with one target, kept as an entity record with the
binding ``"reference target"`` that structured access reads for "the correct target".

Evidence, all from the video's frames (and the robot's joint readings that come with them, when
they include the fingers):

* **The carried object** is the watched colour's blob (the goal names it: "the blue cube"),
  followed frame to frame (nearest blob, at most ``max_jump`` px).
* **A place**, where the video logs the fingers, is a *put-down* (:mod:`memory.events.put_down`):
  the fingers, held apart by the object, opened with the hand low over the table; the place is the
  carried object's blob near the hand then (the hand's pixel if none is within ``put_px``). Where it does not, a place is a *dwell*: the object's centroid stays within ``dwell_px`` of one point for
  ``dwell_frames`` frames (with the fingers open, when the joint readings give the fingers),
  after having moved more than ``moved_px`` away from the previous dwell (the first dwell, where
  the object starts, is not a place; nor is a pause with the object held up: the tool-centre point
  from the joint angles above ``aloft_z`` and within ``hand_px`` of it). It counts as a place *on a
  target* when a known disc's centre lies within ``centre_px`` of it, or when purple disc material
  surrounds it (on ``min_sides`` of its four sides) and a disc lies within ``on_target_px`` (both
  reaches for a disc of typical size, grown with the disc's apparent size where the object stands:
  a disc near the camera renders wider); a dwell
  on bare table (where the video parks the object at the end) or in the air is not a target place.
* **A press** is the hand down at the button (found in the first frame as the largest compact gray
  blob): with joint readings, the tool-centre point (:mod:`memory.robot.arm_view`) below ``press_z`` within
  ``button_px`` of it for ``press_kin_frames`` frames; without them, at least ``arm_px`` neutral pixels that were not there in the first frame within ``button_px``
  of it, for at least ``press_frames`` frames while the object rests on a target. The arm also passes near the
  button on its way between places; those visits are short, so the longest visit is the press and
  its time is the middle of that visit.
* **Targets** are the purple discs (touching discs taken apart, :func:`disc_pieces`) of the first frame plus any disc seen later at one place on
  ``confirm_frames`` frames away from the known ones (the arm at rest may hide one at first), or
  seen around the object when it comes to rest there. They are followed through the whole video
  (at rest: the nearest whole disc within ``target_jump`` px; moving, faster than ``moving_px`` per
  frame: the nearest purple blob of at least half its size to where its motion predicts it, within
  ``target_jump`` px plus ``target_jump_per_frame`` for every frame it went unseen, at most
  ``target_gate_max``; nearest pairs
  first, one blob per target), so a target that the video moves after its visit (two targets
  swapping places, one of them briefly hidden behind the arm or the cube) is answered where it
  ends up. A target at rest stays *home* while its own disc material there is still purple
  (``home_fill``), whatever blob that disc merges into: a swapped disc sliding over it pulls the
  merged blob's centroid toward itself, and is followed by its own motion until they part. A
  disc's expected size comes from its image row (the known disc first seen nearest that row): one
  swapped from near the camera to far shows a third of its area.

The answer becomes ``verified`` at the first live frame (the video is complete) when the
question has an answer (enough places; a press with a place on the asked side of it); otherwise
nothing is written and access abstains.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from memory.events import DwellConfig, DwellDetector, PressConfig, PressDetector, events_for
from memory.events.put_down import PutDownConfig, PutDownDetector
from memory.events.dwell import held_aloft
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.store.records import EntityRecord, EntityStatus, ProgressRecord, Source
from memory.language.spec import MemorySpec
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import bare_table, hsv
from memory.perception.layout_pixels import disc_pieces, is_purple, purple_mask
from memory.language.words import colour_of
from subgoals.record_names import RecordName, reference_binding
from subgoals.grammar import COORD_MAX, Point
from memory.tools.groups import ToolGroup

__all__ = ["DemoPlacesTool", "PlacesThresholds", "target_blobs"]

KEY = "demo/reference target"


@dataclass(frozen=True)
class _Disc:
    y: float
    x: float
    area: int

    def distance(self, yx) -> float:
        return float(np.hypot(self.y - yx[0], self.x - yx[1]))

    @property
    def point(self) -> Point:
        return _point((self.y, self.x))


def target_blobs(rgb: np.ndarray, min_area: int = 40, mask: np.ndarray | None = None) -> list[_Disc]:
    """Purple target discs in ``rgb`` (the layout tool's ring predicate), touching discs apart;
    ``mask`` is ``purple_mask(rgb)`` where the caller has it already."""
    return [_Disc(y, x, a) for y, x, a in disc_pieces(purple_mask(rgb) if mask is None else mask, min_area)]


def merge_fragments(discs: list[_Disc], px: float) -> list[_Disc]:
    """``discs`` with pieces whose centres lie within ``px`` of a larger one joined to it: an object
    in front of a disc (a cube beside it, the arm) can cut its ring into two blobs a few px apart,
    which would otherwise become two targets on one disc. Whole discs side by side lie about a
    diameter apart, well beyond ``px``."""
    kept: list[_Disc] = []
    for d in sorted(discs, key=lambda d: -d.area):
        host = next((i for i, k in enumerate(kept) if k.distance((d.y, d.x)) <= px), None)
        if host is None:
            kept.append(d)
            continue
        k = kept[host]
        a = k.area + d.area
        kept[host] = _Disc((k.y * k.area + d.y * d.area) / a, (k.x * k.area + d.x * d.area) / a, a)
    return kept


def _point(yx) -> Point:
    return Point(int(np.clip(round(yx[0]), 0, COORD_MAX)), int(np.clip(round(yx[1]), 0, COORD_MAX)))


@dataclass
class _Target:
    pos: tuple[float, float]
    area: int
    vel: tuple[float, float] = (0.0, 0.0)  # px per frame, while it moves (a swap)
    seen: int = 0  # video frame index it was last seen at
    home: np.ndarray | None = None  # (N, 2) purple pixels (row, col) of its disc (rim left out) where it rests; None while it moves
    row0: float = field(init=False)  # the image row where it was first seen, where ``area`` was measured

    def __post_init__(self) -> None:
        self.row0 = self.pos[0]


def home_pixels(mask: np.ndarray, pos: tuple[float, float], area: int, share: float) -> np.ndarray | None:
    """The disc material of a target at rest: ``mask`` pixels within ``share`` of its radius (from
    its area) around ``pos``, or None where none are. Not the rim: its colour flickers."""
    r = share * float(np.sqrt(max(area, 1) / np.pi))
    h, w = mask.shape
    y0, y1 = max(0, int(pos[0] - r)), min(h, int(np.ceil(pos[0] + r)) + 1)
    x0, x1 = max(0, int(pos[1] - r)), min(w, int(np.ceil(pos[1] + r)) + 1)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    inside = (np.hypot(yy - pos[0], xx - pos[1]) <= r) & mask[y0:y1, x0:x1]
    return np.stack([yy[inside], xx[inside]], axis=1) if inside.any() else None


@dataclass
class Place:
    step: int
    pos: tuple[float, float]
    target: int | None  # index of the target under it, None on bare table
    settled: bool = True  # False while a release off every target waits to be seen again unhidden
    frame: int = 0  # video frame index of the release


@dataclass(frozen=True)
class PlacesThresholds:
    """The numbers :class:`DemoPlacesTool` reads places, targets and the press with (rendered video frames, pixels in the 256x256 frame, heights in m); the dwell and press detectors' configs are built from them (the dwell's colour is the episode's)."""

    max_jump: float = 30.0
    """The carried object is followed to the nearest blob at most this far (px) per rendered frame (dwell detector)."""
    dwell_px: float = 3.0
    """A place is a dwell: the centroid stays within this (px) of one point... (dwell detector; render noise and the fingers opening move it 1-2 px)."""
    dwell_frames: int = 10
    """...for this many frames (dwell detector; the demonstration rests the object a second or more)."""
    moved_px: float = 10.0
    """...after moving more than this (px) from the previous dwell (the first dwell, where the object starts, is not a place)."""
    centre_px: float = 12.0
    """A dwell is on a target when a known disc's centre lies within this (px)..."""
    on_target_px: float = 20.0
    """...or when purple disc material surrounds it and a disc lies within this (px)."""
    min_sides: int = 3
    """Sides (of four) of a dwell that purple disc material must cover for it to be on a target."""
    target_jump: float = 8.0
    """A target at rest is followed to the nearest whole disc within this (px)."""
    target_jump_per_frame: float = 3.0
    """A moving target's gate widens by this (px) for every frame it went unseen..."""
    target_gate_max: float = 30.0
    """...up to this (px)."""
    predict_frames: int = 10
    """A moving target's motion is extrapolated over at most this many unseen frames."""
    moving_px: float = 0.6
    """A target faster than this (px per frame) is moving (followed by prediction)."""
    still_rad: float = 1e-3
    """Largest per-frame joint change (rad) at which the arm is at rest (a disc it hid may show)."""
    press_z: float = 0.06
    """With joint readings: the tool-centre point below this (m)... (press detector)."""
    press_kin_frames: int = 3
    """...within ``button_px`` of the button for this many frames is a press (press detector)."""
    open_width: float = 0.07
    """Fingers opened wider than this (m) have let the object go (dwell detector)."""
    button_px: float = 14.0
    """Radius (px) around the button in which the hand presses it."""
    arm_px: int = 100
    """Without joint readings: at least this many neutral pixels new since the first frame within ``button_px`` of the button are the arm there..."""
    press_frames: int = 8
    """...for at least this many frames while the object rests on a target (the arm passing on its way is shorter)."""
    new_target_px: float = 15.0
    """A disc seen farther than this (px) from every known target is a new one..."""
    confirm_frames: int = 3
    """...once seen at one place on this many frames (the arm at rest may hide one at first)."""
    reground_px: float = 16.0
    """How far (px) from the record a disc may be to re-ground the reference target."""
    aloft_z: float = 0.12
    """A pause with the hand above this (m)..."""
    hand_px: float = 20.0
    """...projecting within this (px) of the object holds it up: not a place."""
    put_px: float = 15.0
    """A put-down (the hand let go) is placed at the carried object's blob when that is within this (px) of the hand's projection, else at the hand."""
    fragment_px: float = 12.0
    """Blobs of the first frame whose centres lie within this (px) are pieces of one disc (an object in front cuts its ring) and make one target."""
    settle_px: float = 15.0
    """A place the release left off every target is decided again at the object's blob on later frames, while the blob stays within this (px) of it (the hand that just let go hides part of the object, so the first position can sit beside the disc)..."""
    settle_frames: int = 15
    """...for at most this many rendered frames after the release (the hand moves off within a second; later, a target moving past the object is not what it was set down on)."""
    home_share: float = 0.85
    """A target at rest remembers its disc material within this share of its radius (its home; the
    rim, where the colour flickers, left out)..."""
    home_fill: float = 0.9
    """...and stays home, whatever blob its disc merges into, while at least this share of that
    material is still purple: a disc sliding past or over it (a swap) pulls the merged blob's
    centroid toward itself, and a target that followed that centroid left with the passer. Its own
    disc leaving empties the home within a few px; something in front of it (arm, cube) does too,
    and then it is followed as before. Most of the disc is home, so that a disc starting to move its
    own way leaves home within a few px, while its blob is still whole and its motion can be learned
    (a mover soon passes behind others and shows only in part)."""


@register_tool(order=150)
class DemoPlacesTool(Tool):
    """Ordered places and the press from the video; answers "the correct target"."""

    name = "demo_places"
    serves = frozenset({Need.DEMO_PLACES})
    group = ToolGroup.DEMONSTRATION
    # reads the video; live, only the query views (re-grounding)
    render = RenderNeed(stride=None, video=True, video_stride=2)  # places and the press the same at video stride 2 on train 0-3, the place/target answers lost at 4 (benchmarks/video_stride_train.md); thresholds counted in frames were measured at this stride

    def __init__(self, *, max_jump: float = 30.0, dwell_px: float = 3.0, dwell_frames: int = 10, moved_px: float = 10.0,
                 centre_px: float = 12.0, on_target_px: float = 20.0, min_sides: int = 3, target_jump: float = 8.0,
                 target_jump_per_frame: float = 3.0, target_gate_max: float = 30.0, predict_frames: int = 10,
                 moving_px: float = 0.6, still_rad: float = 1e-3, press_z: float = 0.06, press_kin_frames: int = 3,
                 open_width: float = 0.07, button_px: float = 14.0, arm_px: int = 100, press_frames: int = 8, new_target_px: float = 15.0, confirm_frames: int = 3,
                 reground_px: float = 16.0, aloft_z: float = 0.12, hand_px: float = 20.0, put_px: float = 15.0) -> None:
        self.config = PlacesThresholds(
            max_jump=max_jump, dwell_px=dwell_px, dwell_frames=dwell_frames, moved_px=moved_px, centre_px=centre_px,
            on_target_px=on_target_px, min_sides=min_sides, target_jump=target_jump,
            target_jump_per_frame=target_jump_per_frame, target_gate_max=target_gate_max,
            predict_frames=predict_frames, moving_px=moving_px, still_rad=still_rad, press_z=press_z,
            press_kin_frames=press_kin_frames, open_width=open_width, button_px=button_px, arm_px=arm_px,
            press_frames=press_frames, new_target_px=new_target_px, confirm_frames=confirm_frames,
            reground_px=reground_px, aloft_z=aloft_z, hand_px=hand_px, put_px=put_px,
        )
        self.active = False
        self._reset_state()

    @property
    def press_config(self) -> PressConfig:
        """The press detector's thresholds (from this tool's)."""
        return PressConfig(press_z=self.config.press_z, button_px=self.config.button_px, press_kin_frames=self.config.press_kin_frames)

    def thresholds(self) -> tuple:
        return (self.config, self.press_config, self.put_config)

    @property
    def put_config(self) -> PutDownConfig:
        """The put-down detector's thresholds (its finger widths are this tool's ``open_width`` and the default held band)."""
        return PutDownConfig(open_width=self.config.open_width)

    def _reset_state(self) -> None:
        self.colour: str | None = None
        self.ordinal: int | None = None
        self.anchor = None
        self._pos: tuple[float, float] | None = None  # the carried object (the dwell detector's)
        self._dwells: DwellDetector | None = None
        self._hand: PressDetector | None = None
        self._puts: PutDownDetector | None = None
        self.places: list[Place] = []
        self._visit_start: int | None = None
        self._visit_len = 0
        self._visits: list[tuple[int, int, int]] = []
        self.targets: list[_Target] = []
        self._last_discs: list[_Disc] = []
        self._rgb: np.ndarray | None = None
        self._new: list[tuple[float, float, int]] = []
        self._video_frames = 0
        self._last_q: np.ndarray | None = None
        self._done = False
        self._answer: tuple[int, int] | None = None
        self._why = ""
        self._events: list[str] = []

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self._reset_state()
        colour = next((colour_of(p.split()) for p in spec.watch if colour_of(p.split())), None)
        self.colour = colour
        self.ordinal = spec.ordinal
        self.anchor = spec.anchor
        self.active = self.enabled_by(spec)
        if self.active:
            hub = events_for(store)
            self._dwells = hub.attach(DwellConfig(colour=self.colour, max_jump=self.config.max_jump, dwell_px=self.config.dwell_px,
                                                  dwell_frames=self.config.dwell_frames, moved_px=self.config.moved_px,
                                                  open_width=self.config.open_width, aloft_z=self.config.aloft_z, hand_px=self.config.hand_px))
            self._hand = hub.attach(self.press_config)
            self._puts = hub.attach(self.put_config)

    # ------------------------------------------------------------------ frames
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active or self._done:
            return
        if frame.source == "live":
            self._finish(frame, store)
            return
        if frame.rgb is None:
            return
        self._video_frames += 1
        self._rgb = frame.rgb
        q = None if frame.joint_state is None else np.asarray(frame.joint_state, float)[:7]
        arm_still = q is None or self._last_q is None or float(np.abs(q - self._last_q).max()) < self.config.still_rad
        self._last_q = q
        self._follow_targets(frame.rgb, arm_still)
        hub = events_for(store)
        puts = hub.events(frame, self._puts.config)
        dwells = hub.events(frame, self._dwells.config)
        self._pos = self._dwells.pos
        # the hand's own log first (it let go low over the table), the object's dwell otherwise
        for e in (puts if self._puts.sensing else dwells):
            self._place(self._at_object(e) if e.tcp is not None else e)
        self._settle(frame.step)
        hub.events(frame, self._hand.config)
        self._press(frame)

    def _follow_targets(self, rgb: np.ndarray, arm_still: bool = True) -> None:
        """Targets of the first frame, plus any disc seen later at one place on ``confirm_frames``
        frames (the arm at rest may hide one at first), each followed while seen whole.

        Targets move only while the arm holds still (the video's swaps run during static holds);
        while it moves, a disc's centroid shifts only because the arm or the cube hides part of it,
        so no motion is learned then."""
        mask = purple_mask(rgb)
        blobs = target_blobs(rgb, mask=mask)
        self._last_discs = blobs
        cfg = self.config
        if not self.targets:
            whole = merge_fragments(blobs, cfg.fragment_px)
            self.targets = [_Target((b.y, b.x), b.area, seen=self._video_frames,
                                    home=home_pixels(mask, (b.y, b.x), b.area, cfg.home_share)) for b in whole]
            return
        now = self._video_frames
        at_home = {i for i, t in enumerate(self.targets) if t.home is not None and np.hypot(*t.vel) < cfg.moving_px
                   and mask[t.home[:, 0], t.home[:, 1]].mean() >= cfg.home_fill}
        # its own disc still fills its home: it has not moved, whatever blob it is part of; and that
        # blob is its own (a disc passing over it is followed by its motion until they part)
        home_blobs = {j for j, b in enumerate(blobs) for i in at_home if b.distance(self.targets[i].pos) <= cfg.target_jump}
        pairs = []
        for i, t in enumerate(self.targets):
            if i in at_home:
                # where its own disc material is: a cube set on it or a disc sliding past pulls the
                # blob's centroid, and a disc that starts to move is looked for from here once it leaves
                t.seen, t.pos = now, (float(t.home[:, 0].mean()), float(t.home[:, 1].mean()))
                continue
            dt = max(1, now - t.seen)
            if np.hypot(*t.vel) >= self.config.moving_px:
                # moving (a swap): look where its motion leads, further the longer it went unseen, and
                # accept a disc partly hidden (it passes behind the arm or the cube)
                ahead = min(dt, self.config.predict_frames)
                guess = (t.pos[0] + t.vel[0] * ahead, t.pos[1] + t.vel[1] * ahead)
                gate = min(self.config.target_jump + self.config.target_jump_per_frame * (dt - 1), self.config.target_gate_max)
                share = 0.5
            else:  # at rest: only a whole disc at its place (a partly hidden one pulls the centroid)
                guess, gate, share = t.pos, self.config.target_jump, 0.8
            pairs += [(b.distance(guess), i, j) for j, b in enumerate(blobs)
                      if j not in home_blobs and b.area >= share * self._expected_area(t, b.y) and b.distance(guess) <= gate]
        taken_t, taken_b = set(at_home), set(home_blobs)
        for _, i, j in sorted(pairs):
            if i in taken_t or j in taken_b:
                continue
            taken_t.add(i)
            taken_b.add(j)
            t, b = self.targets[i], blobs[j]
            dt = max(1, now - t.seen)
            if not arm_still:
                t.vel = (0.0, 0.0)
            elif b.area >= 0.8 * self._expected_area(t, b.y):  # motion only from whole discs: a partly hidden one's centroid jitters
                step = ((b.y - t.pos[0]) / dt, (b.x - t.pos[1]) / dt)
                t.vel = (0.5 * t.vel[0] + 0.5 * step[0], 0.5 * t.vel[1] + 0.5 * step[1])
            t.pos, t.seen = (b.y, b.x), now
            if np.hypot(*t.vel) >= cfg.moving_px:
                t.home = None
            elif t.home is None and arm_still and b.area >= 0.9 * self._expected_area(t, b.y):  # come to rest on a whole disc
                t.home = home_pixels(mask, t.pos, b.area, cfg.home_share)
        fresh = [b for j, b in enumerate(blobs) if j not in taken_b and b.area >= 0.7 * self._expected_area(None, b.y)
                 and all(b.distance(t.pos) > self.config.new_target_px for t in self.targets)]
        seen = []
        for b in fresh:
            prev = next((c for c in self._new if np.hypot(c[0] - b.y, c[1] - b.x) <= 2.0), None)
            n = prev[2] + 1 if prev else 1
            if n >= self.config.confirm_frames:
                lost = self._lost_mover(blobs, taken_t, (b.y, b.x))
                if lost is not None:
                    self._found_again(lost, (b.y, b.x))
                    continue
                self.targets.append(_Target((b.y, b.x), b.area, seen=self._video_frames,
                                            home=home_pixels(mask, (b.y, b.x), b.area, cfg.home_share)))
                self._events.append(f"target found at {_point((b.y, b.x))}")
            else:
                seen.append((b.y, b.x, n))
        self._new = seen

    def _nearness(self, row: float) -> float:
        """How much wider than a typical disc (the median of the known ones) a disc renders at image
        ``row``, never below 1: the pixel reaches around a target were measured on typical discs, and
        on ``ood``'s larger layouts a disc at the front of the table shows 2.5 times a far one's area,
        its object's centroid, half hidden by the hand that just let go, 13 px from its centre."""
        if not self.targets:
            return 1.0
        typical = float(np.median([t.area for t in self.targets]))
        return max(1.0, float(np.sqrt(self._expected_area(None, row) / max(typical, 1.0))))

    def _expected_area(self, target: _Target | None, row: float) -> float:
        """The area (px) a whole disc shows at image ``row``: the front camera looks down the table,
        so a disc farther away (higher in the image) shows smaller, a third of a near one's size or
        less. It is the area of the known target first seen at the nearest row (no larger than
        ``target``'s own, measured where it was first seen): a disc moved from near to far by a swap
        would otherwise never count as whole, and a far disc never as new."""
        nearest = min(self.targets, key=lambda t: abs(t.row0 - row)).area
        return float(nearest if target is None else min(target.area, nearest))

    def _found_again(self, lost: int, at) -> None:
        """Where a lost moving target went, given a disc nobody follows that showed up at ``at``.

        Ahead of its motion, it is that disc. Behind it, the two exchanged places: the mover went on
        to the nearest target that lies ahead of it (hidden at its place, that one's track kept
        matching the mover's disc as it arrived) and the target at rest is the disc at ``at``, come
        the other way. Without a target ahead, the disc is the mover's."""
        t = self.targets[lost]
        vel, back = np.array(t.vel), np.array([at[0] - t.pos[0], at[1] - t.pos[1]])
        ahead, gone = float(back @ vel) > 0, float(np.hypot(*back))
        cands = []
        for j, o in enumerate(self.targets):
            if j == lost:
                continue
            d = np.array([o.pos[0] - t.pos[0], o.pos[1] - t.pos[1]])
            # ahead of it, and nearer than the disc behind: the mover came from there, so what is
            # left of its way is shorter than what it has gone (its curved path turns its heading)
            if float(d @ vel) > 0 and np.hypot(*d) < gone:
                cands.append((float(np.hypot(*d)), j))
        now = self._video_frames
        if ahead or not cands:
            t.pos, t.vel, t.seen, t.home = at, (0.0, 0.0), now, None
            self._events.append(f"target {lost} found again at {_point(at)}")
            return
        j = min(cands)[1]
        o = self.targets[j]
        t.pos, t.vel, t.seen, t.home = o.pos, (0.0, 0.0), now, None
        o.pos, o.vel, o.seen, o.home = at, (0.0, 0.0), now, None
        self._events.append(f"targets {lost} and {j} exchanged places: {lost} at {_point(t.pos)}, {j} at {_point(at)}")

    def _lost_mover(self, blobs: list[_Disc], seen_now: set[int], at) -> int | None:
        """The nearest target that was moving when last seen, is not seen now, and has no disc where
        the tracker left it: a target moving behind the cubes or the arm can come out where the
        prediction did not look, and its disc then shows up as "new" while its track is left on
        empty table. Targets at rest that the arm hides keep their tracks."""
        cands = [(np.hypot(t.pos[0] - at[0], t.pos[1] - at[1]), i) for i, t in enumerate(self.targets)
                 if i not in seen_now and np.hypot(*t.vel) >= self.config.moving_px
                 and all(b.distance(t.pos) > self.config.target_jump for b in blobs)]
        return min(cands)[1] if cands else None

    def _target_under(self, p) -> int | None:
        """The target under an object resting at ``p``: purple disc material around it on at least
        ``min_sides`` of its four sides (a disc surrounds what sits on it; a disc next to the object
        shows on one side), then the known target nearest to it, else the disc seen around it now."""
        # distances in units of the disc's size where the object stands: both reaches are pixels for a
        # disc of typical size, and a disc near the camera renders wider
        grow = self._nearness(p[0])
        dist = [(i, np.hypot(p[0] - t.pos[0], p[1] - t.pos[1]) / grow) for i, t in enumerate(self.targets)]
        close = [(i, d) for i, d in dist if d <= self.config.centre_px]
        if close:  # right over a known disc's centre
            return min(close, key=lambda x: x[1])[0]
        if self._rgb is None or self._purple_sides(self._rgb, p) < self.config.min_sides:
            return None
        near = [(i, d) for i, d in dist if d <= self.config.on_target_px]
        if near:
            return min(near, key=lambda x: x[1])[0]
        around = [b for b in self._last_discs if b.distance(p) <= self.config.on_target_px]
        if not around:
            return None
        b = min(around, key=lambda b: b.distance(p))
        self.targets.append(_Target((b.y, b.x), max(b.area, int(np.median([t.area for t in self.targets] or [b.area]))),
                                    seen=self._video_frames))
        self._events.append(f"target found under the object at {_point((b.y, b.x))}")
        return len(self.targets) - 1

    def _purple_sides(self, rgb: np.ndarray, p, ring: tuple[float, float] = (5.0, 16.0), min_px: int = 3) -> int:
        r = int(ring[1])
        y, x = int(round(p[0])), int(round(p[1]))
        y0, x0 = max(0, y - r), max(0, x - r)
        crop = rgb[y0: y + r + 1, x0: x + r + 1]
        purple = is_purple(*hsv(crop))
        yy, xx = np.mgrid[y0: y0 + crop.shape[0], x0: x0 + crop.shape[1]]
        dy, dx = yy - p[0], xx - p[1]
        d = np.hypot(dy, dx)
        hit = purple & (d >= ring[0]) & (d <= ring[1])
        return sum(int((hit & side).sum() >= min_px) for side in (dy < -abs(dx), dy > abs(dx), dx < -abs(dy), dx > abs(dy)))

    def _held_aloft(self, q: np.ndarray | None) -> bool:
        """The hand holds the object up (:func:`memory.events.dwell.held_aloft` at the object's place)."""
        return held_aloft(q, self._pos, self.config.aloft_z, self.config.hand_px)

    def _at_object(self, e):
        """A put-down placed where the object's blob is now, if it is near the hand: the hand's log says
        *when* it let go, the object's blob *where* it rests (the hand's projection is a few px off the
        cube's centre, 5-7 px on train, enough to miss a disc's centre)."""
        p = self._pos
        if p is None or np.hypot(p[0] - e.point[0], p[1] - e.point[1]) > self.config.put_px:
            return e
        return replace(e, point=p)

    def _place(self, e) -> None:
        """A stay of the object the dwell detector registered: held up in the air, or a place."""
        if e.kind == "hold":
            self._events.append(f"{e.step}: held still in the air at {_point(e.point)}")
            return
        p = e.point
        target = self._target_under(p)
        self.places.append(Place(e.step, p, target, settled=target is not None, frame=self._video_frames))
        self._events.append(f"{e.step}: placed at {_point(p)}" + (f" on target {target}" if target is not None else " on bare table"))

    def _settle(self, step: int) -> None:
        """Decide again the last place, if its release found no target under it: once the hand has
        moved off, the object's own blob at rest says where it sits. The place keeps its step (its
        order among the places); it stops waiting once the object leaves (picked up again) or the
        next place comes."""
        last = self.places[-1] if self.places else None
        if last is None or last.settled or self._pos is None:
            return
        if (np.hypot(self._pos[0] - last.pos[0], self._pos[1] - last.pos[1]) > self.config.settle_px
                or self._video_frames - last.frame > self.config.settle_frames):
            last.settled = True
            return
        target = self._target_under(self._pos)
        if target is not None:
            last.pos, last.target, last.settled = self._pos, target, True
            self._events.append(f"{step}: the place at {last.step} seen again at {_point(self._pos)}: on target {target}")

    def _press(self, frame: Frame) -> None:
        """The arm at the button: neutral pixels that were not there in the first frame cover the
        button's spot (``arm_px`` of them within ``button_px``) while the object rests. The longest
        such visit of the video is its press (the arm passing by on its way is a short visit)."""
        rgb = frame.rgb
        hand = self._hand
        # the first frame is the reference (and where the button is found); the robot's own joint
        # angles, the hand down at the button, are the press detector's (memory.events.press)
        if hand.first_step == frame.step or hand.button is None:
            return
        self._button, self._first_rgb = hand.button, hand.first_rgb
        y, x = int(round(self._button[0])), int(round(self._button[1]))
        r = int(self.config.button_px)
        y0, y1, x0, x1 = max(0, y - r), y + r + 1, max(0, x - r), x + r + 1
        crop = rgb[y0:y1, x0:x1].astype(np.int16)
        ref = self._first_rgb[y0:y1, x0:x1].astype(np.int16)
        yy, xx = np.mgrid[y0:y0 + crop.shape[0], x0:x0 + crop.shape[1]]
        disk = np.hypot(yy - self._button[0], xx - self._button[1]) <= self.config.button_px
        neutral = (crop.max(-1) - crop.min(-1)) <= 12
        changed = np.abs(crop - ref).max(-1) > 30
        at_button = int((neutral & changed & disk).sum()) >= self.config.arm_px
        # the press comes while the object is parked on a target (the arm is free); before the first
        # place the arm only passes the button on its way to the object
        last = self.places[-1] if self.places else None
        resting = (self._dwells.dwell_len >= 2 and last is not None and last.target is not None and self._pos is not None
                   and np.hypot(self._pos[0] - last.pos[0], self._pos[1] - last.pos[1]) <= self.config.moved_px)
        if at_button and resting:
            if self._visit_start is None:
                self._visit_start, self._visit_len = frame.step, 0
            self._visit_len += 1
            return
        if self._visit_start is not None and self._visit_len >= self.config.press_frames:
            self._visits.append((self._visit_len, self._visit_start, frame.step))
        self._visit_start, self._visit_len = None, 0

    @property
    def presses(self) -> list[int]:
        kin = self._hand.visits if self._hand is not None else []
        visits = kin or self._visits  # the hand's own path first, the pixels otherwise
        if not visits:
            return []
        n, a, b = max(visits)
        return [(a + b) // 2]

    # ------------------------------------------------------------------ answer
    def question(self) -> tuple[Place | None, str]:
        """The place the goal asks for, and why (or why not)."""
        on_target = [p for p in self.places if p.target is not None]
        if self.ordinal is not None and self.anchor is None:
            if self.ordinal <= len(on_target):
                return on_target[self.ordinal - 1], f"place {self.ordinal} of {len(on_target)}"
            return None, f"only {len(on_target)} places seen, the goal asks for place {self.ordinal}"
        if self.anchor is None:
            return None, "no question"
        if len(self.presses) != 1:
            return None, f"{len(self.presses)} presses seen"
        press = self.presses[0]
        if self.anchor.relation == "before":
            side = [p for p in on_target if p.step < press]
            which = self.anchor.which or "last"
        else:
            side = [p for p in on_target if p.step > press]
            which = self.anchor.which or "first"
        if not side:
            return None, f"no place {self.anchor.relation} the press at {press}"
        chosen = side[-1] if which == "last" else side[0]
        return chosen, f"{which} place {self.anchor.relation} the press at {press}"

    def _finish(self, frame: Frame, store: MemoryStore) -> None:
        self._done = True
        if not self._video_frames:
            return
        self.commit(store, "progress/demonstrated places",
                    ProgressRecord(name=RecordName.DEMONSTRATED_PLACES, count=sum(p.target is not None for p in self.places)),
                    step=frame.step, reason="dwells of the carried object on targets in the video", accepted=True)
        if self.presses:
            self.commit(store, "progress/demonstrated presses", ProgressRecord(name="demonstrated presses", count=len(self.presses)),
                        step=frame.step, reason="gripper closed on nothing while the object stayed put", accepted=True)
        place, why = self.question()
        self._why = why
        if place is None:
            self._events.append(f"no answer: {why}")
            return
        pos = self.targets[place.target].pos
        self._answer = _point(pos).as_tuple()
        self.commit(store, KEY, EntityRecord(identity="target", role="target", position=self._answer,
                                             binding=reference_binding("target"), status=EntityStatus.VERIFIED,
                                             source=Source.DEMONSTRATION),
                    step=frame.step, reason=f"{why}; target followed to the end of the video", accepted=True)

    # ------------------------------------------------------------------ reads
    def reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        if (not self.active or frame.rgb is None or entity.binding != reference_binding("target")
                or entity.position is None or entity.source is not Source.DEMONSTRATION):
            return None
        near = [b for b in target_blobs(frame.rgb, min_area=15) if b.distance(entity.position) <= self.config.reground_px]
        if not near:
            # targets do not move by themselves: if something stands in front of the spot (the arm,
            # the carried cube), the record's place stands; bare table there contradicts it
            return None if bare_table(frame.rgb, entity.position) else Point(*entity.position)
        b = min(near, key=lambda b: b.distance(entity.position))
        full = max((t.area for t in self.targets), default=0)
        # a disc partly hidden (the cube carried over it) pulls its centroid: keep the record's point then
        return b.point if b.area >= 0.8 * full else Point(*entity.position)

    def diagnostics(self) -> dict:
        return {
            "active": self.active,
            "video_frames": self._video_frames,
            "targets": [[round(v, 1) for v in t.pos] for t in self.targets][:8],
            "places": [{"step": p.step, "pos": [round(v, 1) for v in p.pos], "target": p.target} for p in self.places][:12],
            "presses": self.presses[:4],
            "places_from": None if self._puts is None else ("hand" if self._puts.sensing else "pixels"),
            "answer": None if self._answer is None else list(self._answer),
            "why": self._why,
            "events": self._events[:20],
        }

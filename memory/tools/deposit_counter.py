"""Counts the cubes of each colour dropped into the bin, and gates "which colour next, or stop".

The goal lists how many cubes of each colour go into the bin ("put two red cubes and one green
cube into the bin"). The bin swallows what it receives: nothing in the view says how many cubes of
each colour are already inside, and new cubes keep appearing on the table, so counting the cubes
left on the table says nothing either. This tool counts *deposits*.

Evidence for one deposit of colour C (the evidence gate):

* a release in the executed actions (the gripper command going from closed to open);
* the cube carried to it: a cube standing on the table when the gripper closed (seen within
  the last ``carry_frames`` rendered frames) whose place is empty at the release. Exactly one
  colour of such places names the carried colour, and only a blob of that colour can be the
  deposit (an arm passing over a cube that stands near the bin hides it, which is no deposit);
  none at all means the grasp lifted nothing (a missed grasp, retried by the executor), so the
  release deposits nothing, unless the hand's own log says it lifted something (then a cube of the
  same colour stands next to the one taken, and the colour is left open); several colours leave it
  open;
* just before it (in the last ``lookback`` rendered frames: the arm often hides the held cube for
  the last few), a blob of colour C held over the bin (within ``near_px`` of the bin in the image,
  or above it within ``held_px`` when it is held high over the rim; the bin's dark floor is read
  from the first live frames and kept as a layout record), that had
  not been resting there (a cube lying next to the bin is not the one carried);
* within ``verify_within`` rendered frames after the release, that blob gone from where it was
  (followed while it is still held or falling; a blob there that is another cube, one standing at
  that place since well before the release, does not count as it: places are registered by the bin
  too, but only while nothing is carried, so a cube standing beside the bin is told from the
  carried one and a held cube pausing over the bin is not taken for a standing one) and no new blob of colour C
  near the bin (a cube that misses the opening lands beside it and stays visible). A cube that
  shows up again where it vanished within the next frames takes the deposit back.

Where the frames log the fingers (:mod:`memory.events.lift`), the hand's own sensing settles three
things the pixels cannot always see: a grip that never held anything apart and rose lifted nothing
(the release deposits nothing); a grip that still held something when it opened with the hand away
from the bin dropped it on the way (no deposit, however the fall hides it: a cube that vanishes
from the hand's view short of the bin and lands out of ``near_px`` passed the pixel checks);
and when the arm hides the held cube over the bin, a grip still holding the carried colour when it
opened, with the hand over the bin, stands in for the blob held there (the vanishing and landing
checks above still decide). The place standing at the grasp right where the hand's log says the lift
started names the carried colour, when one colour's place is plainly the nearest there, whatever the
emptied places say: they may name several colours (the arm hid or pushed a neighbour while it took
the cube) or another one (a place behind the arm's upper links, a far cube whose blob flickers).

Cubes that appear later on the table change nothing: only a vanishing at the bin after a release
counts. Each colour's count is a ``progress/deposited <colour> <role>`` record (target: the goal's
count for that colour, 0 for the others), where the role (``cube``) and the receptacle (``bin``)
are the parameters of the episode's count of deposits
(:class:`~memory.language.state_kinds.Count`, roles from the word table), not words of this module;
the pixel readers (colour blobs, the receptacle's dark floor) were measured on cubes and a bin.

The gate (read kind ``count_gate``) fires at the decisions the deposits settle: a proposal to
pick up a cube or to press the button. While some goal colour is still owed, a press or a pick of a
colour that is not owed becomes a pick of the first owed colour in goal order, re-grounded on a
visible blob of that colour away from the bin (the one that has stood there longest, i.e. the next
in order of appearance, with the ordinal of that colour's next cube); a
pick of an owed colour stands as proposed (its position word, if any, is the proposer's and is never
read). Where no blob of an owed colour is in view, the arm may be hiding it (after a deposit it hovers
over the bin, in front of the cubes behind the bin in the image): the pick goes to the place where a
cube of that colour was last seen standing, if the arm's projection (joint angles through forward
kinematics, :mod:`memory.robot.arm_view`) covers that place now and no grip has lifted from it since.
Where there is none either (in a scene where cubes keep arriving, the next has not come yet), the
robot holds still ("remain static", decided afresh at every call): a press then would stop short and
another colour would overfill, so neither is let through. When every count is met, a pick
becomes pressing the button at its layout position. While a release is still being verified the
gate decides nothing: it holds the empty gripper over the bin ("put it into the bin", which has
nothing left to put) until the deposit is settled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from memory.control.count_gate import CountGates
from memory.events import GRIPPER_LIVE, LIFT_LIVE, events_for, sensed_grip
from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.language.state_kinds import Count, CountEvent, state_kinds_of
from memory.store.records import LayoutRecord, ProgressRecord
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import Blob, find_blobs
from memory.robot.arm_view import arm_covers
from memory.tools.scene_layout import layout_points
from memory.language.words import COLOUR_WORDS, DEFAULT_OBJECT_ROLE, colour_of
from subgoals import phrases
from subgoals.edits import Replace, SubgoalEdit
from subgoals.actions import Action, action_of
from subgoals.grammar import try_parse
from subgoals.record_names import deposited
from memory.tools.groups import ToolGroup

_EIGHT = np.ones((3, 3), dtype=bool)


def key_for(colour: str, role: str) -> str:
    """The store key of the count of deposited objects of ``role`` and ``colour``."""
    return f"progress/{deposited(colour, role)}"


def receptacle_key(receptacle: str) -> str:
    """The store key of the receptacle's layout record (``"layout/bin"``)."""
    return f"layout/{receptacle}"


def dark_squares(rgb: np.ndarray, top_margin: int = 40, max_value: int = 50) -> list[tuple[float, float, int]]:
    """Compact near-black components (the bin's floor seen through its opening), largest first."""
    mask = rgb.max(axis=-1) < max_value
    labels, n = ndimage.label(mask, structure=_EIGHT)
    out = []
    for i, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None or box[0].start < top_margin:
            continue
        area = int((labels[box] == i).sum())
        h, w = box[0].stop - box[0].start, box[1].stop - box[1].start
        if 80 <= area <= 2000 and max(h, w) <= 2.5 * min(h, w) and area >= 0.45 * h * w:
            cy, cx = ndimage.center_of_mass(labels == i)
            out.append((float(cy), float(cx), area))
    return sorted(out, key=lambda b: -b[2])


def _place_of(spots: list[list], b: Blob) -> list | None:
    """The place of ``b``'s colour within 6 px of it, if one is known."""
    return next((sp for sp in spots if sp[0] == b.colour and np.hypot(sp[1] - b.y, sp[2] - b.x) <= 6), None)


def _stood(spots: list[list], b: Blob, step: int, last) -> None:
    """``b`` seen standing at ``step``: the place of its colour within 6 px follows it (last seen now),
    or a new place ``[colour, y, x, step, step, last]`` starts there."""
    spot = _place_of(spots, b)
    if spot is None:
        spots.append([b.colour, b.y, b.x, step, step, last])
    else:
        spot[1], spot[2], spot[4] = b.y, b.x, step


_HOLD = Replace(phrases.remain_static())
"""The gate's answer while a count is owed and nothing owed can be taken: the robot holds still."""


@dataclass
class _Release:
    step: int
    candidates: list[Blob]  # blobs held near the bin just before the release
    frames_left: int
    before: list[Blob]  # every blob of the last frames before the release


@dataclass(frozen=True)
class DepositThresholds:
    """The numbers :class:`DepositCounter` verifies a deposit with (rendered frames fed to the tool, pixels in the 256x256 frame)."""

    near_px: float = 30.0
    """A blob within this of the bin (image) is held near it (the last frames before a release); within 0.8 of it, a blob is at the bin and not a cube to pick."""
    held_px: float = 60.0
    """A cube held for release over the bin may be seen this far from the bin's floor, above it in
    the image: it is held over the rim, and the front camera looks down at it from in front, so the
    higher it is held the higher it appears (the official envs release about 45 px above the floor)."""
    gone_px: float = 8.0
    """A blob of the carried colour within this of where the candidate was is still it (held, or falling): the cube has not vanished; half of it: the cube shows up again where it vanished."""
    verify_within: int = 6
    """Rendered frames after a release within which the carried blob must be gone from the bin for the deposit to count."""
    rest_frames: int = 6
    """Frames in a row a blob must stand still to be resting (a cube lying next to the bin is not the one carried)."""
    still_px: float = 5.0
    """A blob within this of its previous place is standing still."""
    min_area: int = 10
    """Smallest colour blob (px) that counts as a cube."""
    layout_frames: int = 3
    """Live frames the bin's dark floor is looked for in (plus 5 more while it is not found)."""
    lookback: int = 6
    """Rendered frames before a release searched for the held cube (the arm often hides it for the last few)."""
    standing_age: int = 40
    """A blob standing at a place since this many steps before the release is another cube, not the one carried."""
    carry_frames: int = 20
    """A cube seen standing at a place in the last this many rendered frames before a grasp may be the one grasped."""
    lift_px: float = 8.0
    """The place standing at the grasp nearest the point the hand's log says the lift started from, within
    this (px) and nearer by ``lift_margin`` than any place of another colour, is the place the cube was taken from."""
    lift_margin: float = 3.0
    """See ``lift_px``."""
    arm_px: float = 16.0
    """A place within this of the arm's projected skeleton (joint angles, forward kinematics) is hidden
    behind the arm: a cube last seen standing there is still there, not gone."""
    hand_px: float = 36.0
    """The same for the hand, whose fingers and whatever they hold hang around the tool-centre point."""


@register_tool(order=50)
class DepositCounter(Tool):
    name = "deposit_counter"
    serves = frozenset({Need.PER_KIND_COUNT})
    group = ToolGroup.PROGRESS
    gate_kind = ReadKind.COUNT_GATE
    render = RenderNeed(stride=4, video=False)

    def __init__(self, near_px: float = 30.0, held_px: float = 60.0, gone_px: float = 8.0, verify_within: int = 6, rest_frames: int = 6,
                 still_px: float = 5.0, min_area: int = 10, layout_frames: int = 3, lookback: int = 6,
                 standing_age: int = 40, carry_frames: int = 20, lift_px: float = 8.0, lift_margin: float = 3.0,
                 arm_px: float = 16.0, hand_px: float = 36.0):
        self.config = DepositThresholds(
            near_px=near_px, held_px=held_px, gone_px=gone_px, verify_within=verify_within, rest_frames=rest_frames, still_px=still_px,
            min_area=min_area, layout_frames=layout_frames, lookback=lookback, standing_age=standing_age,
            carry_frames=carry_frames, lift_px=lift_px, lift_margin=lift_margin, arm_px=arm_px, hand_px=hand_px,
        )
        self.goal: dict[str, int] = {}
        self.role: str = DEFAULT_OBJECT_ROLE  # what is counted, and into what: set from the count of deposits at reset
        self.receptacle: str | None = None

    def thresholds(self) -> tuple:
        return (self.config, GRIPPER_LIVE, LIFT_LIVE)

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.goal = {}
        for phrase, n in spec.counts:
            c = colour_of(phrase.split())
            if c is not None:
                self.goal[c] = self.goal.get(c, 0) + int(n)
        self.active = self.enabled_by(spec)
        state = next((s for s in state_kinds_of(spec) if isinstance(s, Count) and s.event is CountEvent.DEPOSIT), None)
        # what is counted and where it goes: the count's parameters (an object noun the table lacks
        # keeps the table's default role for its records; the layer reports the noun as unserved)
        self.role = state.roles[0] if state is not None and state.roles else DEFAULT_OBJECT_ROLE
        self.receptacle = None if state is None else state.receptacle
        self.tally = CountGates(self.goal, COLOUR_WORDS)
        self.bin: tuple[float, float] | None = None
        self._bin_seen: list[tuple[float, float]] = []
        self._live_frames = 0
        self._lift = None
        if self.active:
            events_for(store).attach(GRIPPER_LIVE)
            self._lift = events_for(store).attach(LIFT_LIVE)
        self.by_hand = 0  # deposits whose held cube only the hand's log placed over the bin
        self._spots: list[list] = []  # [colour, y, x, first step seen standing there, last step seen there, by the bin]
        # places where cubes stood on the table while the hand carried nothing (a held cube pausing in
        # the air is no such place): [colour, y, x, first step, last step, step a grip lifted from there or None]
        self._table_spots: list[list] = []
        self._carrying = False  # between a grasp and its release
        self._grasped: list[tuple[str, float, float]] | None = None  # places standing when the gripper last closed
        self._lifted_from: str | None = None  # colour of the place the hand's log says this grip lifted from
        self._lift_point: tuple[float, float] | None = None  # pixel the hand's log says this grip lifted from
        self._q: np.ndarray | None = None  # the arm's joint angles at the last live frame
        self.holds = 0  # gate calls answered by holding still: a count owed, no such object to take
        self.behind_arm = 0  # picks grounded on a place the arm hides, where a cube of the colour was last seen
        self.by_lift = 0  # releases whose carried colour the lift's place settled (the emptied places said another, several or none)
        self.carried_log: list[tuple[int, str | None]] = []  # (release step, carried colour or None: lifted nothing)
        self.empty_releases = 0
        self.places_refilled = 0  # releases whose grasped place showed its colour again while the hand held something
        self.dropped_away = 0  # releases of a held cube with the hand away from the bin (the hand's log)
        self._frame_steps: list[int] = []  # steps of the last rendered live frames
        self._recent: list[tuple[int, list[Blob]]] = []  # (step, blobs) of the last rendered frames
        self._rest: list[tuple[Blob, int]] = []  # blobs of the last frame, with how many frames in a row they stood there
        self._release: _Release | None = None
        self._vanished: list[tuple[int, Blob]] = []  # recent deposits: (step, blob), for take-backs
        self._last_rgb: np.ndarray | None = None
        self.rejected = 0
        self.taken_back = 0
        self.log: list[tuple[int, str]] = []
        self._latched: tuple | None = None
        self._gate_calls = 0
        self._rewrites = 0
        if self.active:
            for c in COLOUR_WORDS:
                if c in self.goal:
                    store.add(key_for(c, self.role), ProgressRecord(name=deposited(c, self.role), count=0, target=self.goal[c]),
                              step=store.last_step or 0,
                              reason=f"goal asks for {self.goal[c]} {c} {self.role}(s) in the {self.receptacle}")

    # ------------------------------------------------------------------ evidence
    def _read_bin(self, rgb: np.ndarray, step: int, store: MemoryStore) -> None:
        squares = dark_squares(rgb)
        if not squares:
            return
        y, x, _ = squares[0]
        if any(np.hypot(y - py, x - px) <= 3 for py, px in self._bin_seen):
            self.bin = (y, x)
            self.commit(store, receptacle_key(self.receptacle),
                        LayoutRecord(role=self.receptacle, label=self.receptacle, position=(int(round(y)), int(round(x)))),
                        step=step, reason=f"dark {self.receptacle} floor seen twice at the same place", accepted=True)
        self._bin_seen.append((y, x))

    def _near_bin(self, b: Blob, radius: float | None = None) -> bool:
        return self.bin is not None and b.distance(self.bin) <= (radius or self.config.near_px)

    def _held_over_bin(self, b: Blob) -> bool:
        """Near the bin's floor, or above it in the image within ``held_px`` (held high over the rim)."""
        return self._near_bin(b) or (self.bin is not None and b.y <= self.bin[0]
                                     and b.distance(self.bin) <= self.config.held_px)

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active or frame.source != "live":
            return
        events = events_for(store).events(frame, GRIPPER_LIVE)
        lifts = events_for(store).events(frame, LIFT_LIVE)  # fed before a release reads the grip it ends
        if any(e.kind == "grasp" for e in events):
            self._on_grasp(frame.step)
        for e in lifts:
            if e.kind == "lift":
                self._on_lift(e.point)
        if any(e.kind == "release" for e in events):
            self._on_release(frame.step)
        if frame.joint_state is not None and len(frame.joint_state) >= 7:
            self._q = np.asarray(frame.joint_state, float)[:7]
        if frame.rgb is None:
            return
        self._last_rgb = frame.rgb
        self._live_frames += 1
        if self.bin is None and self._live_frames <= self.config.layout_frames + 5:
            self._read_bin(frame.rgb, frame.step, store)
        blobs = find_blobs(frame.rgb, COLOUR_WORDS, min_area=self.config.min_area)
        rest = []
        for b in blobs:
            before = [n for p, n in self._rest if p.colour == b.colour and p.distance((b.y, b.x)) <= self.config.still_px]
            rest.append((b, max(before, default=0) + 1))
        self._rest = rest
        for b, n in rest:  # where cubes stand, and since when (the order in which they appeared)
            # by the bin only while nothing is carried: a held cube pausing over the bin is no standing
            # one, but a cube that stands beside the bin must not pass for the carried one
            by_bin = self._near_bin(b, self.config.near_px * 0.8)
            if n < 2 or (by_bin and self._carrying):
                continue
            _stood(self._spots, b, frame.step, by_bin)
            if not (by_bin or self._carrying):
                _stood(self._table_spots, b, frame.step, None)
        self._recent = (self._recent + [(frame.step, blobs)])[-10:]
        self._frame_steps = (self._frame_steps + [frame.step])[-self.config.carry_frames:]
        if self._release is not None and frame.step > self._release.step:
            self._verify(frame.step, blobs, store)
        self._check_take_back(frame.step, blobs, store)

    def _standing_since(self, b: Blob, step: int) -> bool:
        """``b`` lies where a cube of its colour has stood since ``step`` or earlier (another cube)."""
        return any(sp[0] == b.colour and sp[3] <= step and np.hypot(sp[1] - b.y, sp[2] - b.x) <= 6 for sp in self._spots)

    def _resting(self, b: Blob) -> bool:
        """Seen standing within ``still_px`` of here for ``rest_frames`` frames in a row (a cube on the table)."""
        return any(p.colour == b.colour and p.distance((b.y, b.x)) <= self.config.still_px and n >= self.config.rest_frames
                   for p, n in self._rest)

    def _on_grasp(self, step: int) -> None:
        """Remember the places where cubes stood on the table as the gripper closes (not those by the
        bin: a cube standing there is never the one carried to it)."""
        since = self._frame_steps[0] if len(self._frame_steps) >= self.config.carry_frames else -1
        self._grasped = [(sp[0], sp[1], sp[2]) for sp in self._spots if sp[4] >= since and not sp[5]]
        self._lifted_from, self._lift_point = None, None
        self._carrying = True

    def _on_lift(self, point) -> None:
        """The hand's log says the grip lifted something from ``point`` (the pixel of the hand's lowest
        point since it closed): the place standing at the grasp right there, if one colour's place is
        plainly the nearest, is where the carried cube came from. This settles the carried colour over the
        places emptied by the release (the arm hides other cubes, a pushed neighbour leaves its place
        too, a far cube's blob flickers: they can name several colours, or another one)."""
        self._lift_point = None if point is None else (float(point[0]), float(point[1]))
        if point is None or not self._grasped:
            return
        near = sorted((float(np.hypot(y - point[0], x - point[1])), c) for c, y, x in self._grasped)
        d, colour = near[0]
        rival = next((dd for dd, c in near[1:] if c != colour), None)
        if d <= self.config.lift_px and (rival is None or rival - d >= self.config.lift_margin):
            self._lifted_from = colour

    def _carried(self) -> set[str] | None:
        """Colours of the places standing at the last grasp that are empty now (None: no grasp seen, or
        every place that looks empty is one the arm hides, which says nothing about what was taken)."""
        if self._grasped is None or not self._recent:
            return None
        blobs = self._recent[-1][1]
        emptied = [(c, y, x) for c, y, x in self._grasped
                   if not any(b.colour == c and b.distance((y, x)) <= 2 * self.config.still_px for b in blobs)]
        # a place the arm stands in front of (over the bin at the release, it hides the cubes behind
        # the bin in the image) is unseen, not emptied
        seen = [(c, y, x) for c, y, x in emptied if not self._arm_hides((y, x))]
        if emptied and not seen:
            return None
        return {c for c, _, _ in seen}

    def _arm_hides(self, yx) -> bool:
        """Whether the arm's projection at the last live frame covers pixel ``yx``."""
        return self._q is not None and arm_covers(self._q, yx, self.config.arm_px, self.config.hand_px)

    def _mark_taken(self, step: int) -> None:
        """The place the hand's log says this grip lifted from no longer holds a cube (whatever the
        release proves): a pick is never grounded on it behind the arm until a cube is seen there again."""
        if self._lift_point is None:
            return
        for sp in self._table_spots:
            if np.hypot(sp[1] - self._lift_point[0], sp[2] - self._lift_point[1]) <= self.config.lift_px:
                sp[5] = step

    def _on_release(self, step: int) -> None:
        self._carrying = False
        self._mark_taken(step)
        if self.bin is None:
            return
        carried = self._carried()
        self._grasped = None
        lifted_from, self._lifted_from = self._lifted_from, None
        grip = sensed_grip(self._lift)
        if grip is not None and not grip.lifted:
            # the hand's own log: nothing held the fingers apart and rose (a missed grasp)
            self.carried_log.append((step, None))
            self.empty_releases += 1
            return
        if carried is not None and not carried and grip is not None and grip.lifted:
            # every place still shows a cube of its colour, but the hand's own log says it lifted
            # something: a cube of the same colour stands (or came to stand) next to the one taken.
            # The colour is then open, for the blob held over the bin to settle
            carried = None
            self.places_refilled += 1
        if carried is not None and not carried:
            # the grasp lifted nothing: every cube standing then still stands
            self.carried_log.append((step, None))
            self.empty_releases += 1
            return
        # where the hand's log puts the hand as it opened while still holding (None: not sensed)
        hand = (Blob("", float(grip.hand[0]), float(grip.hand[1]), 0, (0, 0, 0, 0))
                if grip is not None and grip.holding and grip.hand is not None else None)
        if hand is not None and not self._held_over_bin(hand):
            # the hand's own log: it let go of what it held away from the bin (dropped on the way);
            # what falls there lands on the table, wherever the pixels lose it
            self.dropped_away += 1
            return
        only = next(iter(carried)) if carried is not None and len(carried) == 1 else None
        if lifted_from is not None and grip is not None and grip.lifted and lifted_from != only:
            # the hand's own log says where the lift started, and one colour's place stood right there:
            # that is the carried colour, whatever the emptied places say (several colours, none, or
            # another one: a place the arm's upper links hide, a far cube's blob that flickers)
            only = lifted_from
            self.by_lift += 1
        if only is not None:
            self.carried_log.append((step, only))
        candidates: list[Blob] = []
        # the latest frame showing something held at the bin; held high over the rim only when no
        # frame shows one at the bin itself (the closer view is the better evidence)
        for over in (self._near_bin, self._held_over_bin):
            for _, blobs in reversed(self._recent[-self.config.lookback:]):
                candidates = [b for b in blobs if over(b) and not self._resting(b) and only in (None, b.colour)]
                if candidates:
                    break
            if candidates:
                break
        if not candidates and only is not None and hand is not None:
            # the arm hid the held cube: the hand's log says it still held the cube it took from the
            # table when it opened, and where (over the bin, or the drop above returned): the candidate
            candidates = [Blob(only, hand.y, hand.x, 0, (0, 0, 0, 0))]
            self.by_hand += 1
        if not candidates:
            self.rejected += 1
            return
        before = [b for _, blobs in self._recent for b in blobs]
        self._release = _Release(step, candidates, self.config.verify_within, before)

    def _verify(self, step: int, blobs: list[Blob], store: MemoryStore) -> None:
        rel = self._release
        assert rel is not None
        rel.frames_left -= 1
        old = rel.step - self.config.standing_age
        gone, held = [], []
        for c in rel.candidates:
            # still there (held, or falling): a blob of its colour close by that is not another cube
            # which has been standing there since before the carry
            near = [b for b in blobs if b.colour == c.colour and b.distance((c.y, c.x)) <= self.config.gone_px
                    and not self._standing_since(b, old)]
            if near:
                held.append(min(near, key=lambda b: b.distance((c.y, c.x))))
            else:
                gone.append(c)
        rel.candidates = held + gone
        # a cube that misses the opening lands next to it: a blob near the bin that was not there before
        beside = {b.colour for b in blobs if self._near_bin(b)
                  and not any(p.colour == b.colour and p.distance((b.y, b.x)) <= self.config.gone_px for p in rel.before)
                  and not any(sp[0] == b.colour and sp[3] <= old and np.hypot(sp[1] - b.y, sp[2] - b.x) <= self.config.gone_px
                              for sp in self._spots)}
        gone = [c for c in gone if c.colour not in beside]
        if gone:
            c = min(gone, key=lambda b: b.distance(self.bin))
            self._release = None
            self.tally.add(c.colour)
            self._vanished = [(step, c)]
            self.log.append((step, c.colour))
            self._commit(c.colour, step, store, f"released at the {self.receptacle}; the {c.colour} {self.role} held there vanished")
            return
        if rel.frames_left <= 0:
            self._release = None
            self.rejected += 1

    def _check_take_back(self, step: int, blobs: list[Blob], store: MemoryStore) -> None:
        kept = []
        for t, c in self._vanished:
            if step - t > 4 * self.config.verify_within:
                continue
            if step > t and any(b.colour == c.colour and b.distance((c.y, c.x)) <= self.config.gone_px / 2
                                and not self._standing_since(b, t - self.config.standing_age) for b in blobs):
                self.tally.add(c.colour, -1)
                self.taken_back += 1
                self._commit(c.colour, step, store, f"the {c.colour} {self.role} is back where it vanished: no deposit")
                continue
            kept.append((t, c))
        self._vanished = kept

    def _commit(self, colour: str, step: int, store: MemoryStore, reason: str) -> None:
        self.commit(store, key_for(colour, self.role),
                    ProgressRecord(name=deposited(colour, self.role), count=self.deposited[colour],
                                   target=self.goal.get(colour, 0)),
                    step=step, reason=reason, accepted=True)

    @property
    def deposited(self) -> dict[str, int]:
        """Deposits verified so far per colour (the count gates' own dict)."""
        return self.tally.counts

    # ------------------------------------------------------------------ gate
    def owed(self) -> list[str]:
        return self.tally.owed()

    def _pick_point(self, colour: str) -> tuple[int, int] | None:
        if self._last_rgb is None:
            return None
        blobs = [b for b in find_blobs(self._last_rgb, [colour], min_area=self.config.min_area)
                 if not self._near_bin(b, self.config.near_px * 0.8)]
        if not blobs:
            return self._behind_arm(colour)
        def since(b: Blob) -> float:
            spot = _place_of(self._spots, b)
            return float("inf") if spot is None else spot[3]

        # the cube of that colour that has stood on the table longest (the next in order of appearance),
        # then the most visible one
        b = min(blobs, key=lambda b: (since(b), -b.area))
        return b.point.y, b.point.x

    def _behind_arm(self, colour: str) -> tuple[int, int] | None:
        """Where a cube of ``colour`` was last seen standing on the table (the hand carrying nothing), at a place the arm hides now
        (its joint angles through forward kinematics) and no grip has lifted from since: the cube is
        behind the arm, not gone. The place that has stood longest, as for a visible cube."""
        hidden = [sp for sp in self._table_spots
                  if sp[0] == colour and (sp[5] is None or sp[4] > sp[5]) and self._arm_hides((sp[1], sp[2]))]
        if not hidden:
            return None
        sp = min(hidden, key=lambda sp: sp[3])
        self.behind_arm += 1
        return int(round(sp[1])), int(round(sp[2]))

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active:
            return None
        self._gate_calls += 1
        if self._latched is not None and self._latched[1] == _HOLD:
            self._latched = None  # a hold waits for something to change in the view: decided afresh each time
        state = tuple(sorted(self.deposited.items())) + (self._release is not None,)
        out, fresh = self.latched((proposed, state), lambda: self._decide(proposed, store))
        self.holds += out == _HOLD
        if fresh and out is not None:
            self._rewrites += 1
        return out

    def _decide(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        sg = try_parse(proposed)
        if sg is None:
            return None
        action = action_of(sg)
        is_press, is_pick = action is Action.PRESS, action is Action.PICK
        if not (is_press or is_pick):
            return None
        if self._release is not None:
            # a release is being verified: the counts are about to change, so decide nothing yet; the
            # gripper is empty and open over the bin, and "put it into the bin" there does nothing
            if self.bin is None:
                return None
            return Replace(phrases.put_into((int(round(self.bin[0])), int(round(self.bin[1])))))
        owed = self.owed()
        if not owed:
            if is_press:
                return None
            buttons = layout_points(store, "button")
            if not buttons:
                return None
            return Replace(phrases.press(buttons[0]))
        colour = None
        if is_pick:
            words = [w for np_ in sg.noun_phrases for w in (*np_.modifiers, np_.head)]
            colour = colour_of(words)
        if colour in owed:
            # an owed colour: the proposal stands, whatever position word it carries (the proposer's
            # count is not evidence; the point decides which cube is picked)
            return None
        for c in owed:  # goal order
            point = self._pick_point(c)
            if point is not None:
                k = self.deposited[c] + 1
                return Replace(phrases.pick(f"{c} {self.role}", point, rank=min(k, 10)))
        # a count still owed and no such object to take, in view or behind the arm (in a scene where they
        # keep arriving, the next has not come yet): neither stopping nor another colour is right, so
        # the robot holds still until one shows
        return _HOLD

    def diagnostics(self) -> dict:
        return {"active": self.active, "goal": dict(self.goal), "deposited": {c: n for c, n in self.deposited.items() if n},
                "bin": None if self.bin is None else [round(v) for v in self.bin], "log": list(self.log),
                "rejected_releases": self.rejected, "taken_back": self.taken_back,
                "empty_releases": self.empty_releases, "places_refilled": self.places_refilled, "dropped_away": self.dropped_away, "carried": [list(x) for x in self.carried_log],
                "held_by_hand": getattr(self, "by_hand", 0), "colour_by_lift": getattr(self, "by_lift", 0),
                "gate_calls": self._gate_calls, "rewrites": self._rewrites,
                "holds": self.holds, "behind_arm": self.behind_arm}

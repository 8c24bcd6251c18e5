"""Route memory: parse a demonstrated route into ordered segments, follow it live, fill the route slot.

A goal that asks to retrace "the same pattern" or to follow "the same path" leaves one thing to
memory: the order of moves the demonstration made. Nothing in the current view tells it. This
tool reads it from pixels in two ways, depending on the evidence the demonstration offers:

* **Cue route** (nodes that light up red when the stick tip touches them). Every red disc that
  appears during the demonstration, away from anything red already in its first frame, is a
  *cue event*; the ordered cue positions are the route's nodes. The node the stick starts on
  is lit before the demonstration starts and cleared again, so it is read from the first live
  frame instead, where the same start node is lit once more by the hidden return to the start.
  Each step between two nodes is named with one of eight compass words in the robot frame.
* **Arc route** (no cues: the stick weaves around upright obstacles from node to node). The
  stick tip is tracked as the lowest pixel of the moving unsaturated (robot-coloured) pixels
  (gray scenery is recognised as unsaturated in nearly every frame and unchanged from the
  scene's median image). The moves are separated where the arm pauses: its joint states (which
  the demonstration frames carry) nearly stop, or, without joint states, the picture nearly
  stops changing. The tip where the arm pauses is a node; each segment is named by its *side*
  (which neighbour: image right is "left") and its *circling sense* ("clockwise" when most of
  the tip's path runs on the left of the travel direction, seen from above).

Image -> robot frame (a constant of the fixed front camera, not read from any simulator): the
camera faces the robot from the far side of the table, so image *down* is the robot's forward
(+x) and image *right* is the robot's left (+y). The map from the table plane to the image
keeps orientation (a right-handed frame stays right-handed), so the side of a path relative to
its chord has the same sign in the image as on the table. Perspective makes a table step along x
look shorter in the image than the same step along y; :data:`ROW_OVER_COL` (about 0.8 near the
middle of the table) rescales image columns before a displacement is rounded to a compass word.

Evidence gates. The route is committed (a :class:`~memory.store.records.TrajectoryRecord` under
``trajectory/route``) only when it is *verified*: every step has the length and angle of one
lattice step (cue route) or a clear side and circling sense (arc route), and the first live
frame confirms the start node (its lit cue, or the tip over the first dwell place). The progress
index advances only on evidence of reaching the next node: a new red cue at the expected node
(cue route); on an arc route whose video carries joint states, the live hand (forward kinematics
of the arm's own joint readings) within ``arrive_m`` of where the demonstration's hand dwelt at
that node (the stick's tip passes behind the obstacles it circles, and a tip found on another part
of the arm can jump onto a node mid-move); without joint states, after the tip has left the
previous node, the tip on the next node (or near it with the arm at rest), seen on two rendered
frames running. A clear cue at a node off the route, on two rendered frames running, marks the
route lost. Unverified or lost: the gate abstains and
the proposal passes through.

The gate (read kind ``route_fill``): the direction words of the proposal (compass words, sides,
circling senses) are replaced, in order, by the words of the next segment; a proposal whose
number of direction words differs from the segment's is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from memory.contract.frames import Frame
from memory.language.needs import Need
from memory.store.records import Source, TrajectoryRecord
from memory.language.spec import MemorySpec, ReadKind
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import hsv
from memory.robot.arm_view import panda_tcp
from subgoals.edits import SetDirections, SubgoalEdit
from subgoals.record_names import RecordName
from memory.tools.groups import ToolGroup
from memory.perception.morphology import dilate

__all__ = [
    "ROW_OVER_COL",
    "RouteReader",
    "RouteThresholds",
    "compass_word",
    "find_cues",
    "robot_mask",
    "segment_sense",
    "tip_of",
]

KEY = "trajectory/route"

_FRESH_FRAMES = 3
"""A cue is newly lit when no cue was within ``node_px`` of it in this many frames before (a disc the
stick hides for a frame or two is the same lighting)."""
NAME = RecordName.DEMONSTRATED_ROUTE

ROW_OVER_COL = 0.8
"""Image rows per image column for the same table distance along x vs y, near the table centre (front camera)."""

# 8 compass words by the angle of (forward, left) in the robot frame, counterclockwise from forward
_COMPASS = ("forward", "forward-left", "left", "backward-left", "backward", "backward-right", "right", "forward-right")


def compass_word(d_row: float, d_col: float, row_over_col: float = ROW_OVER_COL) -> tuple[str, float]:
    """The compass word of an image displacement and its angular error (degrees) from the word's centre
    (image columns rescaled by ``row_over_col``, :data:`ROW_OVER_COL` by default)."""
    fwd, left = float(d_row), float(d_col) * row_over_col
    ang = np.degrees(np.arctan2(left, fwd)) % 360.0
    k = int(np.round(ang / 45.0)) % 8
    err = abs(((ang - 45.0 * k) + 180.0) % 360.0 - 180.0)
    return _COMPASS[k], float(err)


# ----------------------------------------------------------------------------- red cues


def cue_mask(rgb: np.ndarray) -> np.ndarray:
    """Pure-red pixels of a lit node (the red disc is patterned, so it is merged by :func:`find_cues`)."""
    r, g, b = (rgb[..., i].astype(np.int16) for i in range(3))
    return (r > 120) & (g < 70) & (b < 70) & (r - g > 70)


def find_cues(rgb: np.ndarray, min_area: int = 10) -> list[tuple[float, float, int]]:
    """Lit nodes as ``(row, col, area)``: red pixels merged over 2-pixel gaps, areas of at least ``min_area``."""
    m = cue_mask(rgb)
    if not m.any():
        return []
    lab, n = ndimage.label(dilate(m, iterations=2, neighbours=4))
    out = []
    for i, sl in enumerate(ndimage.find_objects(lab), 1):
        sub = (lab[sl] == i) & m[sl]
        ys, xs = np.nonzero(sub)
        if len(ys) >= min_area:
            out.append((float(ys.mean() + sl[0].start), float(xs.mean() + sl[1].start), int(len(ys))))
    return out


def _near(p, pts, radius: float) -> bool:
    return any(np.hypot(p[0] - q[0], p[1] - q[1]) <= radius for q in pts)


# ----------------------------------------------------------------------------- stick tip


def robot_mask(rgb: np.ndarray) -> np.ndarray:
    """Bright unsaturated pixels: the robot and its stick (also any static gray item, removed later)."""
    _, s, v = hsv(rgb)
    return (s < 0.18) & (v > 110)


def tip_of(mask: np.ndarray, min_area: int = 25) -> tuple[float, float] | None:
    """The lowest point (largest row) of the moving robot pixels: the stick tip, hanging below the arm.

    The thin stick can come apart from the arm in the mask (where it crosses scenery of the same
    gray), so every region of at least ``min_area`` pixels competes; the one reaching lowest wins.
    """
    lab, n = ndimage.label(mask)
    if n == 0:
        return None
    best = None
    for i, sl in enumerate(ndimage.find_objects(lab), 1):
        sub = lab[sl] == i
        if sub.sum() < min_area:
            continue
        ys, xs = np.nonzero(sub)
        bottom = int(ys.max())
        if best is None or bottom + sl[0].start > best[0]:
            best = (bottom + sl[0].start, float(xs[ys >= bottom - 1].mean() + sl[1].start))
    return None if best is None else (float(best[0]), best[1])


def segment_sense(path: np.ndarray, a, b, deadband: float = 2.0) -> tuple[float, float]:
    """Mean side of ``path`` (rows, cols) relative to the chord a->b: > 0 on its left (clockwise), and the largest offset."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    norm = float(np.hypot(*d))
    if norm < 1e-6 or len(path) == 0:
        return 0.0, 0.0
    rel = np.asarray(path, float) - a
    # (row, col) = (forward, left): the 2-D cross product d x rel, normalised to pixels off the chord
    cross = (d[0] * rel[:, 1] - d[1] * rel[:, 0]) / norm
    big = cross[np.abs(cross) > deadband]
    if len(big) == 0:
        return 0.0, float(np.abs(cross).max())
    return float(np.sign(big).mean()), float(np.abs(cross).max())


def _median3(track: list, k: int) -> tuple[float, float] | None:
    """The component-wise median of the tip at frames k-1, k, k+1 (those that exist and were found)."""
    pts = [p for p in track[max(0, k - 1):k + 2] if p is not None]
    if track[k] is None or not pts:
        return None
    return float(np.median([p[0] for p in pts])), float(np.median([p[1] for p in pts]))


def _pauses(motion: list[float], level: float, half_window: int = 4, margin: int = 3) -> list[int]:
    """Frames where the arm is nearly still between two motions: local minima of ``motion`` at or
    below ``level``, away from the first and last ``margin`` frames."""
    out: list[int] = []
    for k in range(margin, len(motion) - margin):
        window = motion[max(1, k - half_window):k + half_window + 1]
        if motion[k] <= level and motion[k] == min(window) and (not out or k - out[-1] > half_window):
            out.append(k)
    return out


# ----------------------------------------------------------------------------- the tool


@dataclass(frozen=True)
class RouteThresholds:
    """The numbers :class:`RouteReader` parses and follows a demonstrated route with (pixels in the
    256x256 frame, joint angles in rad)."""

    node_px: float = 7.0
    """A red cue within this of a known one is the same node (the patterned red disc's merged centre
    moves by a few pixels between frames); also how close the tip must come to the start node."""
    arrive_px: float = 3.5
    """The tip this close to the next node, and near it on the rendered frame before too, has reached it
    (arc route): one sighting may still be a few centimetres short, and late is safe, early is not."""
    near_px: float = 6.0
    """The tip this close to the next node is near it: with the arm at rest, that is arrival too."""
    arrive_m: float = 0.01
    """The hand (its joints' forward kinematics) this close (m, on the table plane) to where the
    demonstration's hand dwelt at the next node has reached it (arc route with joint states). The
    demonstrated and the live moves end on the same target within 2 mm; the env counts a move done
    within 0.03 m, so a third of that is late enough never to cut a move short."""
    leave_px: float = 12.0
    """The tip this far from the previous node has left it (a pause farther off is not a node)."""
    max_angle_err: float = 20.0
    """Largest angle (degrees) between a cue step and its compass word's centre; the sectors are 45
    degrees wide, so a step off by more than this is not a clean lattice step."""
    step_px: tuple[float, float] = (10.0, 45.0)
    """Shortest and longest length (px, columns rescaled) of one lattice step between cues."""
    min_side_px: float = 12.0
    """Smallest sideways (column) displacement of an arc segment whose side is read."""
    min_bulge_px: float = 5.0
    """Smallest offset of the tip's path from the chord that makes an arc (its circling sense)."""
    min_sense: float = 0.6
    """Smallest mean side (-1..1) of the path relative to the chord that makes a clear circling sense."""
    arc_bulge_m: float = 0.04
    """Smallest offset (m, robot frame) of the hand's path from a move's chord that makes it an arc
    around an obstacle, named by side and circling sense (measured: 0.08-0.10 m around a stick, under
    0.003 m on a straight lattice step, on both backends)."""
    arc_deadband_m: float = 0.01
    """Offsets of the hand's path from the chord below this (m) are on it: they count to no side."""
    still_rad: float = 3e-3
    """Largest per-frame joint change (rad) at which the arm counts as at rest (a pause at a node)."""
    row_over_col: float = ROW_OVER_COL
    """Image rows per image column for the same table distance (front camera perspective, near the
    table centre): cue steps are measured and named with columns rescaled by it."""
    off_px: int = 3
    """Half-size (px) of the patch at a node compared with its unlit look to see it unlit..."""
    off_share: float = 0.8
    """...which it is when at least this share of the patch matches that look (a lit node matched
    about 0.4 of it, one the arm covered about 0.5, one seen unlit all of it)."""


@register_tool(order=120)
class RouteReader(Tool):
    """Parses the demonstrated route, tracks progress along it live, and fills the route slot of proposals."""

    name = "route_reader"
    render = RenderNeed(stride=4, video=True, video_stride=1)  # every video frame: at stride 2 a short move is missed (benchmarks/video_stride.md)
    serves = frozenset({Need.DEMO_ROUTE})
    group = ToolGroup.ROUTE
    gate_kind = ReadKind.ROUTE_FILL

    def __init__(
        self,
        node_px: float = 7.0,
        arrive_px: float = 3.5,
        near_px: float = 6.0,
        arrive_m: float = 0.01,
        leave_px: float = 12.0,
        max_angle_err: float = 20.0,
        step_px: tuple[float, float] = (10.0, 45.0),
        min_side_px: float = 12.0,
        min_bulge_px: float = 5.0,
        min_sense: float = 0.6,
        still_rad: float = 3e-3,
    ):
        self.config = RouteThresholds(
            node_px=node_px, arrive_px=arrive_px, near_px=near_px, arrive_m=arrive_m, leave_px=leave_px, max_angle_err=max_angle_err,
            step_px=tuple(step_px), min_side_px=min_side_px, min_bulge_px=min_bulge_px, min_sense=min_sense,
            still_rad=still_rad,
        )

    def thresholds(self) -> tuple[RouteThresholds]:
        return (self.config,)

    # ------------------------------------------------------------------ episode

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        self.kind: str | None = None  # "cue" | "arc"
        self.segments: tuple[str, ...] = ()
        self.nodes: list[tuple[float, float]] = []  # pixel of every node, start first
        self.node_xy: list[tuple[float, float]] = []  # the hand's table-plane position at every node (m, arm base frame), when the video carries joint states
        self.index = 0
        self.verified = False
        self.lost = False
        self.reason = "no demonstration seen"
        # demonstration evidence
        self._demo_frames = 0
        self._first_red: list[tuple[float, float, int]] | None = None
        self._prev_cues: list[tuple[float, float, int]] = []
        self._cue_events: list[tuple[int, float, float]] = []  # (demo frame, row, col)
        self._sightings: list[tuple[int, float, float]] = []  # every newly lit cue (demo frame, row, col)
        self._recent_cues: list[list[tuple[float, float, int]]] = []  # cues of the last few demo frames
        self._cue_frames: list[list[tuple[float, float, int]]] = []  # the cues of every demo frame, until parsed
        self._demo_joints: list = []  # the arm's joint states of the demonstration frames
        self._demo_rgb: list[np.ndarray] = []  # read-only views of the demonstration frames, until parsed
        self._static: np.ndarray | None = None  # scenery of the robot's colours (gray rings, gray obstacles)
        self._background: np.ndarray | None = None  # the scene without the robot (per-pixel median)
        self._track: list[tuple[float, float] | None] = []
        # live evidence
        self._live_started = False
        self._live_prev: list[tuple[float, float, int]] = []
        self._left_node = False
        self._last_q: np.ndarray | None = None
        self._tip_now: tuple[float, float] | None = None
        self._was_near = False
        self._odd: list[tuple[float, float]] = []  # unexpected cues of the previous rendered frame
        self.advances: list[int] = []
        self.unexpected = 0
        self._latched: tuple[str, int, str | None] | None = None

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active:
            return
        if frame.source == "video":
            if frame.rgb is not None:
                self._observe_demo(frame.rgb)
                self._demo_joints.append(frame.joint_state)
            return
        if not self._live_started:
            if frame.rgb is None:
                return
            self._live_started = True
            self._parse(frame, store)
            return
        if self.verified and not self.lost:
            self._observe_live(frame, store)

    def _observe_live(self, frame: Frame, store: MemoryStore) -> None:
        if self.kind == "arc":
            self._observe_arc(frame, store)
        elif frame.rgb is not None:
            self._observe_cues(frame, store)

    # ------------------------------------------------------------------ demonstration

    def _observe_demo(self, rgb: np.ndarray) -> None:
        self._demo_frames += 1
        cues = find_cues(rgb)
        if self._first_red is None:
            # red already present before anything was touched: scenery, unless it goes out during the
            # demonstration (a start node lit before the first frame and cleared, as the official
            # envs record it: see _cleared_first_red)
            self._first_red = cues
        else:
            recent = [q for f in self._recent_cues for q in f]
            for r, c, _area in cues:
                if not _near((r, c), recent, self.config.node_px):  # off for the last few frames: newly lit
                    self._sightings.append((self._demo_frames - 1, r, c))
        self._recent_cues = [*self._recent_cues[-(_FRESH_FRAMES - 1):], cues]
        self._cue_frames.append(cues)
        self._prev_cues = cues
        self._demo_rgb.append(rgb)

    def _resolve_cue_events(self) -> None:
        """Cue events from the newly lit sightings: away from scenery, not the node of the event
        before (the same disc flickering as the stick half hides it), and not a node that was lit,
        then covered, and is seen again still lit (:meth:`_stayed_lit`: a light stays on for a while
        after the touch, and the arm moving on passes over it). A node lit again after it was seen
        unlit is a return to it (a route may pass a node twice)."""
        scenery, cleared = self._cleared_first_red()
        last = cleared[0] if len(cleared) == 1 else None
        events = []
        for k, r, c in self._sightings:
            if _near((r, c), scenery, self.config.node_px):
                continue
            if last is not None and _near((r, c), [last], self.config.node_px):
                continue
            if self._stayed_lit(k, (r, c)):
                continue
            events.append((k, r, c))
            last = (r, c)
        self._cue_events = events

    def _stayed_lit(self, k: int, p: tuple[float, float]) -> bool:
        """Whether the cue sighted at ``p`` in demonstration frame ``k`` is a lighting seen before: lit
        in an earlier frame and, in every frame since, either lit or covered; never seen unlit (the
        patch at ``p`` as it looks in the frames where no cue is lit there: mostly the node unlit,
        now and then the arm over it, so their median is the unlit node)."""
        cues_at = [_near(p, [q[:2] for q in cues], self.config.node_px) for cues in self._cue_frames]
        before = [i for i in range(min(k, len(cues_at))) if cues_at[i]]
        unlit = [j for j, on in enumerate(cues_at) if not on]
        if not before or len(unlit) < 5:
            return False  # first lit here, or too few unlit views to tell covered from unlit
        h, w = self._demo_rgb[0].shape[:2]
        r = self.config.off_px
        y, x = int(round(p[0])), int(round(p[1]))
        ys, xs = slice(max(0, y - r), min(h, y + r + 1)), slice(max(0, x - r), min(w, x + r + 1))
        ref = np.median(np.stack([self._demo_rgb[j][ys, xs] for j in unlit[:: max(1, len(unlit) // 60)]]), axis=0)
        for j in range(before[-1] + 1, k):
            same = np.abs(self._demo_rgb[j][ys, xs].astype(np.int16) - ref.astype(np.int16)).max(axis=-1) < 25
            if float(same.mean()) >= self.config.off_share:
                return False
        return True

    def _tip(self, rgb: np.ndarray, mask: np.ndarray | None = None) -> tuple[float, float] | None:
        m = robot_mask(rgb) if mask is None else mask.copy()
        if self._static is not None and self._background is not None:
            # scenery of the robot's colours is not the robot, unless something else covers it now
            same = np.abs(rgb.astype(np.int16) - self._background).max(axis=-1) < 25
            m &= ~(self._static & same)
        m[:8] = False  # the top border: the arm's base, always there
        return tip_of(m)

    # ------------------------------------------------------------------ parsing (at the first live frame)

    def _parse(self, frame: Frame, store: MemoryStore) -> None:
        if self._demo_frames == 0:
            self.reason = "no demonstration frames"
            return
        self._resolve_cue_events()
        if self._cue_events:
            self.kind = "cue"
            self._parse_cues(frame)
            self._live_prev = find_cues(frame.rgb)
        else:
            self.kind = "arc"
            self._parse_arcs(frame)
        self._demo_rgb, self._demo_joints, self._cue_frames = [], [], []  # the demonstration is read; keep only what the route needs
        if self.verified:
            self.commit(store, KEY, TrajectoryRecord(NAME, self.segments, 0, Source.DEMONSTRATION), step=frame.step,
                        reason=f"{self.kind} route verified: {self.reason}", accepted=True)

    def _cleared_first_red(self) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
        """(red of the first frame still lit in the last: scenery; red of the first frame gone by the
        last: a node lit before the demonstration began and cleared during it)."""
        last = self._prev_cues  # the cues of the last demonstration frame
        first = [q[:2] for q in self._first_red or []]
        cleared = [p for p in first if not _near(p, last, self.config.node_px)]
        return [p for p in first if p not in cleared], cleared

    def _parse_cues(self, frame: Frame) -> None:
        cues = [(r, c) for _, r, c in self._cue_events]
        live = [(r, c) for r, c, _ in find_cues(frame.rgb)]
        scenery, cleared = self._cleared_first_red()
        # the start node is lit again in the first live frame (the hidden return to the start); it
        # may also have been lit in the first demonstration frame and cleared since (not scenery)
        starts = [p for p in live if not _near(p, cues, self.config.node_px) and not _near(p, scenery, self.config.node_px)]
        if not starts and len(cleared) == 1:
            # no node lit at the live start (the stick standing on it hides it): the one node lit
            # when the demonstration began is where the route starts
            starts = list(cleared)
        tip_start = not starts and not cleared
        if tip_start:
            # nor was one lit then: the stick stands where the route starts (the hidden return); good
            # enough to count an arc route's moves (their sides come from the joints), not to name
            # a lattice step by its direction
            tip = self._tip(frame.rgb)
            starts = [] if tip is None else [tip]
        if len(starts) != 1:
            self.reason = f"{len(starts)} lit start nodes in the first live frame (need exactly one)"
            return
        if cleared and not _near(starts[0], cleared, self.config.node_px):
            self.reason = (f"the live start node {tuple(round(v) for v in starts[0])} is not the node lit at the "
                           f"demonstration's start {tuple(round(v) for v in cleared[0])}")
            return
        nodes = [starts[0], *cues]
        arcs = self._cue_arcs(nodes)
        if arcs is not None:
            self.nodes, self.segments = nodes, arcs
            self.verified = True
            self.reason = f"{len(cues)} cue events + the lit start node -> {len(arcs)} arcs around obstacles"
            return
        if tip_start:
            self.reason = "no lit start node in the first live frame, and a lattice route needs its position"
            return
        words = []
        for a, b in zip(nodes[:-1], nodes[1:]):
            dr, dc = b[0] - a[0], b[1] - a[1]
            length = float(np.hypot(dr, dc * self.config.row_over_col))
            word, err = compass_word(dr, dc, self.config.row_over_col)
            if err > self.config.max_angle_err or not self.config.step_px[0] <= length <= self.config.step_px[1]:
                self.reason = f"step {a}->{b} is not one lattice step (length {length:.1f}px, angle error {err:.0f} deg)"
                return
            words.append(word)
        self.nodes, self.segments = nodes, tuple(words)
        self.verified = True
        self.reason = f"{len(cues)} cue events + the lit start node -> {len(words)} segments"

    def _arm_moves(self, times: list[int]) -> list[tuple[str, float, float]] | None:
        """Each move between two demonstration frames of ``times``, read from the arm's own joint
        states: (side, mean side of the hand's path off the chord -1..1, its largest offset in m),
        in the robot's base frame by forward kinematics (a Panda's public kinematic parameters, no
        scene knowledge). ``None`` without joint states on every frame.

        The hand's path on the table is what the route is: the picture of it is foreshortened and
        the stick's tip is hidden behind the obstacles it circles, the joints are not.
        """
        joints = self._demo_joints
        if len(joints) != self._demo_frames or not joints or any(q is None for q in joints):
            return None
        xy = np.array([panda_tcp(np.asarray(q, float)[:7])[:2] for q in joints])
        out = []
        for a, b in zip(times[:-1], times[1:]):
            d = xy[b] - xy[a]
            norm = float(np.hypot(*d))
            if norm < 1e-6:
                out.append(("", 0.0, 0.0))
                continue
            rel = xy[a:b + 1] - xy[a]
            cross = (d[0] * rel[:, 1] - d[1] * rel[:, 0]) / norm  # (x forward, y left): > 0 left of travel
            big = cross[np.abs(cross) > self.config.arc_deadband_m]
            sense = float(np.sign(big).mean()) if len(big) else 0.0
            out.append(("left" if d[1] > 0 else "right", sense, float(np.abs(cross).max())))
        return out

    def _cue_arcs(self, nodes: list[tuple[float, float]]) -> tuple[str, ...] | None:
        """Side and circling sense of every move between cue-lit nodes, when the hand's path (joint
        states) bulges clearly off every move's chord (it went around something); ``None`` when a
        move is straight (a lattice step, named by its compass word) or there are no joint states.

        The official envs light the nodes of an obstacle route as they light a pattern's, but the moves between them
        circle upright sticks: the route is the arcs, and the cues only say where the nodes are.
        """
        moves = self._arm_moves([0] + [k for k, _, _ in self._cue_events])
        if moves is None or len(moves) != len(nodes) - 1:
            return None
        if not all(bulge >= self.config.arc_bulge_m and abs(sense) >= self.config.min_sense for _, sense, bulge in moves):
            return None
        return tuple(f"{side} {'clockwise' if sense > 0 else 'counterclockwise'}" for side, sense, _ in moves)

    def _tip_track(self) -> list[tuple[float, float] | None]:
        """The stick tip in every demonstration frame (one-frame glitches removed); sets the scenery
        masks the live tip is read against."""
        frames = self._demo_rgb
        masks = [robot_mask(f) for f in frames]
        # unsaturated pixels present in nearly every frame are scenery (gray rings, gray obstacles)
        self._static = np.mean(masks, axis=0) > 0.85
        self._background = np.median(np.stack(frames[:: max(1, len(frames) // 60)]), axis=0).astype(np.int16)
        raw = [self._tip(f, m) for f, m in zip(frames, masks)]
        self._track = [_median3(raw, k) for k in range(len(raw))]
        return self._track

    def _parse_arcs(self, frame: Frame) -> None:
        frames = self._demo_rgb
        track = self._tip_track()
        # the arm pauses between moves: its joints nearly stop (the video carries the joint states);
        # without them, the picture nearly stops changing
        joints = self._demo_joints
        if len(joints) == len(frames) and all(q is not None for q in joints):
            q = np.asarray([np.asarray(j, float)[:7] for j in joints])
            motion = [0.0] + list(np.abs(np.diff(q, axis=0)).max(axis=1))
            pauses = _pauses(motion, level=self.config.still_rad)
        else:
            motion = [0.0] + [float((np.abs(b.astype(np.int16) - a).max(axis=-1) > 20).sum()) for a, b in zip(frames[:-1], frames[1:])]
            pauses = _pauses(motion, level=0.15 * float(np.median(motion[1:])))
        last = len(track) - 1
        runs = [(0, 1)] + [(k - 1, k + 2) for k in pauses] + [(last, last + 1)]
        nodes: list = []
        kept: list[tuple[int, int]] = []
        for i, j in runs:
            pts = np.array([p for p in track[i:j] if p is not None], float)
            node = tuple(np.median(pts, axis=0)) if len(pts) else None
            if kept and node is not None and nodes[-1] is not None:
                between = np.array([p for p in track[kept[-1][1]:i] if p is not None], float).reshape(-1, 2)
                far = np.hypot(*(between - np.asarray(nodes[-1])).T).max() if len(between) else 0.0
                if np.hypot(node[0] - nodes[-1][0], node[1] - nodes[-1][1]) <= self.config.node_px and far <= self.config.leave_px:
                    kept[-1] = (kept[-1][0], j)  # a pause inside one dwell: the same node
                    continue
            nodes.append(node)
            kept.append((i, j))
        runs = kept
        if any(n is None for n in nodes) or len(nodes) < 2:
            self.reason = "tip not found at a dwell"
            return
        # the hand's path from the joint states where the video carries them (robot frame, the tip
        # hidden behind an obstacle does not matter); else the tip's path in the picture
        dwells = [(i + j - 1) // 2 for i, j in runs]
        moves = self._arm_moves(dwells)
        if moves is not None:
            for k, (_side, sense, bulge) in enumerate(moves):
                if abs(sense) < self.config.min_sense or bulge < self.config.arc_bulge_m:
                    self.reason = f"move {k}: unclear circling sense of the hand (mean side {sense:+.2f}, bulge {bulge:.3f} m)"
                    return
            words = [f"{side} {'clockwise' if sense > 0 else 'counterclockwise'}" for side, sense, _ in moves]
        else:
            words = self._tip_arcs(nodes, runs, track)
            if words is None:
                return
        tip = self._tip(frame.rgb)
        if tip is None or np.hypot(tip[0] - nodes[0][0], tip[1] - nodes[0][1]) > self.config.node_px:
            self.reason = f"the live tip {tip} is not over the demonstrated start {tuple(round(v, 1) for v in nodes[0])}"
            return
        self.nodes, self.segments = [tuple(map(float, n)) for n in nodes], tuple(words)
        if moves is not None:
            self.node_xy = [tuple(map(float, panda_tcp(np.asarray(self._demo_joints[t], float)[:7])[:2])) for t in dwells]
        self.verified = True
        self.reason = f"{len(runs)} dwell places -> {len(words)} segments; live start confirmed"

    def _tip_arcs(self, nodes, runs, track) -> list[str] | None:
        """Side and circling sense of each move from the stick tip's path in the picture (a video
        without joint states); ``None`` (with the reason set) when a move is unclear."""
        words = []
        for k in range(len(nodes) - 1):
            a, b = nodes[k], nodes[k + 1]
            dc = b[1] - a[1]
            if abs(dc) < self.config.min_side_px:
                self.reason = f"move {k} goes {dc:.1f}px sideways: no clear side"
                return None
            path = np.array([p for p in track[runs[k][1]:runs[k + 1][0]] if p is not None], float).reshape(-1, 2)
            sense, bulge = segment_sense(path, a, b)
            if abs(sense) < self.config.min_sense or bulge < self.config.min_bulge_px:
                self.reason = f"move {k}: unclear circling sense (mean side {sense:+.2f}, bulge {bulge:.1f}px)"
                return None
            side = "left" if dc > 0 else "right"  # image right = robot left
            words.append(f"{side} {'clockwise' if sense > 0 else 'counterclockwise'}")
        return words

    # ------------------------------------------------------------------ live progress

    def _observe_cues(self, frame: Frame, store: MemoryStore) -> None:
        if self.index >= len(self.segments):
            return
        nxt = self.nodes[self.index + 1]
        cues = find_cues(frame.rgb)
        visited = self.nodes[: self.index + 1]
        # a lit node the stick half hides can look displaced: only a clear cue well away from every
        # node of the route so far, still there on the next rendered frame, is a wrong touch
        if self._odd and any(area >= 15 and _near((r, c), self._odd, self.config.node_px) for r, c, area in cues):
            self.unexpected += 1
            self.lost = True
            self.reason = f"a cue lit at {tuple(round(v) for v in self._odd[0])}, not the next node: route position lost"
            return
        odd = []
        for r, c, area in cues:
            if _near((r, c), self._live_prev, self.config.node_px):
                continue  # already lit in the previous rendered frame
            if np.hypot(r - nxt[0], c - nxt[1]) <= self.config.node_px:
                self._advance(frame, store, f"cue lit at the next node ({r:.0f}, {c:.0f})")
                odd = []
                break
            if area >= 15 and not _near((r, c), visited, 1.6 * self.config.node_px) and not _near((r, c), self._live_prev, 1.6 * self.config.node_px):
                odd.append((r, c))
        self._odd = odd
        self._live_prev = cues

    def _observe_arc(self, frame: Frame, store: MemoryStore) -> None:
        if self.index >= len(self.segments):
            return
        if self.node_xy:
            self._arrive_by_joints(frame, store)
            return
        nxt = self.nodes[self.index + 1]
        if frame.joint_state is not None:
            q = np.asarray(frame.joint_state, float)[:7]
            still = self._last_q is not None and float(np.abs(q - self._last_q).max()) <= self.config.still_rad
            self._last_q = q
            if still and self._tip_now is not None and self._left_node and _near(self._tip_now, [nxt], self.config.near_px):
                # the arm came to rest near the next node: it has arrived (late, but certain)
                self._left_node, self._was_near = False, False
                self._advance(frame, store, f"arm at rest by the next node ({self._tip_now[0]:.0f}, {self._tip_now[1]:.0f})")
                return
        if frame.rgb is None:
            return
        tip = self._tip(frame.rgb)
        self._tip_now = tip
        if tip is None:
            return
        here = self.nodes[self.index]
        if np.hypot(tip[0] - here[0], tip[1] - here[1]) > self.config.leave_px:
            self._left_node = True
        if not self._left_node:
            return
        # on the node: the tip settles within a pixel or two of where the demonstration paused. One
        # sighting is not enough (a tip near the node may still be a few centimetres short, and
        # switching the subgoal then cuts the move short): it must have been near on the rendered
        # frame before as well. Late is safe here, early is not.
        d = float(np.hypot(tip[0] - nxt[0], tip[1] - nxt[1]))
        was_near, self._was_near = self._was_near, d <= self.config.near_px
        if d <= self.config.arrive_px and was_near:
            self._left_node, self._was_near = False, False
            self._advance(frame, store, f"tip arrived at the next node ({tip[0]:.0f}, {tip[1]:.0f})")

    def _arrive_by_joints(self, frame: Frame, store: MemoryStore) -> None:
        """Arrival read from the arm's own joints: the hand over the table where the demonstration's
        hand dwelt at the next node. The stick's tip in the picture passes behind the obstacles it
        circles, and a tip found on another part of the arm for a frame or two (one was seen to jump
        13 px onto the next node in 4 steps) would switch the subgoal mid-move; the joints do not go
        behind anything."""
        if frame.joint_state is None:
            return
        hand = panda_tcp(np.asarray(frame.joint_state, float)[:7])[:2]
        nxt = self.node_xy[self.index + 1]
        d = float(np.hypot(hand[0] - nxt[0], hand[1] - nxt[1]))
        if d <= self.config.arrive_m:
            self._advance(frame, store, f"hand over the next node by the joints ({100 * d:.1f} cm from the demonstrated dwell)")

    def _advance(self, frame: Frame, store: MemoryStore, why: str) -> None:
        self.index += 1
        self.advances.append(frame.step)
        self.commit(store, KEY, TrajectoryRecord(NAME, self.segments, self.index, Source.DEMONSTRATION),
                    step=frame.step, reason=why, accepted=True)

    # ------------------------------------------------------------------ gate

    @property
    def next_segment(self) -> str | None:
        if not self.verified or self.lost or self.index >= len(self.segments):
            return None
        return self.segments[self.index]

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active:
            return None
        key = (proposed, self.index)
        if self._latched is not None and self._latched[:2] == key and not self.lost:
            return self._latched[2]
        out = self._fill(proposed)
        self._latched = (proposed, self.index, out)
        return out

    def _fill(self, proposed: str) -> SubgoalEdit | None:
        seg = self.next_segment
        if seg is None:
            return None
        edit = SetDirections(tuple(seg.split()))
        if not edit.applies_to(proposed):
            return None  # not a route step of this shape: leave it alone
        return edit

    def diagnostics(self) -> dict:
        return {
            "kind": self.kind,
            "verified": self.verified,
            "lost": self.lost,
            "segments": list(self.segments),
            "index": self.index,
            "arrival": "joints" if self.node_xy else "tip",
            "cue_events": len(self._cue_events),
            "advances": self.advances,
            "unexpected_cues": self.unexpected,
            "reason": self.reason,
        }

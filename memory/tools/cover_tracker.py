"""Following bound containers when they move: association plus Lucas-Kanade optical flow.

A cover binding (:mod:`memory.tools.cover_binding`) says *which* container hides a cube; when
look-alike containers trade places, only following that container frame by frame keeps the
binding true. Each bound container gets a :class:`CoverTrack` fed with two independent cues:

* **flow** (identity continuity): points on the container in the previous frame (its corners and a
  3-px grid over its own connected pixels) are followed into the current frame with pyramidal
  Lucas-Kanade (``cv2.calcOpticalFlowPyrLK``, forward-backward checked); their median displacement,
  weighted toward the track's centre, predicts where the container went. The flow cue is a tool
  of its own (:class:`OpticalFlowCue`, group ``identity``) so that the identity ablation removes
  it and leaves association alone.
* **association**: the container is re-detected near the prediction
  (:meth:`~memory.tools.cover_binding.ContainerAppearance.detect`: a lone container blob's
  centroid, or the palette's mean-shift mode), accepted only within a jump limit that grows with
  the steps elapsed since the last frame.

Two containers of a swap that overlap in the image (one behind the other) form one connected
region, and the rear one's track sits near the boundary. Their points are then flowed together and,
when they move two ways, split by motion (:func:`split_motions`); each track follows its own group,
and the region's mode, pulled toward whichever shows more of itself, does not move it.

Lifecycle of the record: the cues agree -> ``verified`` (position updated); they disagree ->
``uncertain`` (identity kept, position from flow; access abstains); no container where the cues
point -> after ``patience`` frames the track is *lost* (``uncertain``) and widens its search radius
on each following frame, at most three times (``recovery_steps``), never onto a container another
track holds; a container found again -> ``reacquired``.

Lift-off: when the cube a container hides comes into view where that container last stood still,
the robot has lifted the container off it; the track returns to that place and holds there (the
binding is as true as ever, the container is in the robot's hand) until a container stands on the
spot again. Following the lifted container instead would walk the record onto whatever neighbour
the lifted container passes in the image.

Occlusion is not disagreement. When the arm stands over a container (fewer container pixels than
usual with grayish non-container pixels in their place, the container's pixels merged into a
region far larger than itself, or most flow points failing the round trip) while the spot is not
bare table, the track follows its own flow if it has any, otherwise holds, and its status does not
change: a container being grasped, or one the arm sweeps over while pressing a button, stays
readable. In a scene where no container has yet been seen moving on its own (a container
travelling, flow and association agreeing, with the arm still or its hand far), a container half
hidden by something grayish while the hand works close by does not follow its flow either: what
is left of it and the hand's edge flow together, and flow and association would agree on the
hand's motion and walk the record onto a neighbour. Once a container has moved on its own (the
scene swaps), a half hidden one may be moving too, and it follows its flow as before.

The arm's own kinematics decide the plainest occlusion: while the arm moves, a container within
``arm_px`` of its projected skeleton (joint angles through forward kinematics and the front camera's
calibration, :mod:`memory.robot.arm_view`; the radius grows as a link comes nearer the camera), or, while the hand carries something lifted (fingers
commanded closed and, where their opening is logged, held apart; tool-centre point above ``carry_z``), within ``hand_px`` of the hand (a container in
the grip hangs there and looks exactly like its neighbours), holds where it is. A moving arm sweeping over a container is the
one motion the pixel cues mistake for the container's own (its gray faces match the container
palette, and flow and association then agree on the arm); containers the robot carries are covered
by the lift-off rule. Swaps can still happen while the arm travels nearby (pressing the buttons
before the pick, with more swaps than the arm's reach takes to finish): under the arm, a track moves
only on the plainest sighting of its own container (:meth:`CoverFollowTool._follow_under_arm`: a lone
blob of its size where its features flowed, not merged with anything), never while the hand carries.

Render stride: a swap moves a container 50-60 px in 50 steps with smoothstep timing. Measured on
the demonstrations (every step rendered), tracked containers move at most about 4 px per step and
12 px per 4 steps: at the default 4-step live stride that is inside one Lucas-Kanade window
(21 px, 3 pyramid levels) and the jump limit (5 + 3 px per step). Replaying live episodes at
stride 2 and 4 gave the same bindings, so the followers declare the default stride (4) and no
finer one (``render_stride``, read by ``experiments/loop/render_schedule.py``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import cv2
import numpy as np
from scipy import ndimage

from memory.robot.arm_view import arm_covers, hand_pixel, panda_tcp
from memory.contract.frames import Frame
from memory.robot.signals import gripper_closed, gripper_width
from memory.events.lift import LIFT_LIVE
from memory.language.needs import Need
from memory.store.records import EntityRecord, EntityStatus, Source
from memory.language.spec import MemorySpec
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import find_blobs
from memory.tools.cover_binding import COVER_ROLE, ContainerAppearance, to_point
from memory.language.words import colour_of
from subgoals.record_names import cover_binding
from memory.tools.groups import ToolGroup

__all__ = ["CoverFollowThresholds", "CoverFollowTool", "CoverTrack", "FlowThresholds", "OpticalFlowCue", "lk_displacement", "lk_points", "split_motions"]

# store -> the flow cue active for that store's layer (absent when the identity group is ablated)
_FLOW_BY_STORE: "weakref.WeakKeyDictionary[MemoryStore, OpticalFlowCue]" = weakref.WeakKeyDictionary()

_LK = dict(winSize=(21, 21), maxLevel=3, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01))


def gray(rgb: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY)


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cum, 0.5 * cum[-1])])


def lk_points(prev_gray: np.ndarray, cur_gray: np.ndarray, points: np.ndarray, *, fb_max: float = 1.0) -> tuple[np.ndarray, np.ndarray] | None:
    """Each point's displacement ``(dy, dx)`` from ``prev_gray`` to ``cur_gray`` (pyramidal Lucas-Kanade),
    and which points survived the forward-backward check (round trip within ``fb_max`` px)."""
    p0 = np.ascontiguousarray(points[:, ::-1].reshape(-1, 1, 2).astype(np.float32))
    p1, st1, _ = cv2.calcOpticalFlowPyrLK(prev_gray, cur_gray, p0, None, **_LK)
    if p1 is None:
        return None
    p0r, st2, _ = cv2.calcOpticalFlowPyrLK(cur_gray, prev_gray, p1, None, **_LK)
    if p0r is None:
        return None
    fb = np.linalg.norm((p0 - p0r).reshape(-1, 2), axis=1)
    good = (st1.ravel() == 1) & (st2.ravel() == 1) & (fb <= fb_max)
    return (p1 - p0).reshape(-1, 2)[:, ::-1].astype(float), good


def lk_displacement(prev_gray: np.ndarray, cur_gray: np.ndarray, points: np.ndarray, *, fb_max: float = 1.0,
                    min_points: int = 3, centre=None, sigma: float = 6.0) -> tuple[np.ndarray, int] | None:
    """Median displacement ``(dy, dx)`` of ``points`` (``(N, 2)`` as y, x) from ``prev_gray`` to ``cur_gray``.

    Points are tracked forward and back; those whose round trip misses by more than ``fb_max``
    px are dropped. With ``centre``, the median is weighted by a Gaussian of each point's
    distance to it (points near the container's centre speak for it). ``None`` when fewer than
    ``min_points`` survive.
    """
    if points is None or len(points) < min_points:
        return None
    flowed = lk_points(prev_gray, cur_gray, points, fb_max=fb_max)
    if flowed is None:
        return None
    d, good = flowed
    if int(good.sum()) < min_points:
        return None
    d = d[good]
    if centre is None:
        w = np.ones(len(d))
    else:
        r2 = ((points[good] - np.asarray(centre, np.float32)) ** 2).sum(axis=1)
        w = np.exp(-r2 / (2 * sigma * sigma)) + 1e-6
    return np.array([_weighted_median(d[:, 0], w), _weighted_median(d[:, 1], w)]), int(good.sum())


def split_motions(points: np.ndarray, moves: np.ndarray, anchors: np.ndarray, *, min_gap: float = 3.0,
                  min_points: int = 3) -> np.ndarray | None:
    """Which of two containers each point belongs to, when the points of one connected region move two ways.

    ``points`` (``(N, 2)``, y x) moved by ``moves`` (``(N, 2)``); ``anchors`` (``(2, 2)``) are where the
    two containers stood. Two-means on the moves; when the two groups' median moves differ by at
    least ``min_gap`` px and each group has ``min_points`` points, each group goes to the container
    whose anchor lies nearer the group's points (the assignment with the smaller total distance from
    the anchors to the groups' centroids). Returns each point's container (0 or 1), or ``None`` when
    the region moves as one (nothing to split).
    """
    if len(points) < 2 * min_points:
        return None
    # seeds: the two moves farthest apart
    gaps = np.linalg.norm(moves[:, None, :] - moves[None, :, :], axis=2)
    i, j = np.unravel_index(int(np.argmax(gaps)), gaps.shape)
    if gaps[i, j] < min_gap:
        return None
    centres = np.array([moves[i], moves[j]], float)
    for _ in range(10):
        labels = np.argmin(np.linalg.norm(moves[:, None, :] - centres[None], axis=2), axis=1)
        if (labels == 0).sum() < min_points or (labels == 1).sum() < min_points:
            return None
        new = np.array([np.median(moves[labels == k], axis=0) for k in (0, 1)])
        if np.allclose(new, centres):
            break
        centres = new
    if float(np.linalg.norm(centres[0] - centres[1])) < min_gap:
        return None
    where = np.array([points[labels == k].mean(axis=0) for k in (0, 1)])
    keep = np.linalg.norm(where[0] - anchors[0]) + np.linalg.norm(where[1] - anchors[1])
    swap = np.linalg.norm(where[0] - anchors[1]) + np.linalg.norm(where[1] - anchors[0])
    return labels if keep <= swap else 1 - labels


@dataclass(frozen=True)
class FlowThresholds:
    """The numbers :class:`OpticalFlowCue` keeps frames with."""

    keep: int = 3
    """Grayscale frames kept for flow questions (the followers ask about the last few only)."""


@register_tool(order=70)
class OpticalFlowCue(Tool):
    """The identity-continuity cue: keeps the grayscale frames and answers flow questions.

    It writes nothing itself. While it is active in a layer, the cover followers of that layer
    ask it where a container's features went; remove its group (``identity``) and they follow
    by association alone.
    """

    name = "cover_flow"
    serves = frozenset({Need.COVER_BINDING})
    group = ToolGroup.IDENTITY

    def __init__(self, keep: int = 3) -> None:
        self.stride = 1
        self.render = RenderNeed(stride=None, video=False)  # reads whatever frames the followers get; needs none of its own
        self.config = FlowThresholds(keep=keep)
        self._active = False
        self._frames: dict[int, np.ndarray] = {}
        self.calls = 0
        self.answered = 0

    def thresholds(self) -> tuple:
        return (self.config,)

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self._frames = {}
        self.calls = self.answered = 0
        self.active = self._active = self.enabled_by(spec)  # only cover followers ask; without bindings there are none
        _FLOW_BY_STORE[store] = self

    def _remember(self, step: int, rgb: np.ndarray) -> np.ndarray:
        g = self._frames.get(step)
        if g is None:
            g = gray(rgb)
            self._frames[step] = g
            for old in sorted(self._frames)[: -self.config.keep]:
                del self._frames[old]
        return g

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if frame.rgb is not None and self._active:
            self._remember(frame.step, frame.rgb)

    def gray_at(self, step: int) -> np.ndarray | None:
        return self._frames.get(step)

    def displacement(self, prev_step: int, points: np.ndarray, frame: Frame, centre=None):
        """Median flow of ``points`` (defined in the frame at ``prev_step``) into ``frame``, weighted toward ``centre``."""
        self.calls += 1
        prev = self._frames.get(prev_step)
        if prev is None or frame.rgb is None:
            return None
        out = lk_displacement(prev, self._remember(frame.step, frame.rgb), points, centre=centre)
        self.answered += out is not None
        return out

    def point_flow(self, prev_step: int, points: np.ndarray, frame: Frame) -> tuple[np.ndarray, np.ndarray] | None:
        """Each of ``points``' displacement into ``frame`` and whether it survived the round trip (:func:`lk_points`)."""
        self.calls += 1
        prev = self._frames.get(prev_step)
        if prev is None or frame.rgb is None or points is None or not len(points):
            return None
        out = lk_points(prev, self._remember(frame.step, frame.rgb), points)
        self.answered += out is not None
        return out

    def diagnostics(self) -> dict:
        return {"calls": self.calls, "answered": self.answered}


def flow_cue_for(store: MemoryStore) -> OpticalFlowCue | None:
    return _FLOW_BY_STORE.get(store)


@dataclass
class CoverTrack:
    """Frame-to-frame state of one bound container."""

    key: str
    pos: np.ndarray
    step: int
    vel: np.ndarray = field(default_factory=lambda: np.zeros(2))
    status: EntityStatus = EntityStatus.VERIFIED
    misses: int = 0
    recovery: int = 0
    lost: bool = False
    area: float | None = None
    mass: float | None = None  # container pixels usually seen around the track when the cues agree
    parea: float | None = None  # usual area of the palette component the track sits on
    anchor: np.ndarray | None = None  # where the container last stood still
    still: int = 0
    lifted: bool = False  # its cube is in view where it stood: the robot has it
    settle: int = 0  # consecutive still frames on which association found the same lone blob the flow disagrees with
    settle_at: np.ndarray | None = None  # that blob's centre
    yields_to: set = field(default_factory=set)  # tracks it lost a shared container to (_part_colliding)
    history: list = field(default_factory=list)


@dataclass(frozen=True)
class CoverFollowThresholds:
    """The numbers :class:`CoverFollowTool` follows a bound container with (pixels in the 256x256 frame, joint angles in rad, heights in m)."""

    ms_radius: float = 9.0
    """Mean-shift window (px) of the association cue."""
    min_pixels: int = 40
    """Container pixels a detection needs in that window."""
    jump_base: float = 5.0
    """Jump limit (px) = ``jump_base`` + ``jump_per_step`` * steps since the last frame."""
    jump_per_step: float = 3.0
    """See ``jump_base``."""
    agree_px: float = 7.0
    """Flow and association agree when within this distance (px)."""
    patience: int = 2
    """Frames without a detection tolerated before the track counts as lost."""
    recovery_steps: int = 3
    """How many times a lost track widens its search radius."""
    recovery_radius: float = 12.0
    """A lost track's first search radius (px), doubled at each recovery step."""
    feature_radius: float = 10.0
    """Where (px around the container) its flow features are taken from."""
    min_move: float = 1.5
    """Smallest move (px) of a followed container worth an UPDATE."""
    arm_px: float = 16.0
    """The arm covers a container when its projected links pass within this (px at the table's depth;
    a link nearer the camera reaches proportionally farther, :func:`~memory.robot.arm_view.arm_covers`)."""
    hand_px: float = 36.0
    """The same for the hand while it carries something (the held object widens it)."""
    carry_z: float = 0.06
    """The hand above this height (m), closed and moving, is carrying."""
    arm_moving_rad: float = 0.002
    """Largest per-frame joint change (rad) at which the arm is still."""
    settle_frames: int = 3
    """Still frames in a row on which flow and association disagree about one lone blob before the blob wins."""
    travel_px_per_step: float = 1.0
    """A container moved at least this far per step since the last frame (by flow and
    association alike) with the arm still or far is travelling on its own: the scene swaps. A swap
    moves a container 50-60 px in 50 steps; a still container's centre jitters well under this."""
    collide_px: float = 6.0
    """Two tracks closer than this (px) stand on one container, which hides one cube only: a
    container is about 20 px across, and two seen one behind the other are still 20 px apart."""


@register_tool(order=90, source="video")
@register_tool(order=110, source="live")
class CoverFollowTool(Tool):
    """Keeps the position of every bound container of one ``source`` current as containers move.

    Args:
        source: ``"video"`` follows bindings made from the demonstration through its frames
            (group ``demo_relation_update``); ``"live"`` follows live bindings through live
            frames (group ``live_binding``).
        ms_radius: mean-shift window (px) of the association cue.
        min_pixels: container pixels a detection needs in that window.
        jump_base, jump_per_step: jump limit = base + per_step * steps since the last frame.
        agree_px: flow and association agree when within this distance.
        patience: frames without a detection tolerated before the track counts as lost.
        recovery_steps: how many times a lost track widens its search radius.
        feature_radius: where the features of a container are taken from.
    """

    serves = frozenset({Need.COVER_BINDING})

    def __init__(self, source: str = "video", *, ms_radius: float = 9.0, min_pixels: int = 40,
                 jump_base: float = 5.0, jump_per_step: float = 3.0, agree_px: float = 7.0, patience: int = 2,
                 recovery_steps: int = 3, recovery_radius: float = 12.0, feature_radius: float = 10.0,
                 min_move: float = 1.5, arm_px: float = 16.0, hand_px: float = 36.0, carry_z: float = 0.06, arm_moving_rad: float = 0.002) -> None:
        if source not in ("live", "video"):
            raise ValueError(f"source must be 'live' or 'video', got {source!r}")
        self.frame_source = source
        self.source = Source.of_frame(source)
        self.name = "cover_follow_demo" if source == "video" else "cover_follow_live"
        self.group = ToolGroup.DEMO_RELATION_UPDATE if source == "video" else "live_binding"
        self.stride = 1
        self.render = RenderNeed(stride=4, video=source == "video", video_stride=2)  # bindings the same at video stride 2 and 4 on train 0-3 (benchmarks/video_stride_train.md); thresholds counted in frames were measured at this stride
        self.config = CoverFollowThresholds(
            ms_radius=ms_radius, min_pixels=min_pixels, jump_base=jump_base, jump_per_step=jump_per_step,
            agree_px=agree_px, patience=patience, recovery_steps=recovery_steps, recovery_radius=recovery_radius,
            feature_radius=feature_radius, min_move=min_move, arm_px=arm_px, hand_px=hand_px, carry_z=carry_z,
            arm_moving_rad=arm_moving_rad,
        )
        self.appearance = ContainerAppearance()
        self._tracks: dict[str, CoverTrack] = {}
        self._stood: dict[str, np.ndarray] = {}  # where each followed container stood before the current frame
        self._split_now = False  # the current track's flow came from its own motion group (_split_flow)
        self._prev: tuple[int, np.ndarray, np.ndarray] | None = None  # (step, gray, container mask)
        self._counts: dict[str, int] = {}

    def thresholds(self) -> tuple:
        return (self.config, self.appearance.config)

    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.appearance.reset()
        self._tracks = {}
        self._prev = None
        self._q: np.ndarray | None = None  # the arm's joint angles on the latest frame
        self._arm_q: np.ndarray | None = None
        self._carrying = False
        self._scene_moves = False
        self._counts = {"held_by_arm": 0, "arm_over": 0, "moved_under_arm": 0, "settled": 0, "frames": 0, "agree": 0, "disagree": 0, "association_only": 0, "flow_only": 0, "missed": 0,
                        "lost": 0, "reacquired": 0, "occluded": 0, "lifted": 0, "split": 0, "collided": 0}
        self._stood = {}
        self._split_now = False

    # ------------------------------------------------------------------ helpers
    def _bound_records(self, store: MemoryStore) -> dict[str, EntityRecord]:
        return {k: r for k, r in store.entities().items()
                if r.role == COVER_ROLE and r.source == self.source and r.position is not None
                and (r.binding or "").startswith(cover_binding(""))}

    def _features(self, prev_gray: np.ndarray, prev_mask: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
        """Points to follow for the container around ``pos`` in the previous frame, as ``(N, 2)`` (y, x).

        Its corners (``goodFeaturesToTrack`` on the container pixels and their one-pixel border)
        plus a 3-px grid over its pixels: the faces are flat, but a 21-px Lucas-Kanade window on
        any of them reaches the container's edges.
        """
        h, w = prev_gray.shape
        r = int(self.config.feature_radius)
        y0, y1 = max(0, int(pos[0]) - r), min(h, int(pos[0]) + r + 1)
        x0, x1 = max(0, int(pos[1]) - r), min(w, int(pos[1]) + r + 1)
        if y1 - y0 < 5 or x1 - x0 < 5:
            return None
        m = prev_mask[y0:y1, x0:x1]
        if m.sum() < 10:
            return None
        # only the container pixels connected to the track's own spot: a neighbour passing close by
        # (the other container of a swap) must not lend its motion
        labels, n = ndimage.label(m, structure=np.ones((3, 3), bool))
        cy, cx = int(pos[0]) - y0, int(pos[1]) - x0
        core = labels[max(0, cy - 4) : cy + 5, max(0, cx - 4) : cx + 5]
        own = np.unique(core[core > 0])
        if own.size:
            m = np.isin(labels, own)
        m8 = cv2.dilate(m.astype(np.uint8), np.ones((3, 3), np.uint8))
        pts = cv2.goodFeaturesToTrack(np.ascontiguousarray(prev_gray[y0:y1, x0:x1]), maxCorners=24, qualityLevel=0.01,
                                      minDistance=2, mask=m8, blockSize=3)
        corners = np.zeros((0, 2), np.float32) if pts is None else pts.reshape(-1, 2)[:, ::-1].astype(np.float32)
        gy, gx = np.nonzero(m[1::3, 1::3])
        grid = np.stack([gy * 3 + 1, gx * 3 + 1], axis=1).astype(np.float32)
        out = np.concatenate([corners, grid]) + np.array([y0, x0], np.float32)
        return out if len(out) >= 3 else None

    def _component_area(self, mask: np.ndarray, pos: np.ndarray) -> int:
        """Area of the palette component(s) under the track's spot (0 when none)."""
        if self._labels is None:
            y0, y1, x0, x1 = ContainerAppearance._clip(mask, self._roi)
            labels, _ = ndimage.label(mask[y0:y1, x0:x1], structure=np.ones((3, 3), bool))
            self._labels = (labels, y0, x0, np.bincount(labels.ravel()))
        labels, y0, x0, counts = self._labels
        cy, cx = int(pos[0]) - y0, int(pos[1]) - x0
        core = labels[max(0, cy - 3) : max(0, cy + 4), max(0, cx - 3) : max(0, cx + 4)]
        own = np.unique(core[core > 0])
        return int(counts[own].sum()) if own.size else 0

    def _jump(self, dt: int) -> float:
        return self.config.jump_base + self.config.jump_per_step * max(1, dt)

    def _nearest_blob(self, mask: np.ndarray, around: np.ndarray, radius: float, area: float | None = None):
        found = self._detect(around, radius, area)
        return None if found is None else found[0]

    def _detect(self, around: np.ndarray, radius: float, area: float | None = None):
        found = self.appearance.detect(self._rgb, around, radius=radius, max_shift=radius + 3, min_pixels=self.config.min_pixels,
                                       step=self._step, roi=self._roi, expected_area=area)
        return None if found is None else (np.array(found[0]), found[1])

    # ------------------------------------------------------------------ frames
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if frame.rgb is None or frame.source != self.frame_source:
            return
        records = self._bound_records(store)
        if not records and not self._tracks:
            self._prev = None
            return
        g = gray(frame.rgb)
        for key, rec in records.items():
            if key not in self._tracks:
                self.appearance.learn(frame.rgb, rec.position)  # each container's faces add their own shades
                area = self.appearance.blob_area(frame.rgb, rec.position, frame.step)
                self._tracks[key] = CoverTrack(key, np.array(rec.position, dtype=float), frame.step, status=rec.status,
                                               area=None if area is None or area < 100 else float(area),
                                               anchor=np.array(rec.position, dtype=float))
        pts = np.array([t.pos for t in self._tracks.values()])
        m = 48 + 16 * max((t.recovery for t in self._tracks.values()), default=0)
        roi = (int(pts[:, 0].min()) - m, int(pts[:, 0].max()) + m + 1, int(pts[:, 1].min()) - m, int(pts[:, 1].max()) + m + 1)
        mask = self.appearance.mask(frame.rgb, frame.step, roi)
        self._occluders = self.appearance.occluder_mask(frame.rgb, frame.step, roi)
        self._labels = None
        self._mask_now = mask
        self._roi = roi
        self._rgb = frame.rgb
        self._step = frame.step
        q = None if frame.joint_state is None or len(frame.joint_state) < 7 else np.asarray(frame.joint_state, float)[:7]
        moving = q is not None and self._q is not None and float(np.abs(q - self._q).max()) > self.config.arm_moving_rad
        self._arm_q = q if moving else None
        self._q = q
        # the hand's wider reach counts only while it carries something above the table (fingers
        # commanded closed, tool-centre point lifted): pressing a button or reaching is just the arm
        # (where the fingers' opening is logged, something must hold them apart: the hand presses
        # buttons with its fingers closed on nothing)
        closed = gripper_closed(frame) is True
        width = gripper_width(frame)
        holds = width is None or width >= LIFT_LIVE.held_width
        self._carrying = bool(moving and closed and holds and float(panda_tcp(q)[2]) > self.config.carry_z)
        self._counts["frames"] += 1
        flow = flow_cue_for(store)
        self._stood = {k: t.pos.copy() for k, t in self._tracks.items() if not t.lost}
        for key, track in self._tracks.items():
            rec = records.get(key)
            if rec is None:
                continue
            self._update(track, rec, frame, g, mask, flow, store)
        self._part_colliding(records, frame, store)
        self._prev = (frame.step, g, mask)

    def _part_colliding(self, records: dict[str, EntityRecord], frame: Frame, store: MemoryStore) -> None:
        """Two tracks on one container: one of them is wrong, since a container hides one cube.

        The one that has stood still longer held where its container used to be (a swap under the
        arm, say, which it could not see) while the other followed its own container there: it
        loses the spot, becomes uncertain (access abstains) and searches for its container as a lost
        track does, never on a container another track holds. When neither stood still longer, both
        lose it. A track that lost a container to another once loses to it again (without that, the
        loser found the winner's container again, having moved it stood still less, and the two
        traded the spot back and forth). Tracks whose container the robot has lifted hold at its spot
        and are left alone."""
        standing = [t for t in self._tracks.values() if not t.lost and not t.lifted and t.key in records]
        losers: list[CoverTrack] = []
        for i, a in enumerate(standing):
            for b in standing[i + 1 :]:
                if float(np.hypot(*(a.pos - b.pos))) > self.config.collide_px:
                    continue
                if b.key in a.yields_to or a.key in b.yields_to:
                    pair = [a] if b.key in a.yields_to else [b]
                else:
                    pair = [a] if a.still > b.still else [b] if b.still > a.still else [a, b]
                for t in pair:
                    t.yields_to.add((b if t is a else a).key)
                losers += [t for t in pair if t not in losers]
        for t in losers:
            self._counts["collided"] += 1
            t.lost, t.misses, t.recovery, t.status = True, self.config.patience + 1, 0, EntityStatus.UNCERTAIN
            rec = records[t.key]
            self.commit(store, t.key, rec.evolve(status=EntityStatus.UNCERTAIN), step=frame.step,
                        reason="another followed container stands where this one stood: it moved away unseen", accepted=True)

    def _lifted_off(self, track: CoverTrack, rec: EntityRecord, frame: Frame, store: MemoryStore) -> bool:
        """The cube this container hides is in view where the container last stood: the robot lifted
        the container off it. The track then holds at that place (the binding is as true as ever,
        the container is in the robot's hand) until a container stands there again."""
        phrase = (rec.binding or "").removeprefix(cover_binding(""))
        colour = colour_of(phrase.split())
        if colour is None or track.anchor is None:
            return False
        y, x = int(track.anchor[0]), int(track.anchor[1])
        r = 30
        y0, x0 = max(0, y - r), max(0, x - r)
        blobs = find_blobs(frame.rgb[y0 : y + r + 1, x0 : x + r + 1], [colour], min_area=10, max_area=900)
        seen = any(np.hypot(b.y + y0 - track.anchor[0], b.x + x0 - track.anchor[1]) <= 10 for b in blobs)
        if seen and not track.lifted:
            track.lifted = True
            track.pos = track.anchor.copy()
            self._counts["lifted"] += 1
            self.commit(store, track.key, rec.evolve(position=to_point(track.pos).as_tuple()), step=frame.step,
                        reason=f"the {phrase} is in view where its container stood: the container was lifted off it",
                        accepted=True)
        elif not seen and track.lifted and self._detect(track.anchor, self.config.ms_radius, track.area) is not None:
            track.lifted = False  # a container stands on it again: follow from here
            track.pos = track.anchor.copy()
        if track.lifted:
            track.step = frame.step
        return track.lifted

    def _update(self, track: CoverTrack, rec: EntityRecord, frame: Frame, g, mask, flow, store: MemoryStore) -> None:
        if self._lifted_off(track, rec, frame, store):
            return
        hand_px = self.config.hand_px if self._carrying else self.config.arm_px
        if self._arm_q is not None and arm_covers(self._arm_q, track.pos, self.config.arm_px, hand_px):
            # the moving arm is in front of it: hold, change nothing (the next clear view resumes),
            # unless the container itself is plainly in view and moving (a swap under the arm)
            self._counts["arm_over"] += 1
            self._follow_under_arm(track, rec, frame, flow, store)
            track.step = frame.step
            return
        dt = max(1, frame.step - track.step)
        before = track.pos.copy()
        pred = track.pos.copy()  # containers stand still unless something moves them: no extrapolation
        flow_pos, flow_broken = None, False
        self._split_now = False
        cue = self._flow_cue(track, frame, flow)
        if cue is not None:
            # most of the container's points must survive the round trip; when few do, what
            # moved was mostly something else (the arm sweeping over it)
            pos, kept, tracked = cue
            if pos is not None and kept >= max(3, 0.4 * tracked):
                flow_pos = pos
            else:
                flow_broken = True
        if track.lost and track.yields_to:
            # lost its spot to another track: the features there are the other track's container, and
            # their flow must not veto the container the search finds
            flow_pos, flow_broken = None, False
        start = flow_pos if flow_pos is not None else pred
        det, kind = None, None
        if not track.lost:
            found = self._detect(start, self.config.ms_radius, track.area)
            if found is not None and np.hypot(*(found[0] - track.pos)) <= self._jump(dt):
                det, kind = found
        else:  # lost: widen the search around the prediction, at most recovery_steps times
            track.recovery = min(track.recovery + 1, self.config.recovery_steps)
            radius = self.config.recovery_radius * (2 ** (track.recovery - 1))
            taken = [t.pos for k, t in self._tracks.items() if k != track.key and not t.lost]
            det = self._search(mask, pred, radius, track.area, taken)
            kind = "blob" if det is not None else None

        # occlusion: the arm in front of the container (the spot is not bare table). Either fewer container
        # pixels than usual around the track with something grayish that is not a container in their place, or the container's
        # pixels merged into a region far larger than the container (the arm's faces can render at the
        # container's gray levels when it comes close to the camera). Then the cues are unreliable,
        # not contradictory: the track holds (or follows flow) and its status does not change.
        vis = min(self.appearance.coverage(mask, start, self.config.ms_radius), self.appearance.coverage(mask, track.pos, self.config.ms_radius))
        parea = self._component_area(mask, track.pos)
        grayish = self.appearance.coverage(self._occluders, track.pos, self.config.ms_radius + 2)
        covered = grayish + self.appearance.coverage(mask, track.pos, self.config.ms_radius + 2) >= 0.5  # not bare table
        by_arm = covered and track.mass is not None and vis < 0.65 * track.mass and grayish >= 0.12
        occluded = covered and (
            by_arm
            or (track.parea is not None and parea > 1.8 * track.parea)
            or flow_broken)
        if occluded:
            self._counts["occluded"] += 1

        status, reason = track.status, None
        if self._split_now and flow_pos is not None and kind != "blob" and np.hypot(*(flow_pos - track.pos)) <= self._jump(dt):
            # two containers of one region moving apart: the region's mode is pulled toward whichever
            # shows more of itself, the track's own motion group is not
            track.pos = flow_pos
            track.misses, track.lost, track.recovery = 0, False, 0
            reason = "followed its own motion group of a region shared with a neighbour"
        elif det is not None and flow_pos is not None and occluded and float(np.hypot(*(det - flow_pos))) > self.config.agree_px + 3.0:
            track.pos = flow_pos  # the arm is over it: follow the container's own features, change nothing else
            track.misses = 0
        elif det is not None and flow_pos is not None and by_arm and kind != "blob" and self._hand_hides(track.pos):
            # something grayish half hides it, the hand is close by and no container of this scene has
            # ever moved on its own: what is left of the container and the hand's edge flow together,
            # and agreement between flow and association is the hand's motion, not the container's. Hold.
            self._counts["held_by_arm"] += 1
        elif det is not None and flow_pos is not None:
            gap = float(np.hypot(*(det - flow_pos)))
            tol = self.config.agree_px if kind == "blob" else self.config.agree_px + 3.0
            if gap <= tol:
                self._counts["agree"] += 1
                track.settle, track.settle_at = 0, None
                if track.lost or track.status is EntityStatus.UNCERTAIN:
                    status = EntityStatus.REACQUIRED
                    reason = "flow and association agree again"
                else:
                    reason = "flow and association agree"
            else:
                self._counts["disagree"] += 1
                status = EntityStatus.UNCERTAIN
                reason = f"flow and association disagree by {gap:.1f} px"
            # agreeing: a lone blob's centroid is the container's centre; a merged blob's mode is
            # pulled toward its neighbour and flow toward the neighbour's motion, so they are
            # averaged. Disagreeing: identity continuity wins, the flow's position is kept, unless
            # the disagreement is only about where a container that stands still is centred.
            still_apart = gap > tol and self._settles_on_blob(track, det, kind, flow_pos)
            if still_apart:
                self._counts["settled"] += 1
                status = EntityStatus.REACQUIRED
                reason = (f"flow and association disagreed by {gap:.1f} px on {self.config.settle_frames} still frames: "
                          "the lone container blob beside the track is its container")
                track.pos = det
            elif gap > tol:
                track.pos = flow_pos
            else:
                track.pos = det if kind == "blob" else 0.5 * (det + flow_pos)
            track.misses, track.lost, track.recovery = 0, False, 0
        elif occluded and not track.lost and (det is None or kind != "blob"):
            if flow_pos is not None and not (by_arm and self._hand_hides(track.pos)) and np.hypot(*(flow_pos - track.pos)) <= self._jump(dt):
                track.pos = flow_pos
            # else hold: a container under the arm stays where it was last seen (and, as above, one
            # half hidden by something grayish with the hand close by, in a scene that never swapped)
        elif det is not None:
            self._counts["association_only"] += 1
            if track.lost or track.status is EntityStatus.UNCERTAIN:
                status = EntityStatus.REACQUIRED
                reason = "container found again near the prediction"
                self._counts["reacquired"] += int(track.lost)
            else:
                reason = "associated (no flow cue)"
            track.pos = det  # no flow this frame: association is all there is
            track.misses, track.lost, track.recovery = 0, False, 0
        else:
            track.misses += 1
            self._counts["missed"] += 1
            if flow_pos is not None and np.hypot(*(flow_pos - track.pos)) <= self._jump(dt):
                self._counts["flow_only"] += 1
                track.pos = flow_pos
            else:
                track.pos = pred
            if track.misses > self.config.patience and not track.lost:
                track.lost = True
                self._counts["lost"] += 1
                status = EntityStatus.UNCERTAIN
                reason = f"no container near the track for {track.misses} frames"
        if status is track.status and reason is not None and reason.startswith("flow and association agree") and not occluded:
            track.mass = vis if track.mass is None else 0.8 * track.mass + 0.2 * vis
            if parea > 0:
                track.parea = parea if track.parea is None else 0.8 * track.parea + 0.2 * min(parea, 1.5 * track.parea)
        moved = track.pos - before
        # a container seen travelling, by flow and association alike, unhidden, with the arm still
        # or its hand far: containers in this scene move on their own (swaps), so a half hidden one
        # may be moving too, and the holds above no longer apply
        if (not self._scene_moves and not occluded and reason is not None and reason.startswith("flow and association agree")
                and min(float(np.hypot(*moved)), float(np.hypot(*(flow_pos - before)))) >= self.config.travel_px_per_step * dt
                and self._arm_clear(before)):
            self._scene_moves = True
            self._counts["scene_moves_at"] = frame.step
        track.still = track.still + 1 if np.hypot(*moved) < 0.5 and not track.lost else 0
        if track.still >= 2:
            track.anchor = track.pos.copy()
        track.vel = 0.5 * track.vel + 0.5 * (moved / dt) if not track.lost else track.vel * 0.8
        track.step = frame.step
        track.status = status
        new_pos = to_point(track.pos).as_tuple()
        changed_pos = rec.position is None or np.hypot(new_pos[0] - rec.position[0], new_pos[1] - rec.position[1]) >= self.config.min_move
        if status is not rec.status or (changed_pos and not track.lost):
            pos = new_pos if not track.lost else rec.position
            self.commit(store, track.key, rec.evolve(position=pos, status=status), step=frame.step,
                        reason=reason or f"container followed {np.hypot(*moved):.1f} px", accepted=True)
            if len(track.history) < 200:
                track.history.append((frame.step, pos, status.value))

    def _arm_near(self, yx: np.ndarray) -> bool:
        """The hand projects within three times its carrying reach (px) of ``yx`` (False without joint
        angles). The hand's own pixel, not the links' depth-scaled footprints: projected links cross
        most of the image, and a hand raised toward the camera out of view (a demonstration's arm
        parked high) has a footprint that, scaled by its nearness, reaches everything."""
        hand = hand_pixel(self._q)
        return hand is not None and float(np.hypot(hand[0] - yx[0], hand[1] - yx[1])) <= 3 * self.config.hand_px

    def _arm_clear(self, yx: np.ndarray) -> bool:
        """The arm stands still, or its hand is nowhere near ``yx``: nothing of the robot's can have
        pushed what stands there. Frames without joint angles say nothing against it: a container
        travelling there is taken at its word, as everywhere before this check existed."""
        return self._arm_q is None or not self._arm_near(yx)

    def _hand_hides(self, yx: np.ndarray) -> bool:
        """Whether grayish pixels over the container at ``yx`` are to be taken for the robot's hand:
        the hand is close by and no container of this scene has yet moved on its own. Elsewhere (a
        swap's containers shading each other, an arm far away or not logged) they may be anything,
        and the container follows its flow as before."""
        return not self._scene_moves and self._arm_near(yx)

    def _flow_cue(self, track: CoverTrack, frame: Frame, flow) -> tuple[np.ndarray | None, int, int] | None:
        """Where the container's own features flowed since the track's last frame: ``(position or None
        when the flow failed, features that survived the round trip, features tracked)``, or ``None``
        when there is no flow cue this frame (no flow tool, no previous frame at the track's step, no
        features on the container). The callers ask different shares of survivors of it.

        A followed neighbour in the same connected container region (two containers of a swap that
        overlap in the image, one in front of the other) shares the region's points: they are
        flowed together and, when they move two ways, split between the two by
        :func:`split_motions`; the track follows the median of its own group. Without the split the
        front container's faces, nearer the camera and richer in corners, speak for the rear one's
        track, whose centre sits near the boundary between them, and carry it off with the front one.
        """
        if flow is None or self._prev is None or self._prev[0] != track.step:
            return None
        pts = self._features(self._prev[1], self._prev[2], track.pos)
        if pts is None:
            return None
        split = self._split_flow(track, pts, frame, flow)
        if split is not None:
            return split
        out = flow.displacement(track.step, pts, frame, centre=track.pos)
        if out is None:
            return None, 0, len(pts)
        return track.pos + out[0], int(out[1]), len(pts)

    def _partner(self, track: CoverTrack) -> np.ndarray | None:
        """Where the one other followed container stood on the previous frame, when it shares the
        track's connected container region there and stands within two feature radii; else None."""
        near = [p for k, p in self._stood.items()
                if k != track.key and float(np.hypot(*(p - track.pos))) <= 2 * self.config.feature_radius + 8]
        if len(near) != 1:
            return None
        mask = self._prev[2]
        labels, _ = ndimage.label(mask, structure=np.ones((3, 3), bool))

        def label_at(yx):
            y, x = int(round(yx[0])), int(round(yx[1]))
            core = labels[max(0, y - 3) : y + 4, max(0, x - 3) : x + 4]
            return set(np.unique(core[core > 0]).tolist())

        return near[0] if label_at(track.pos) & label_at(near[0]) else None

    def _split_flow(self, track: CoverTrack, pts: np.ndarray, frame: Frame, flow) -> tuple[np.ndarray | None, int, int] | None:
        """The flow cue from the track's own motion group of a region it shares with a neighbour (see
        :meth:`_flow_cue`), or None when there is no such neighbour or the region moves as one."""
        partner = self._partner(track)
        if partner is None:
            return None
        theirs = self._features(self._prev[1], self._prev[2], partner)
        union = pts if theirs is None else np.concatenate([pts, theirs])
        flowed = flow.point_flow(track.step, union, frame)
        if flowed is None:
            return None
        moves, good = flowed
        if int(good.sum()) < max(6, 0.4 * len(union)):
            return None
        groups = split_motions(union[good], moves[good], np.array([track.pos, partner]))
        if groups is None:
            return None
        mine = moves[good][groups == 0]
        self._counts["split"] += 1
        self._split_now = True
        return track.pos + np.median(mine, axis=0), len(mine), len(mine)

    def _follow_under_arm(self, track: CoverTrack, rec: EntityRecord, frame: Frame, flow, store: MemoryStore) -> None:
        """Move a track the moving arm passes over only on the plainest evidence of the container's own motion.

        Containers can trade places while the arm travels nearby (pressing the buttons that precede the
        pick); holding every track the arm's skeleton passes within ``arm_px`` of then leaves the
        record behind where its container used to stand. The arm is what the pixel cues confuse with a
        container, so only the strictest sighting moves the track here: a lone container blob of the
        track's own size (``"blob"``, never the palette's mode, which the arm's faces can pull) where the
        container's own features flowed, the two within ``agree_px``, and the palette component under
        the track no larger than the container usually is (not merged with the arm). Never while the
        hand carries something (a container in the grip is a lone blob of the right size moving with
        its own features). Anything less holds, as before; the status never changes under the arm.
        """
        if self._carrying or track.lost or track.area is None:
            return  # a container in the grip looks exactly like the one under it: hold
        cue = self._flow_cue(track, frame, flow)
        if cue is None or cue[0] is None or cue[1] < max(3, 0.6 * cue[2]):
            return
        flow_pos = cue[0]
        dt = max(1, frame.step - track.step)
        if np.hypot(*(flow_pos - track.pos)) < self.config.min_move or np.hypot(*(flow_pos - track.pos)) > self._jump(dt):
            return
        found = self._detect(flow_pos, self.config.ms_radius, track.area)
        if found is None or found[1] != "blob" or float(np.hypot(*(found[0] - flow_pos))) > self.config.agree_px:
            return
        parea = self._component_area(self._mask_now, found[0])
        if parea <= 0 or (track.parea is not None and parea > 1.3 * track.parea):
            return
        self._counts["moved_under_arm"] += 1
        moved = float(np.hypot(*(found[0] - track.pos)))
        track.pos = found[0]
        track.misses, track.still = 0, 0
        self.commit(store, track.key, rec.evolve(position=to_point(track.pos).as_tuple()), step=frame.step,
                    reason=f"container followed {moved:.1f} px under the moving arm (lone blob where its features flowed)",
                    accepted=True)

    def _settles_on_blob(self, track: CoverTrack, det: np.ndarray, kind: str, flow_pos: np.ndarray) -> bool:
        """Whether a lasting disagreement is only about the centre of a container that stands still.

        Flow carries identity only while things move: once the containers stand still it says
        "nothing moved" wherever the track sits, even when the track ended a swap a few pixels off
        its container's centre (on the edge it shares with a neighbour, or on the table beside it),
        and flow and association then disagree on every frame for the rest of the episode, leaving
        the record uncertain and unread. When, on ``settle_frames`` frames in a row, the flow moved
        the track less than ``min_move`` and the association found the same lone container blob
        of the track's size (``"blob"``) that no other track holds, that blob is the track's
        container.
        """
        flow_still = float(np.hypot(*(flow_pos - track.pos))) < self.config.min_move
        held = any(np.hypot(*(det - t.pos)) <= self.config.ms_radius for t in self._tracks.values() if t is not track and not t.lost)
        same_blob = track.settle_at is not None and float(np.hypot(*(det - track.settle_at))) < self.config.min_move
        if kind != "blob" or not flow_still or held:
            track.settle, track.settle_at = 0, None
            return False
        track.settle = track.settle + 1 if same_blob else 1
        track.settle_at = det.copy()
        if track.settle < self.config.settle_frames:
            return False
        track.settle, track.settle_at = 0, None
        return True

    def _search(self, mask: np.ndarray, around: np.ndarray, radius: float, area: float | None = None, taken=()):
        """Nearest container to ``around`` within ``radius``, trying seeds on rings; containers held by
        another track (centred within a container's width, two ``ms_radius``, of its position) are not
        candidates: a detection off a held container's centre is still that container."""
        best = None
        for r in np.arange(0.0, radius + 1e-6, max(4.0, self.config.ms_radius)):
            for a in np.linspace(0, 2 * np.pi, max(1, int(2 * np.pi * r / 8)), endpoint=False):
                seed = around + r * np.array([np.sin(a), np.cos(a)])
                found = self._nearest_blob(mask, seed, self.config.ms_radius, area)
                if found is None:
                    continue
                if any(np.hypot(*(found - p)) <= 2 * self.config.ms_radius for p in taken):
                    continue
                d = float(np.hypot(*(found - around)))
                if d <= radius and (best is None or d < best[0]):
                    best = (d, found)
            if best is not None:
                return best[1]
        return None

    def diagnostics(self) -> dict:
        return {"counts": dict(self._counts), "tracks": {k: {"pos": [round(float(v), 1) for v in t.pos], "status": t.status.value}
                                                        for k, t in self._tracks.items()}}

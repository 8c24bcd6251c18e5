"""Dwell / place: the carried object comes to rest, with open fingers, away from where it last rested.

Moved here from demo_places (which reads the demonstration's places from these events): the watched
colour's blob followed frame to frame, its stays, and which of them are places. A stay is
registered once it lasts ``dwell_frames`` frames and the fingers are open (when the joint readings
give them); a stay with the hand holding the object up is a ``hold``, not a place; the first stay
(where the object starts) and a stay where the last one was (the same rest, interrupted by the arm
passing in front) are no places; any other is a ``place`` (``step``: when the stay began; ``point``:
where the object is).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.robot.arm_view import panda_tcp, to_pixel
from memory.events.base import Detector, DetectorConfig, Event
from memory.contract.frames import Frame
from memory.perception.blobs import find_blobs
from memory.robot.signals import gripper_width

__all__ = ["DwellConfig", "DwellDetector", "held_aloft"]


def held_aloft(q: np.ndarray | None, pos: tuple[float, float] | None, aloft_z: float, hand_px: float) -> bool:
    """The hand holds the object up: the tool-centre point (from the joint angles) above ``aloft_z``
    and projecting within ``hand_px`` of the object at ``pos``. The demonstration pauses with the
    object lifted above its next place; that stillness is not a place."""
    if q is None or pos is None:
        return False
    tcp = panda_tcp(q)
    py, px = to_pixel(tcp)
    return float(tcp[2]) > aloft_z and np.hypot(py - pos[0], px - pos[1]) <= hand_px


@dataclass(frozen=True)
class DwellConfig(DetectorConfig):
    """Thresholds of the dwell detector (video frames, 256 x 256 front camera, video stride 2).

    colour: the carried object's colour (the goal names it).
    max_jump: the object's blob moves at most this between two rendered frames (px) while carried.
    dwell_px: the centroid stays within this of one point during a stay (render noise and the
        fingers opening move it 1-2 px).
    dwell_frames: rendered frames a stay lasts before it counts (the demonstration rests the object
        for a second or more; the carry slows down for fewer frames than this).
    moved_px: a stay farther than this from the last one is a new place (an arm passing in front
        interrupts a stay and restarts it within a few px).
    open_width: fingers opened wider than this (m) have let the object go.
    aloft_z, hand_px: the hand above this height (m), projecting within this of the object (px),
        holds it up.
    min_area, top_margin: the object's blob is at least this large (px) and below this row (the arm's
        rest area at the top of the image).
    """

    colour: str
    max_jump: float = 30.0
    dwell_px: float = 3.0
    dwell_frames: int = 10
    moved_px: float = 10.0
    open_width: float = 0.07
    aloft_z: float = 0.12
    hand_px: float = 20.0
    min_area: int = 12
    top_margin: int = 20


class DwellDetector(Detector):
    """``place`` and ``hold`` events of the watched object in the video."""

    config: DwellConfig

    def reset(self) -> None:
        self.pos: tuple[float, float] | None = None  # the object, where last seen
        self._anchor_pos: tuple[float, float] | None = None
        self.dwell_start = 0
        self.dwell_len = 0  # frames of the current stay
        self._dwell_aloft = False
        self._registered: int | None = None
        self._last_dwell: tuple[float, float] | None = None
        self._first_dwell = True

    def update(self, frame: Frame) -> list[Event]:
        c = self.config
        if frame.source != "video" or frame.rgb is None:
            return []
        q = None if frame.joint_state is None else np.asarray(frame.joint_state, float)[:7]
        blobs = [b for b in find_blobs(frame.rgb, [c.colour], min_area=c.min_area) if b.y > c.top_margin]
        if self.pos is None:
            blob = blobs[0] if blobs else None
        else:
            near = [b for b in blobs if b.distance(self.pos) <= c.max_jump]
            blob = min(near, key=lambda b: b.distance(self.pos)) if near else self._in_hand(blobs, q)
        if blob is None:
            return []
        self.pos = (blob.y, blob.x)
        return self._dwell(frame, gripper_width(frame), held_aloft(q, self.pos, c.aloft_z, c.hand_px))

    def _in_hand(self, blobs: list, q: np.ndarray | None):
        """The object found again where the hand is, after it was lost: carried behind the arm, it
        can reappear farther than ``max_jump`` from where it was last seen (a long carry, a
        demonstration with many places), and following only nearby blobs would leave the detector
        at the old spot for the rest of the video. Needs the joint readings (the hand's pixel)."""
        if q is None or not blobs:
            return None
        py, px = to_pixel(panda_tcp(q))
        near = [b for b in blobs if np.hypot(b.y - py, b.x - px) <= self.config.hand_px]
        return min(near, key=lambda b: np.hypot(b.y - py, b.x - px)) if near else None

    def _dwell(self, frame: Frame, width: float | None, aloft: bool) -> list[Event]:
        c = self.config
        p = self.pos
        if self._anchor_pos is None or np.hypot(p[0] - self._anchor_pos[0], p[1] - self._anchor_pos[1]) > c.dwell_px:
            self._anchor_pos, self.dwell_start, self.dwell_len = p, frame.step, 1
            self._dwell_aloft = aloft
            return []
        self.dwell_len += 1
        if self.dwell_len < c.dwell_frames or self._registered == self.dwell_start:
            return []
        if width is not None and width < c.open_width:
            return []  # still in the hand (held still in the air, or not let go yet)
        self._registered = self.dwell_start
        if self._dwell_aloft:
            return [Event("hold", self.dwell_start, frame.source, point=p)]
        if self._first_dwell:  # where the object starts: no place
            self._first_dwell = False
            self._last_dwell = p
            return []
        if self._last_dwell is not None and np.hypot(p[0] - self._last_dwell[0], p[1] - self._last_dwell[1]) <= c.moved_px:
            return []  # the same rest, interrupted (an arm passing in front)
        self._last_dwell = p
        return [Event("place", self.dwell_start, frame.source, point=p)]


DwellConfig.detector = DwellDetector

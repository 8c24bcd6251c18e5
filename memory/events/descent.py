"""Descent: the hand's stay low over the table, from the arm's own joint readings, with its lowest point.

The tool-centre point comes from the joint angles by forward kinematics (:func:`memory.robot.arm_view.panda_tcp`);
a descent starts when it goes below ``low_z``, keeps its lowest point (the grasp or put-down
under the closing or opening fingers) and ends when the hand is up again (``up_z``). Read for the
demonstration's grasp and put-down (demo_handled: the first two descents) and the peg reader's
grasp (the first descent); each used to carry its own copy of this loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.robot.arm_view import panda_tcp, to_pixel
from memory.events.base import Detector, DetectorConfig, Event
from memory.contract.frames import Frame, FrameSource

__all__ = ["DescentConfig", "DescentDetector"]


@dataclass(frozen=True)
class DescentConfig(DetectorConfig):
    """Thresholds of one descent reading (heights in m, in the arm's base frame).

    low_z: below this the hand is at the table (a cube's centre is 2 cm up; the fingers close
        around it with the tool-centre point at 2-4 cm).
    up_z: at or above this the hand is up again and the descent is over (``low_z`` itself when
        there is no hysteresis band).
    min_drop: a frame replaces the lowest point only if it is at least this much lower (0: the
        latest of equal heights; a small value keeps the first of a stay at rest).
    source: the frames read (the demonstration video).
    rendered_only: read only rendered frames (the readers' thresholds were measured on those, at
        video stride 2).
    """

    low_z: float
    up_z: float
    min_drop: float = 0.0
    source: FrameSource = "video"
    rendered_only: bool = True


@dataclass
class Low:
    """The lowest point of the descent in progress."""

    step: int
    z: float
    tcp: np.ndarray
    pixel: tuple[float, float]


class DescentDetector(Detector):
    """A ``descent`` event (``point``: the lowest point's pixel, ``tcp``: its position) when the hand rises."""

    config: DescentConfig

    def reset(self) -> None:
        self.current: Low | None = None  # the descent in progress
        self.done: list[Event] = []  # the finished descents of the episode, in order

    def update(self, frame: Frame) -> list[Event]:
        c = self.config
        q = frame.joint_state
        if frame.source != c.source or (c.rendered_only and frame.rgb is None) or q is None or len(q) < 7:
            return []
        tcp = panda_tcp(q)
        z = float(tcp[2])
        if z < c.low_z and (self.current is None or z <= self.current.z - c.min_drop):
            self.current = Low(frame.step, z, tcp, to_pixel(tcp))
            return []
        if self.current is not None and z >= c.up_z:
            low, self.current = self.current, None
            e = Event("descent", frame.step, frame.source, point=low.pixel, time=float(low.step),
                      tcp=tuple(float(v) for v in low.tcp))
            self.done.append(e)
            return [e]
        return []

    def nth(self, i: int) -> tuple[float, tuple[float, float]] | None:
        """(lowest z, its pixel) of descent ``i`` (0 first): finished, or the one in progress."""
        if i < len(self.done):
            e = self.done[i]
            return e.tcp[2], e.point
        if i == len(self.done) and self.current is not None:
            return self.current.z, self.current.pixel
        return None


DescentConfig.detector = DescentDetector

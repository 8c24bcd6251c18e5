"""Put-down: the hand let go of what it held, low over the table, from the hand's own log.

Why: where an object was put down is a place in the demonstration ("the second target it was placed
on"). Read from pixels alone it is a *dwell* (the object's blob still for a second), which a short
rest, the hand hiding the object, or a look-alike beside it can break. The demonstration's own log
says it directly: the fingers rested held apart by an object (``held_width`` up to ``open_width``)
and opened past ``open_width`` while the tool-centre point (forward kinematics) was below
``low_z``; where the hand was then is where the object now rests.

Events: ``place`` (``point``: the hand's pixel at the last held frame, ``tcp``: its position) once
per release. A hand that opens in the air (above ``low_z``) drops rather than places, and is not
reported. Frames without finger readings yield nothing, and :attr:`PutDownDetector.sensing` stays
False, so a reader knows to fall back on its pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.contract.frames import Frame, FrameSource
from memory.events.base import Detector, DetectorConfig, Event
from memory.robot.arm_view import panda_tcp, to_pixel
from memory.robot.signals import ARM_JOINTS, gripper_width

__all__ = ["PutDownConfig", "PutDownDetector"]


@dataclass(frozen=True)
class PutDownConfig(DetectorConfig):
    """Thresholds of the put-down reading (m).

    held_width: the fingers' opening at or above this holds something (closed on nothing: about 0).
    open_width: at or above this the fingers have let go (fully open: 0.08; a 4 cm cube holds them near 0.04).
    low_z: the tool-centre point below this is at the table (a cube's centre is 2 cm up; placed on a
        disc the hand opens at 2-5 cm).
    still_width: the opening changed at most this since the previous frame: the fingers rest on
        something (fingers closing or opening pass through the held band without resting in it).
    source: the frames read (the demonstration video).
    """

    held_width: float = 0.01
    open_width: float = 0.07
    low_z: float = 0.08
    still_width: float = 0.002
    source: FrameSource = "video"


class PutDownDetector(Detector):
    """``place`` events of the hand's releases low over the table (module docstring)."""

    config: PutDownConfig

    def reset(self) -> None:
        self.sensing = False
        self._held: tuple[float, np.ndarray] | None = None  # (z, tcp) of the last frame the fingers held something
        self._width: float | None = None
        self.places: list[Event] = []

    def update(self, frame: Frame) -> list[Event]:
        c = self.config
        if frame.source != c.source or frame.gripper is None:
            return []
        q = frame.joint_state
        width = gripper_width(frame)
        if width is None or q is None or len(q) < ARM_JOINTS:
            return []
        self.sensing = True
        tcp = panda_tcp(q)
        prev, self._width = self._width, width
        if c.held_width <= width < c.open_width:
            if prev is not None and abs(width - prev) <= c.still_width:
                self._held = (float(tcp[2]), tcp)  # at rest on something (closing or opening fingers pass through)
            return []
        if width < c.held_width:
            self._held = None  # closed on nothing: no object to put down
            return []
        held, self._held = self._held, None
        if held is None or held[0] >= c.low_z:
            return []
        e = Event("place", frame.step, frame.source, point=to_pixel(held[1]), tcp=tuple(float(v) for v in held[1]))
        self.places.append(e)
        return [e]


PutDownConfig.detector = PutDownDetector

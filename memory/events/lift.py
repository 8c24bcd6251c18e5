"""Lift: a grasp that took something off the table, from the hand's own sensing.

Why: a count of picks must count what happened, not what was commanded. A learned policy's grasp
can close on nothing (a miss), lift for a moment and put back, or let the object slip; the pixels
of the object alone cannot always tell these apart (the hand hides the object it hovers over, and
a short lift moves it only a few pixels in the front view). The robot's own logs can: the finger
encoders say whether something holds the fingers apart (:attr:`Frame.gripper`), and the joint
angles say, by forward kinematics, whether the hand rose since it closed.

Events, per closed grip (from a close of the gripper command to its next open):

* ``lift`` once, when the fingers are held apart by at least ``held_width`` and the tool-centre point
  has risen ``rise_m`` above its lowest point since the close; ``point`` is that lowest point's
  pixel (where the object was taken), ``tcp`` its position;
* ``drop`` once, after a ``lift``, when the fingers close below ``held_width`` while the command is
  still closed (the object slipped out).

At each release, :attr:`LiftDetector.last_grip` says what the grip that ended did (:class:`Grip`:
lifted, still holding at the release, dropped, and the hand's pixel then).

A frame without finger readings (a robot or a backend that does not log them) yields nothing, and
:attr:`LiftDetector.sensing` stays False, so a reader knows to fall back on its pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.contract.frames import Frame, FrameSource
from memory.events.base import Detector, DetectorConfig, Event
from memory.robot.arm_view import panda_tcp, to_pixel
from memory.robot.signals import ARM_JOINTS, gripper_closed, gripper_width

__all__ = ["LIFT_LIVE", "Grip", "LiftConfig", "LiftDetector"]


@dataclass(frozen=True)
class LiftConfig(DetectorConfig):
    """Thresholds of the lift reading (m).

    held_width: the two fingers' opening at or above this while the command is closed: something
        is between them (closed on nothing they meet at about 0; a 4 cm cube holds them near 0.04).
    rise_m: the tool-centre point this far above its lowest point since the close: the hand lifted.
    source: the frames read (the robot's live interaction).
    """

    held_width: float = 0.01
    rise_m: float = 0.02
    source: FrameSource = "live"


@dataclass(frozen=True)
class Grip:
    """What one closed grip did, read at its release."""

    lifted: bool
    """Something held the fingers apart and rose."""
    holding: bool
    """The fingers were still held apart on the grip's last closed frame (the object went down with the release)."""
    dropped: bool
    """It slipped out after the lift, before the release."""
    hand: tuple[float, float] | None
    """The hand's pixel on the grip's last closed frame: where the object was let go."""


class LiftDetector(Detector):
    """``lift`` and ``drop`` events of the live grip (module docstring)."""

    config: LiftConfig

    def reset(self) -> None:
        self.closed = False
        self.sensing = False  # True once a frame carried finger readings
        self._low: tuple[float, np.ndarray] | None = None  # lowest (z, tcp) since the close
        self.lifted = False  # the current grip has lifted something
        self._dropped = False
        self.holding = False  # the fingers held something apart on the last closed frame
        self.hand: tuple[float, float] | None = None  # the hand's pixel on the last closed frame
        self.last_grip: Grip | None = None  # the grip that ended at the last release

    def update(self, frame: Frame) -> list[Event]:
        c = self.config
        if frame.source != c.source:
            return []
        command = gripper_closed(frame)
        if command is not None and command != self.closed:
            if self.closed and self.sensing:  # a release: what the grip that ends did
                self.last_grip = Grip(lifted=self.lifted, holding=self.holding, dropped=self._dropped, hand=self.hand)
            self.closed = command
            self._low, self.lifted, self._dropped = None, False, False
            self.holding, self.hand = False, None
        width = gripper_width(frame) if frame.gripper is not None else None
        q = frame.joint_state
        if width is None or q is None or len(q) < ARM_JOINTS:
            return []
        self.sensing = True
        if not self.closed:
            return []
        tcp = panda_tcp(q)
        z = float(tcp[2])
        if self._low is None or z < self._low[0]:
            self._low = (z, tcp)
        held = width >= c.held_width
        self.holding, self.hand = held, to_pixel(tcp)
        if not self.lifted and held and z >= self._low[0] + c.rise_m:
            self.lifted = True
            low = self._low[1]
            return [Event("lift", frame.step, frame.source, point=to_pixel(low), tcp=tuple(float(v) for v in low))]
        if self.lifted and not held and not self._dropped:
            self._dropped = True
            return [Event("drop", frame.step, frame.source)]
        return []


LiftConfig.detector = LiftDetector
LIFT_LIVE = LiftConfig()
"""The live grip's lift reading: the configuration every live counting tool shares."""


def sensed_grip(detector: LiftDetector | None) -> Grip | None:
    """What the grip that ended at the last release did, or None when the hand has no finger readings.

    Readers that pair the pixels of a pick with the hand's own log ask this at a release; without
    a detector, or while no frame has carried finger readings, they keep their pixel-only reading.
    """
    return detector.last_grip if detector is not None and detector.sensing else None

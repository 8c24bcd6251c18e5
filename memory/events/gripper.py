"""Grasp and release: the edges of the robot's own gripper command.

Read once for the repetition counter, the deposit counter, the reference-cube pick count and the
highlight marks, which each used to keep their own ``_closed`` flag and compare it with
:func:`memory.robot.signals.gripper_closed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.events.base import Detector, DetectorConfig, Event
from memory.contract.frames import Frame, FrameSource
from memory.robot.signals import gripper_closed

__all__ = ["GRIPPER_LIVE", "GripperConfig", "GripperEdges"]


@dataclass(frozen=True)
class GripperConfig(DetectorConfig):
    """Which frames' gripper command to read; there is no numeric threshold.

    The command's sign is the signal (negative: close, :mod:`memory.robot.signals`); a frame without a
    gripper column (no action, the stick robot) keeps the last state. ``source``: the edges are
    read within one source only, starting open at its first frame, because the counting tools
    count what the robot does live and the video's last command says nothing about the live
    gripper (the executor starts open).
    """

    source: FrameSource = "live"


class GripperEdges(Detector):
    """``grasp`` when the command goes from open to closed, ``release`` from closed to open."""

    config: GripperConfig

    def reset(self) -> None:
        self.closed = False  # every episode starts with the gripper open

    def update(self, frame: Frame) -> list[Event]:
        if frame.source != self.config.source:
            return []
        command = gripper_closed(frame)
        if command is None or command == self.closed:
            return []
        self.closed = command
        return [Event("grasp" if command else "release", frame.step, frame.source)]


GripperConfig.detector = GripperEdges
GRIPPER_LIVE = GripperConfig("live")
"""The live gripper's edges: the configuration every live counting tool shares."""

"""The robot's own signals, read one way for every tool: the gripper command and the finger opening.

Why one place: tools used to read the gripper from ``action[7]`` or ``action[-1]`` with different
length checks. The executed action of the gripper robot is 7 joint targets then the gripper
command (negative: close); the stick robot's action has no gripper column. Frames carry only what
a real robot logs (``memory/contract/frames.py``), so this is proprioception, not simulator state.
"""

from __future__ import annotations

import numpy as np

from memory.contract.frames import Frame

__all__ = ["ARM_JOINTS", "gripper_closed", "gripper_width"]

ARM_JOINTS = 7
"""Arm joints before the gripper column in an action, and before the fingers in a joint reading."""


def gripper_closed(frame: Frame) -> bool | None:
    """Whether the executed action commanded the gripper closed; ``None`` when the frame carries no
    gripper command (no action, or a robot without a gripper column)."""
    a = frame.action
    if a is None or len(a) <= ARM_JOINTS:
        return None
    return bool(float(a[ARM_JOINTS]) < 0)


def gripper_width(frame: Frame) -> float | None:
    """Finger opening (m): the finger encoders (``frame.gripper``) where the frame logs them, else the
    joint readings past the arm joints; ``None`` when neither is given."""
    q = frame.gripper
    if q is None:
        q = None if frame.joint_state is None or len(frame.joint_state) <= ARM_JOINTS else frame.joint_state[ARM_JOINTS:]
    if q is None or len(q) == 0:
        return None
    return float(np.sum(np.abs(np.asarray(q, dtype=float))))

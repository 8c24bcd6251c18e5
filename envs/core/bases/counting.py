"""Task state of the Counting tasks: :class:`VisitCounter`, the rising-edge visit counter with
hysteresis (SwingXtimes counts the swings over its targets with it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class VisitCounter:
    """Rising-edge visits of a point by an object, with hysteresis.

    The object *enters* when it is within ``enter_r`` horizontally and below ``enter_z``; it
    *leaves* when it is farther than ``leave_r`` or at/above ``leave_z``. A visit is counted on
    each entry.
    """

    xy: tuple[float, float]
    enter_r: float = 0.03
    enter_z: float = 0.12
    leave_r: float = 0.04
    leave_z: float = 0.3
    inside: bool = False
    count: int = 0

    def update(self, obj_xyz) -> bool:
        """Feed the object's position; True on the step a new visit starts."""
        d = float(np.hypot(obj_xyz[0] - self.xy[0], obj_xyz[1] - self.xy[1]))
        z = float(obj_xyz[2])
        if not self.inside and d <= self.enter_r and z < self.enter_z:
            self.inside = True
            self.count += 1
            return True
        if self.inside and (d > self.leave_r or z >= self.leave_z):
            self.inside = False
        return False

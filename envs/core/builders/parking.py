"""Parking actors out of sight (the Counting tasks).

A dynamic cube that must leave the scene (a deposited cube, a cube not spawned yet) is moved far
behind the front camera (x = +3 m, beyond the camera at x = 0.3 looking toward -x) and left to
rest on the floor; every parked actor has its own slot so they never pile up. A kinematic
visual-only actor is hidden under the table top instead.
"""

from __future__ import annotations

PARK_X = 3.0
FLOOR_Z = -0.92


def park(task, actor, slot: int, half: float = 0.02) -> None:
    """Move a dynamic actor out of the scene (behind the front camera, on the floor)."""
    task.set_xyz(actor, [PARK_X + 0.1 * (slot // 20), -1.0 + 0.1 * (slot % 20), FLOOR_Z + half + 0.005])


def is_parked(task, actor) -> bool:
    return task.pos(actor)[0] > PARK_X - 0.5


def hide_visual(task, actor) -> None:
    """Put a kinematic visual-only actor under the table top, where no camera sees it."""
    task.set_xyz(actor, [0.0, 0.0, -0.5])

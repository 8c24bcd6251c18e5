"""The Permanence tasks' reveal / cover / swap timeline, on the absolute step clock (video and live alike).

* steps 0-31 (``REVEAL_END``): the containers are parked far away, so the cubes are in plain view;
* step 32: every container drops back exactly onto its pose, covering its cube;
* (swap tasks) swap ``s`` runs over steps ``64 + 50 (s-1)`` .. ``64 + 50 s``: the two containers
  trade places along two lanes (straight line plus a sideways bulge ``0.07 sin(pi a)``, opposite
  for the two, with smoothstep timing ``a`` and blended yaw, :func:`lane_pose`); every other
  container is held in place. From step 64 to the end of the last swap the cubes are parked away;
  when the last swap ends each reappears under its (moved) container (:func:`rest_poses_after`).

``UnmaskTask.animate`` (``envs/core/bases/unmask.py``) plays it.
"""

from __future__ import annotations

import numpy as np

REVEAL_END = 32
SWAP_START = 64
SWAP_STEPS = 50
BULGE = 0.07


def square_delta(a: float, b: float) -> float:
    """Smallest rotation taking yaw ``a`` to yaw ``b`` for a square (90-degree symmetry)."""
    q = np.pi / 2
    return float((b - a + q / 2) % q - q / 2)


def rest_poses_after(containers, swaps) -> list[list[tuple[float, float, float]]]:
    """Resting (x, y, yaw) of every container before swap 1, after swap 1, ..., after the last."""
    poses = [(c.x, c.y, c.yaw) for c in containers]
    out = [list(poses)]
    for a, b in swaps:
        pa, pb = poses[a], poses[b]
        poses[a] = (pb[0], pb[1], pa[2] + square_delta(pa[2], pb[2]))
        poses[b] = (pa[0], pa[1], pb[2] + square_delta(pb[2], pa[2]))
        out.append(list(poses))
    return out


def smoothstep(t: float) -> float:
    t = min(max(t, 0.0), 1.0)
    return t * t * (3 - 2 * t)


def lane_pose(start, end, t: float, side: float = 1.0) -> tuple[float, float, float]:
    """(x, y, yaw) of a swapping container at progress ``t`` in [0, 1] going ``start`` -> ``end``.

    The bulge is to the left of the direction of travel (``side=+1``), so the two containers of
    a swap, travelling in opposite directions, keep to two lanes on opposite sides of the line.
    """
    a = smoothstep(t)
    p0, p1 = np.array(start[:2]), np.array(end[:2])
    d = p1 - p0
    n = np.array([-d[1], d[0]]) / max(np.linalg.norm(d), 1e-9)
    p = p0 + a * d + side * BULGE * np.sin(np.pi * a) * n
    yaw = start[2] + a * (end[2] - start[2])
    return float(p[0]), float(p[1]), float(yaw)

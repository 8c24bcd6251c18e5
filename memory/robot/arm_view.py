"""Where the robot's own arm is in the front image, from its joint angles alone.

A real robot knows its joint angles and its camera's calibration; together they say which pixels
its arm can cover. The memory's tools use this to tell "the container moved" from "the arm is in
front of the container" and to name the object under the hand at a grasp, without any simulator
state: the Franka Panda's kinematic parameters are public robot facts, and the camera matrix was
measured once, like any camera-to-base calibration.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FRONT_CAMERA", "TABLE_DEPTH", "arm_covers", "hand_pixel", "panda_frames", "panda_tcp", "to_pixel"]

# Franka Panda, modified Denavit-Hartenberg parameters (a_{i-1}, d_i, alpha_{i-1}); the flange is
# 0.107 past joint 7 and the tool-centre point 0.1034 past the flange, along the hand's z axis.
_PANDA_DH = (
    (0.0, 0.333, 0.0),
    (0.0, 0.0, -np.pi / 2),
    (0.0, 0.316, np.pi / 2),
    (0.0825, 0.0, np.pi / 2),
    (-0.0825, 0.384, -np.pi / 2),
    (0.0, 0.0, np.pi / 2),
    (0.088, 0.0, np.pi / 2),
)
_FLANGE = 0.107
_TCP_OFFSET = _FLANGE + 0.1034

# The fixed front camera's calibration, in the arm's base frame (metres -> homogeneous pixels): rows
# ``(col, row, w)``.
FRONT_CAMERA = np.array([
    [-74.63557956, 166.89016471, -149.27109944, 128.0],
    [74.63551988, 0.0, -223.90665911, 21.27117652],
    [-0.58309047, 0.0, -1.16618046, 1.0],
])


def panda_frames(q) -> list[np.ndarray]:
    """The 4x4 poses of joints 1-7 in the arm's base frame, from the 7 joint angles."""
    T = np.eye(4)
    out = []
    for (a, d, al), th in zip(_PANDA_DH, np.asarray(q, float)[:7]):
        ca, sa, ct, st = np.cos(al), np.sin(al), np.cos(th), np.sin(th)
        T = T @ np.array([[ct, -st, 0, a], [st * ca, ct * ca, -sa, -d * sa], [st * sa, ct * sa, ca, d * ca], [0, 0, 0, 1]])
        out.append(T)
    return out


def panda_tcp(q) -> np.ndarray:
    """Tool-centre point in the arm's base frame (x, y, z metres) from the 7 joint angles."""
    T = panda_frames(q)[-1]
    return T[:3, 3] + T[:3, 2] * _TCP_OFFSET


def to_pixel(p_base) -> tuple[float, float]:
    """A point in the arm's base frame -> ``(row, col)`` in the front image."""
    u, v, w = FRONT_CAMERA @ np.append(np.asarray(p_base, float)[:3], 1.0)
    return float(v / w), float(u / w)


def _depth(p_base) -> float:
    """The camera's homogeneous depth ``w`` of a base-frame point: image sizes scale with ``1 / w``."""
    return float(FRONT_CAMERA[2] @ np.append(np.asarray(p_base, float)[:3], 1.0))


def hand_pixel(q) -> tuple[float, float] | None:
    """Where the tool-centre point at joint angles ``q`` projects in the front image, ``(row, col)``;
    None without joint angles or with the point behind the camera."""
    if q is None or len(q) < 7:
        return None
    tcp = panda_tcp(q)
    return to_pixel(tcp) if _depth(tcp) > 0 else None


TABLE_DEPTH = _depth((0.615, 0.0, 0.02))
"""Depth of the table's centre (the base stands 0.615 m behind it): pixel radii quoted for objects on
the table hold there, and grow by ``TABLE_DEPTH / depth`` for a link nearer the camera."""


def _arm_points(q, per_link: int = 6, hand_samples: int = 6) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Base-frame points ``(skeleton, hand)`` of the arm at joint angles ``q``, from one forward pass.

    The skeleton is sampled along the arm from the elbow to the fingertips: the shoulder links stand
    behind the workspace and never cover the table in this view, so the chain starts at joint 3; the
    last segment runs from the wrist through the flange to the tool-centre point. The hand is the
    segment from the flange to the tool-centre point: the hand, and whatever it holds.
    """
    frames = panda_frames(q)
    T7 = frames[-1]
    flange, tcp = T7[:3, 3] + T7[:3, 2] * _FLANGE, T7[:3, 3] + T7[:3, 2] * _TCP_OFFSET
    chain = [f[:3, 3] for f in frames[2:]] + [flange, tcp]
    skeleton = [a + s * (b - a) for a, b in zip(chain[:-1], chain[1:]) for s in np.linspace(0.0, 1.0, per_link, endpoint=False)]
    skeleton.append(tcp)
    hand = [flange + s * (tcp - flange) for s in np.linspace(0.0, 1.0, hand_samples)]
    return skeleton, hand


def _within(points: list[np.ndarray], yx: np.ndarray, px: float) -> bool:
    """Whether any of ``points`` (base frame) projects within its depth-scaled ``px`` of pixel ``yx``."""
    u, v, w = FRONT_CAMERA @ np.vstack([np.asarray(points, float).T, np.ones(len(points))])  # one projection for all
    reach = px * TABLE_DEPTH / w
    return bool((np.hypot(v / w - yx[0], u / w - yx[1]) <= reach).any())


def arm_covers(q, yx, link_px: float, hand_px: float) -> bool:
    """Whether the arm's projection comes within ``link_px`` of ``yx``, or its hand (and anything in
    its grip, which hangs around the tool-centre point) within ``hand_px``.

    Both radii are the footprint at the table's depth; a link nearer the camera covers more of the
    image in proportion (a hand raised over the front of the table renders twice as wide as one at
    the table's centre, and hides containers its skeleton passes 30-40 px from).
    """
    if q is None or len(q) < 7:
        return False
    yx = np.asarray(yx, float)
    skeleton, hand = _arm_points(q)
    return _within(hand, yx, hand_px) or _within(skeleton, yx, link_px)

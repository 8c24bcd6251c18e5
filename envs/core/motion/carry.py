"""Motions of the Counting tasks: carrying a held cube high between spots, dropping it into an
opening, putting it down where it is, and picking a cube among close neighbours with a grasp yaw
whose fingers keep clear of them."""

from __future__ import annotations

import numpy as np

from envs.core import solvers as S


def carry_to(ex: S.Executor, held, xy, z_obj: float, z_travel: float = 0.15, hold: int = 4) -> S.Actions:
    """Carry the held object over ``xy`` at height ``z_travel`` (clear of every cube on the table),
    then lower it until its centre is at ``z_obj``. The grasp offset is kept, so the object (not
    the TCP) ends over ``xy``."""
    obj = ex.env.pos(held)
    tcp = ex.env.tcp()
    offset = tcp[:2] - obj[:2]
    dz = tcp[2] - obj[2]
    yaw = ex.tcp_yaw()
    x, y = float(xy[0] + offset[0]), float(xy[1] + offset[1])
    if obj[2] < z_travel - 0.01:
        yield from ex.move_to(S.down_pose([tcp[0], tcp[1], z_travel + dz], yaw))
    yield from ex.move_to(S.down_pose([x, y, max(z_travel, z_obj) + dz], yaw))
    if z_obj < z_travel:
        yield from ex.move_to(S.down_pose([x, y, z_obj + dz], yaw))
    yield from ex.hold(hold)


def drop_over(ex: S.Executor, held, xy, z_obj: float = 0.10, retreat_z: float = 0.18) -> S.Actions:
    """Carry the held object over ``xy``, open the gripper at height ``z_obj``, retreat upward."""
    yield from carry_to(ex, held, xy, z_obj, hold=2)
    yaw = ex.tcp_yaw()
    yield from ex.set_gripper(S.OPEN, 8)
    tcp = ex.env.tcp()
    yield from ex.move_to(S.down_pose([tcp[0], tcp[1], retreat_z], yaw))


def put_down_here(ex: S.Executor, held, retreat_z: float = 0.15) -> S.Actions:
    """Lower the held cube straight down onto the table where it is, release, retreat."""
    yield from S.place_at(ex, held, ex.env.pos(held)[:2], retreat_z=retreat_z)


def _angle_gap(a: float, b: float) -> float:
    return float(abs(np.angle(np.exp(1j * (a - b)))))


def clear_grasp_yaw(target_xy, target_yaw: float, neighbours_xy, reference_yaw: float,
                    finger_reach: float = 0.062, finger_half_width: float = 0.012, other_half: float = 0.029) -> float:
    """The grasp yaw (one of the cube's four faces) whose fingers keep clear of the neighbours.

    The open fingers stand about ``finger_reach`` from the grasp centre along the closing
    direction; a neighbour (treated as a disc of radius ``other_half``) is in the way when it
    overlaps that band. Among the faces with every neighbour clear, the one closest to the current
    TCP yaw is chosen (least wrist rotation); if none is clear, the one with the most clearance.
    """
    best = None
    for m in range(4):
        yaw = target_yaw + m * np.pi / 2
        closing = np.array([-np.sin(yaw), np.cos(yaw)])
        ortho = np.array([closing[1], -closing[0]])
        clearance = np.inf
        for n in neighbours_xy:
            r = np.asarray(n, dtype=float)[:2] - np.asarray(target_xy, dtype=float)[:2]
            along, perp = abs(float(r @ closing)), abs(float(r @ ortho))
            clearance = min(clearance, max(along - other_half - finger_reach, perp - other_half - finger_half_width))
        key = (min(clearance, 0.0), -_angle_gap(yaw, reference_yaw))
        if best is None or key > best[0]:
            best = (key, yaw)
    # wrap to the representative closest to the reference
    yaw = best[1]
    return float(reference_yaw + np.angle(np.exp(1j * (yaw - reference_yaw))))


def pick_among(ex: S.Executor, actor, neighbours, lift_to: float = 0.15) -> S.Actions:
    """Top grasp of ``actor`` with the fingers turned away from neighbouring objects, then lift."""
    p = ex.env.pos(actor)
    others = [ex.env.pos(n)[:2] for n in neighbours if n is not actor]
    others = [o for o in others if np.hypot(*(o - p[:2])) < 0.15]
    yaw = clear_grasp_yaw(p[:2], S.yaw_of(actor), others, ex.tcp_yaw())
    if ex.gripper != S.OPEN:
        yield from ex.set_gripper(S.OPEN, 6)
    yield from ex.move_to(S.down_pose([p[0], p[1], p[2] + 0.08], yaw))
    yield from ex.move_to(S.down_pose([p[0], p[1], p[2]], yaw))
    yield from ex.set_gripper(S.CLOSED, 10)
    yield from ex.move_to(S.down_pose([p[0], p[1], lift_to], yaw))

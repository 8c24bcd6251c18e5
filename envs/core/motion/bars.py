"""Grasping and pushing bars (the peg of MoveCube and InsertPeg): the across-the-bar grasp yaw,
the first reachable of several poses, the pick and the push stroke."""

from __future__ import annotations

import numpy as np

from envs.core.motion.trace import Actions, commanded_tip, follow, line_points
from envs.core.solvers import Executor, PlanningFailed, down_pose


def wrap(a: float) -> float:
    return float(np.angle(np.exp(1j * a)))


def bar_grasp_yaw(bar_yaw: float, reference_yaw: float) -> float:
    """Grasp yaw for a bar lying along ``bar_yaw``: fingers close across it, nearest the reference."""
    cands = bar_yaw + np.pi * np.arange(-2, 3)
    return float(cands[np.argmin([abs(wrap(c - reference_yaw)) for c in cands])])


def move_first_reachable(ex: Executor, poses, settle: int = 2) -> Actions:
    """Move to the first of ``poses`` a plan exists for (fallbacks near the reach limit)."""
    last = None
    for pose in poses:
        try:
            path = ex._plan(pose)
        except PlanningFailed as exc:
            last = exc
            continue
        for q in path:
            ex.q_cmd = np.asarray(q[:7], dtype=np.float64)
            yield ex.action()
        yield from ex.hold(settle)
        return
    raise last if last is not None else PlanningFailed("no poses")


def pick_bar(ex: Executor, link, lift_to: float = 0.12, grasp_z: float | None = None) -> Actions:
    """Grasp one link of a lying bar (fingers across it, from above) and lift it.

    Near the edge of the reach a lower approach and a lift that draws the bar toward the robot
    are tried when the straight ones cannot be planned.
    """
    from envs.core.solvers import CLOSED, OPEN, yaw_of

    p = ex.env.pos(link)
    yaw = bar_grasp_yaw(yaw_of(link), ex.tcp_yaw())
    z = p[2] if grasp_z is None else grasp_z
    if ex.gripper != OPEN:
        yield from ex.set_gripper(OPEN, 6)
    yield from move_first_reachable(ex, [down_pose([p[0], p[1], z + dz], yaw) for dz in (0.08, 0.05, 0.03)])
    yield from ex.move_to(down_pose([p[0], p[1], z], yaw), settle=3)
    yield from ex.set_gripper(CLOSED, 10)
    base = ex.env.agent.robot.pose.p[0].cpu().numpy()[:2].astype(float)
    toward = (base - p[:2]) / np.linalg.norm(base - p[:2])
    lifts = [(0.0, lift_to), (0.05, lift_to - 0.02), (0.10, lift_to - 0.04)]
    yield from move_first_reachable(ex, [down_pose([*(p[:2] + d * toward), h], yaw) for d, h in lifts])


def push_stroke(ex: Executor, start_xy, end_xy, z: float, yaw: float, travel_z: float = 0.09, speed: float = 0.005) -> Actions:
    """Lift, go over ``start_xy``, lower to ``z``, slide to ``end_xy`` at ``z``, lift a little."""
    tip = commanded_tip(ex)
    if tip[2] < travel_z - 0.01:
        yield from follow(ex, line_points(tip, [tip[0], tip[1], travel_z]), ex.tcp_yaw(), settle=0)
    yield from ex.move_to(down_pose([start_xy[0], start_xy[1], travel_z], yaw), settle=2)
    yield from follow(ex, line_points([start_xy[0], start_xy[1], travel_z], [start_xy[0], start_xy[1], z]), yaw, settle=2)
    yield from follow(ex, line_points([start_xy[0], start_xy[1], z], [end_xy[0], end_xy[1], z], speed), yaw, settle=4)
    yield from follow(ex, line_points([end_xy[0], end_xy[1], z], [end_xy[0], end_xy[1], z + 0.05]), yaw, settle=2)

"""Cartesian path following for any Panda (gripper or stick) and the stick robot's solvers.

Dense waypoints are turned into joint targets by seeded IK, so a trace is a smooth line or arc
rather than a chain of stop-and-go screw plans; on top of it the stick-robot solvers go over a
point and trace a polyline or a quadratic arc at a fixed height (the Imitation suite).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import sapien

from envs.core.solvers import Executor, PlanningFailed, down_pose

Actions = Iterator[np.ndarray]
TRACE_Z = 0.07  # the stick tip height of every demonstrated trace
HOVER_Z = 0.15  # the stick tip height when travelling between traces


def ik_step(ex: Executor, pose: sapien.Pose, max_jump: float = 0.35) -> np.ndarray:
    """Joint target for a world ``pose`` near the last commanded one (seeded IK)."""
    base = ex.env.agent.robot.pose.p[0].cpu().numpy().astype(float)
    goal = np.hstack([np.asarray(pose.p, dtype=float) - base, pose.q])  # the base is not rotated
    start = np.hstack([ex.q_cmd, ex.fingers])
    for n_init in (1, 8):
        status, sols = ex.planner.IK(goal, start, n_init_qpos=n_init, threshold=2e-3)
        if status == "Success":
            best = min(sols, key=lambda s: np.abs(s[:7] - ex.q_cmd).max())
            if np.abs(best[:7] - ex.q_cmd).max() <= max_jump:
                return np.asarray(best[:7], dtype=np.float64)
    raise PlanningFailed(f"no IK near the current joints for {np.round(pose.p, 3).tolist()}")


def follow(ex: Executor, points, yaw: float, settle: int = 6) -> Actions:
    """Stream joint targets along dense world ``points`` with the TCP pointing down at ``yaw``.

    All IK is solved before the first action, so a path that cannot be followed fails cleanly
    (``PlanningFailed``) without having moved the arm halfway.
    """
    q_save = ex.q_cmd.copy()
    qs = []
    try:
        for p in points:
            ex.q_cmd = ik_step(ex, down_pose(p, yaw))
            qs.append(ex.q_cmd)
    finally:
        ex.q_cmd = q_save
    for q in qs:
        ex.q_cmd = q
        yield ex.action()
    yield from ex.hold(settle)


def eased(n: int) -> np.ndarray:
    """``n`` samples in (0, 1] with a smooth start and stop."""
    s = np.linspace(0, 1, n + 1)[1:]
    return 0.5 - 0.5 * np.cos(np.pi * s)


def line_points(a, b, speed: float = 0.008) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = max(2, int(np.ceil(np.linalg.norm(b - a) / speed * 1.4)))
    s = eased(n)[:, None]
    return a + s * (b - a)


def arc_points(a, b, ctrl, speed: float = 0.008) -> np.ndarray:
    """A quadratic Bezier from ``a`` to ``b`` pulled toward ``ctrl``."""
    a, b, c = (np.asarray(v, float) for v in (a, b, ctrl))
    length = np.linalg.norm(c - a) + np.linalg.norm(b - c)
    n = max(4, int(np.ceil(length / speed * 1.3)))
    s = eased(n)[:, None]
    return (1 - s) ** 2 * a + 2 * (1 - s) * s * c + s**2 * b


def stick_yaw(ex: Executor) -> float:
    return ex.tcp_yaw()


def stick_over(ex: Executor, xy, z: float = TRACE_Z, hover: float = HOVER_Z) -> Actions:
    """Lift the tip to ``hover``, travel over ``xy``, lower it to ``z``."""
    tip = ex.env.tcp()
    yaw = stick_yaw(ex)
    if tip[2] < hover - 0.01:
        yield from follow(ex, line_points(tip, [tip[0], tip[1], hover]), yaw, settle=0)
    yield from ex.move_to(down_pose([xy[0], xy[1], hover], yaw), settle=2)
    yield from follow(ex, line_points([xy[0], xy[1], hover], [xy[0], xy[1], z]), yaw, settle=8)


def stick_line(ex: Executor, xy_to, z: float = TRACE_Z, speed: float = 0.006) -> Actions:
    """Trace a straight line from the commanded tip position to ``xy_to`` at height ``z``."""
    start = commanded_tip(ex)
    yield from follow(ex, line_points([start[0], start[1], z], [xy_to[0], xy_to[1], z], speed), stick_yaw(ex), settle=8)


def stick_arc(ex: Executor, xy_to, ctrl_xy, z: float = TRACE_Z, speed: float = 0.008) -> Actions:
    start = commanded_tip(ex)
    yield from follow(
        ex, arc_points([start[0], start[1], z], [xy_to[0], xy_to[1], z], [ctrl_xy[0], ctrl_xy[1], z], speed), stick_yaw(ex), settle=8
    )


def commanded_tip(ex: Executor) -> np.ndarray:
    """The TCP position of the last commanded joint target (where the arm is heading)."""
    model = ex.planner.pinocchio_model
    model.compute_forward_kinematics(np.hstack([ex.q_cmd, ex.fingers]))
    p = np.asarray(model.get_link_pose(ex.planner.link_name_2_idx[ex.planner.move_group])[:3], dtype=float)
    return p + ex.env.agent.robot.pose.p[0].cpu().numpy().astype(float)


def go_joints(ex: Executor, q_goal, steps: int | None = None, settle: int = 4) -> Actions:
    """Interpolate the arm joints to ``q_goal`` (hidden resets)."""
    q_goal = np.asarray(q_goal, dtype=np.float64)[:7]
    q0 = ex.q_cmd.copy()
    n = steps or max(8, int(np.ceil(np.abs(q_goal - q0).max() / 0.05)))
    for s in eased(n):
        ex.q_cmd = q0 + s * (q_goal - q0)
        yield ex.action()
    yield from ex.hold(settle)

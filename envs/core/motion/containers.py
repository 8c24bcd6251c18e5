"""The Permanence tasks' container solvers: :func:`lift_container` grasps the knob and lifts the
container; :func:`put_down_container` lowers the held container back onto the table."""

from __future__ import annotations

import numpy as np

from envs.core import solvers as S
from envs.core.builders.container import KNOB_Z


def lift_container(ex: S.Executor, container, lift_tcp_z: float = 0.27) -> S.Actions:
    """Grasp the knob of ``container`` from above and lift it (its rim then well above 0.15)."""
    env = ex.env
    tcp = env.tcp()
    p = env.pos(container)
    yaw = S.nearest_yaw(S.yaw_of(container), ex.tcp_yaw())
    knob = p[2] + KNOB_Z + 0.003
    if tcp[2] < knob + 0.06:  # e.g. just let go of another container: rise straight up first
        yield from ex.move_to(S.down_pose([tcp[0], tcp[1], knob + 0.08], ex.tcp_yaw()))
    if ex.gripper != S.OPEN:
        yield from ex.set_gripper(S.OPEN, 6)
    yield from ex.move_to(S.down_pose([p[0], p[1], knob + 0.07], yaw))
    yield from ex.move_to(S.down_pose([p[0], p[1], knob], yaw))
    yield from ex.set_gripper(S.CLOSED, 10)
    # straight up until it clears its neighbours' knobs, then on up; at the far corners of the
    # workspace those poses are out of reach, so the container is drawn toward the robot a bit
    inward = np.array([-0.615, 0.0]) - p[:2]
    inward /= np.linalg.norm(inward)
    for z in (knob + 0.12, lift_tcp_z):
        yield from first_reachable(ex, [S.down_pose([*(p[:2] + d * inward), z], yaw) for d in (0.0, 0.04, 0.08, 0.12)])


def first_reachable(ex: S.Executor, poses) -> S.Actions:
    """Move to the first of ``poses`` the planner can reach (raise if none)."""
    for k, pose in enumerate(poses):
        try:
            motion = ex.move_to(pose)
            first = next(motion)  # planning happens before the first action
        except S.PlanningFailed:
            if k == len(poses) - 1:
                raise
            continue
        yield first
        yield from motion
        return


def put_down_container(ex: S.Executor, container, xy) -> S.Actions:
    """Carry the held container over ``xy``, lower it onto the table, let go and back off."""
    env = ex.env
    tcp, p = env.tcp(), env.pos(container)
    off = tcp[:2] - p[:2]
    dz = tcp[2] - p[2]
    yaw = ex.tcp_yaw()
    x, y = float(xy[0] + off[0]), float(xy[1] + off[1])
    yield from ex.move_to(S.down_pose([x, y, max(tcp[2], 0.2)], yaw))
    yield from ex.move_to(S.down_pose([x, y, dz + 0.004], yaw))
    yield from ex.set_gripper(S.OPEN, 6)
    yield from ex.move_to(S.down_pose([x, y, dz + 0.1], yaw))

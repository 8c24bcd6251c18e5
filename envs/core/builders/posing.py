"""Posing the shared objects (cube, flat disc, button) at their drawn :class:`~envs.core.layouts.scene.Placed`."""

from __future__ import annotations

import numpy as np

from envs.core import primitives as P
from envs.core.layouts.scene import Placed


def pose_cube(env, actor, p: Placed, half=P.CUBE_HALF) -> None:
    env.set_xyz(actor, [p.x, p.y, half], P.yaw_quat(p.yaw))


def pose_flat(env, actor, p: Placed, z: float = 0.003) -> None:
    env.set_xyz(actor, [p.x, p.y, z])


def pose_button(env, button, p: Placed) -> None:
    import sapien

    button.set_pose(sapien.Pose(p=[p.x, p.y, 0.0]))
    button.set_qpos(np.zeros((1, 1)))

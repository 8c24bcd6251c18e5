"""Scene builders of the peg tasks (MoveCube, InsertPeg): the two-link peg articulation and the
box with a square through-hole."""

from __future__ import annotations

import numpy as np
import sapien

from envs.core import primitives as P


def _mat(rgb) -> sapien.render.RenderMaterial:
    return sapien.render.RenderMaterial(base_color=[*rgb, 1.0], roughness=0.5)


def build_peg(scene, name: str, link_len: float, half_cross: float, head_rgb, tail_rgb, density: float = 1000.0):
    """A rigid two-link bar (head link + tail link joined by a fixed joint) along its local x.

    The head link's centre is the articulation root; the tail link sits ``link_len`` further
    along -x. Each link is its own segmentation id, so an end can be grounded and grasped.
    """
    b = scene.create_articulation_builder()
    half = [link_len / 2, half_cross, half_cross]
    head = b.create_link_builder(parent=None)
    head.set_name(f"{name}_head")
    head.add_box_collision(half_size=half, density=density)
    head.add_box_visual(half_size=half, material=_mat(head_rgb))
    tail = b.create_link_builder(head)
    tail.set_name(f"{name}_tail")
    tail.add_box_collision(half_size=half, density=density)
    tail.add_box_visual(half_size=half, material=_mat(tail_rgb))
    tail.set_joint_name(f"{name}_weld")
    tail.set_joint_properties(type="fixed", limits=[], pose_in_parent=sapien.Pose([-link_len, 0, 0]), pose_in_child=sapien.Pose())
    b.initial_pose = sapien.Pose(p=[0, 0, -1.0])
    return b.build(name=name, fix_root_link=False)


def peg_links(peg, name: str):
    return peg.links_map[f"{name}_head"], peg.links_map[f"{name}_tail"]


def pose_peg(peg, x: float, y: float, z: float, yaw: float, link_len: float) -> None:
    """Rest the peg so that its *centre* (the joint between the links) is at (x, y, z)."""
    c, s = np.cos(yaw), np.sin(yaw)
    head = [x + c * link_len / 2, y + s * link_len / 2, z]
    peg.set_pose(sapien.Pose(p=head, q=P.yaw_quat(yaw)))
    import torch

    peg.set_root_linear_velocity(torch.zeros(3))
    peg.set_root_angular_velocity(torch.zeros(3))


def _hole_walls(hole_half: float, outer_half: float, half_depth: float, grow: float = 0.0):
    """(pose, half size) of the four walls around a square hole running along local x."""
    wall = (outer_half - hole_half) / 2
    off = hole_half + wall
    walls = []
    for py, pz, hy, hz in (
        (0.0, off, outer_half, wall),  # roof
        (0.0, -off, outer_half, wall),  # floor
        (off, 0.0, wall, hole_half),  # side
        (-off, 0.0, wall, hole_half),  # side
    ):
        walls.append((sapien.Pose([0.0, py, pz]), [half_depth + grow, hy + grow, hz + grow]))
    return walls


def build_holed_box(scene, name: str, hole_half: float, outer_half: float, half_depth: float, rgb):
    """A fixed box with a square through-hole along its local x axis (four walls around it)."""
    b = scene.create_actor_builder()
    for pose, half in _hole_walls(hole_half, outer_half, half_depth):
        b.add_box_collision(pose=pose, half_size=half)
        b.add_box_visual(pose=pose, half_size=half, material=_mat(rgb))
    b.initial_pose = sapien.Pose(p=[0, 0, -1.0])
    return b.build_kinematic(name=name)


def build_box_core(scene, name: str, hole_half: float, outer_half: float, half_depth: float, rgb=P.RED):
    """A red shell over the box walls, shown after a correct insertion (hidden otherwise)."""
    b = scene.create_actor_builder()
    for pose, half in _hole_walls(hole_half, outer_half, half_depth, grow=0.0015):
        b.add_box_visual(pose=pose, half_size=half, material=_mat(rgb))
    b.initial_pose = sapien.Pose(p=[0, 0, -2.0])
    return b.build_kinematic(name=name)

"""Procedural builders for every object of the 16 tasks (RoboMME ships no meshes).

Each builder returns a ManiSkill actor or articulation placed at the origin; tasks pose them
in ``_initialize_episode``. Sizes are the benchmark's defaults (see robomme_tasks.md §0).
"""

from __future__ import annotations

import numpy as np
import sapien

RED = (1.0, 0.0, 0.0)
GREEN = (0.0, 1.0, 0.0)
BLUE = (0.0, 0.0, 1.0)
COLOURS: dict[str, tuple[float, float, float]] = {"red": RED, "green": GREEN, "blue": BLUE}
# the ood split's distractor and extra cubes (envs/ood.py): hues no in-distribution scene shows
COLOURS.update({"yellow": (1.0, 1.0, 0.0), "cyan": (0.0, 1.0, 1.0), "magenta": (1.0, 0.0, 1.0)})
PURPLE = (160 / 255, 32 / 255, 240 / 255)
GRAY = (128 / 255, 128 / 255, 128 / 255)
WHITE = (1.0, 1.0, 1.0)

CUBE_HALF = 0.02
BUTTON_BASE_HALF = (0.0375, 0.0375, 0.0075)
BUTTON_CAP_RADIUS = 0.0225
BUTTON_CAP_HALF_LEN = 0.009
BUTTON_TRAVEL = 0.02
BUTTON_PRESSED_DEPTH = 0.005
BUTTON_KEEP_OUT_HALF = 0.056


def _material(rgb, roughness: float = 0.5) -> sapien.render.RenderMaterial:
    return sapien.render.RenderMaterial(base_color=[*rgb, 1.0], roughness=roughness)


def build_cube(scene, name: str, rgb, half: float = CUBE_HALF, kinematic: bool = False):
    """A plain coloured cube; dynamic unless ``kinematic`` (StopCube's visual-only cube)."""
    b = scene.create_actor_builder()
    if not kinematic:
        b.add_box_collision(half_size=[half] * 3)
    b.add_box_visual(half_size=[half] * 3, material=_material(rgb))
    b.initial_pose = sapien.Pose(p=[0, 0, half])
    return b.build_kinematic(name=name) if kinematic else b.build(name=name)


def build_target(scene, name: str, rgb, radius: float = 0.04, thickness: float = 0.006):
    """A flat disc of five concentric rings alternating ``rgb`` and white; visual only."""
    b = scene.create_actor_builder()
    for i, frac in enumerate((1.0, 0.8, 0.6, 0.4, 0.2)):
        colour = rgb if i % 2 == 0 else WHITE
        b.add_cylinder_visual(
            radius=radius * frac,
            half_length=thickness / 2 + i * 1e-4,
            # cylinders are built along x; rotate so the disc lies flat on the table
            pose=sapien.Pose(q=[0.7071068, 0, 0.7071068, 0]),
            material=_material(colour),
        )
    b.initial_pose = sapien.Pose(p=[0, 0, thickness / 2])
    return b.build_kinematic(name=name)


def build_disc(scene, name: str, rgb, radius: float, thickness: float = 0.002):
    """A single-colour flat disc (highlights, hidden table spots)."""
    b = scene.create_actor_builder()
    b.add_cylinder_visual(
        radius=radius,
        half_length=thickness / 2,
        pose=sapien.Pose(q=[0.7071068, 0, 0.7071068, 0]),
        material=_material(rgb),
    )
    b.initial_pose = sapien.Pose(p=[0, 0, -1.0])
    return b.build_kinematic(name=name)


def build_button(scene, name: str):
    """A fixed base with a spring-loaded gray cap on a vertical prismatic joint.

    The spring (stiffness 800, damping 40) pushes the cap back to 0; "pressed" means the cap is
    more than 5 mm down. Returns the articulation; ``button_cap(b)`` gives the cap link.
    """
    builder = scene.create_articulation_builder()
    base = builder.create_link_builder(parent=None)
    base.set_name(f"{name}_base")
    hx, hy, hz = BUTTON_BASE_HALF
    base.add_box_collision(pose=sapien.Pose([0, 0, hz]), half_size=[hx, hy, hz])
    base.add_box_visual(pose=sapien.Pose([0, 0, hz]), half_size=[hx, hy, hz], material=_material((0.25, 0.25, 0.25)))
    cap = builder.create_link_builder(base)
    cap.set_name(f"{name}_cap")
    vertical = sapien.Pose(q=[0.7071068, 0, 0.7071068, 0])  # cylinder axis x -> z
    cap.add_cylinder_collision(pose=vertical, radius=BUTTON_CAP_RADIUS, half_length=BUTTON_CAP_HALF_LEN)
    cap.add_cylinder_visual(pose=vertical, radius=BUTTON_CAP_RADIUS, half_length=BUTTON_CAP_HALF_LEN, material=_material(GRAY))
    cap.set_joint_name(f"{name}_joint")
    # The joint axis is the x axis of the joint frame: rotate it to point up.
    up = sapien.Pose(p=[0, 0, 2 * hz + BUTTON_CAP_HALF_LEN], q=[0.7071068, 0, -0.7071068, 0])
    cap.set_joint_properties(
        type="prismatic",
        limits=[[-BUTTON_TRAVEL, 0.0]],
        pose_in_parent=up,
        pose_in_child=sapien.Pose(q=[0.7071068, 0, -0.7071068, 0]),
        friction=0.0,
        damping=0.0,
    )
    builder.initial_pose = sapien.Pose()
    art = builder.build(name=name, fix_root_link=True)
    joint = art.active_joints[0]
    joint.set_drive_properties(stiffness=800, damping=40)
    joint.set_drive_target(0.0)
    return art


def button_cap(button):
    return button.links_map[f"{button.name}_cap"]


def button_depth(button) -> float:
    """How far the cap is pushed down, in metres (positive when pressed)."""
    return float(-button.get_qpos()[0, 0])


def cap_top_z() -> float:
    return 2 * BUTTON_BASE_HALF[2] + 2 * BUTTON_CAP_HALF_LEN


def build_bin_frame(scene, name: str, outer: float = 0.10, hole: float = 0.08, height: float = 0.05):
    """BinFill's square frame, open at top and bottom, light brown, with a black floor square."""
    b = scene.create_actor_builder()
    wall = (outer - hole) / 2
    brown = (0.76, 0.60, 0.42)
    for sx, sy, hx, hy in (
        (0, (hole + wall) / 2, outer / 2, wall / 2),
        (0, -(hole + wall) / 2, outer / 2, wall / 2),
        ((hole + wall) / 2, 0, wall / 2, hole / 2),
        (-(hole + wall) / 2, 0, wall / 2, hole / 2),
    ):
        pose = sapien.Pose([sx, sy, height / 2])
        b.add_box_collision(pose=pose, half_size=[hx, hy, height / 2])
        b.add_box_visual(pose=pose, half_size=[hx, hy, height / 2], material=_material(brown))
    b.add_box_visual(pose=sapien.Pose([0, 0, 0.0005]), half_size=[hole / 2, hole / 2, 0.0005], material=_material((0.02, 0.02, 0.02)))
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


def yaw_quat(yaw: float) -> list[float]:
    return [float(np.cos(yaw / 2)), 0.0, 0.0, float(np.sin(yaw / 2))]

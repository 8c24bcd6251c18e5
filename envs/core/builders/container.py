"""The Permanence tasks' container, built.

A *container* is an open box turned upside down (inner side 0.05, walls 0.005 thick and 0.05
high, a 0.004 top plate) with a 4 cm cube knob centred on its top as a handle. It is dynamic, has
the default untextured material and its origin is the centre of its rim, so ``pos(container)[2]``
is how high it is lifted (0 when it rests on the table). All containers look exactly alike:
which one hides which cube can only be remembered, never seen. Hidden cubes (half-size
``HIDDEN_CUBE_HALF`` = 0.02/1.2) sit under the first three containers.
"""

from __future__ import annotations

import sapien

INNER = 0.05
WALL = 0.005
WALL_HEIGHT = 0.05
PLATE = 0.004
KNOB_HALF = 0.02
OUTER_HALF = INNER / 2 + WALL  # 0.03
KNOB_Z = WALL_HEIGHT + PLATE + KNOB_HALF  # knob centre above the rim: 0.074
TOP_Z = WALL_HEIGHT + PLATE + 2 * KNOB_HALF  # 0.094
HIDDEN_CUBE_HALF = 0.02 / 1.2


def build_container(scene, name: str):
    """An upside-down open box with a cube knob on top; origin at the centre of the rim."""
    b = scene.create_actor_builder()
    h = WALL_HEIGHT / 2
    off = INNER / 2 + WALL / 2
    parts = [
        ((off, 0, h), (WALL / 2, OUTER_HALF, h)),
        ((-off, 0, h), (WALL / 2, OUTER_HALF, h)),
        ((0, off, h), (INNER / 2, WALL / 2, h)),
        ((0, -off, h), (INNER / 2, WALL / 2, h)),
        ((0, 0, WALL_HEIGHT + PLATE / 2), (OUTER_HALF, OUTER_HALF, PLATE / 2)),
        ((0, 0, KNOB_Z), (KNOB_HALF, KNOB_HALF, KNOB_HALF)),
    ]
    for p, half in parts:
        b.add_box_collision(pose=sapien.Pose(p=list(p)), half_size=list(half))
        b.add_box_visual(pose=sapien.Pose(p=list(p)), half_size=list(half))  # default material
    b.initial_pose = sapien.Pose(p=[0, 0, 0])
    return b.build(name=name)

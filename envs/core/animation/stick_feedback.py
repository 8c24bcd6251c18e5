"""Visual feedback of the stick tasks (PatternLock, RouteStick), driven by the step clock: a red
flash on touched nodes (:class:`NodeFlash`) and a white trail of small spheres behind the stick
tip (:class:`TipTrail`); :func:`touched_node` says which node the tip touches."""

from __future__ import annotations

import numpy as np
import sapien

from envs.core import primitives as P

TOUCH_RADIUS = 0.01  # a node is touched when the tip is this close horizontally ...
TOUCH_Z = 0.1  # ... and below this height
FLASH_STEPS = 40
TRAIL_STEPS = 40


class NodeFlash:
    """A red copy of every node, shown for ``FLASH_STEPS`` steps after the node is touched."""

    HIDDEN = [0.0, 0.0, -2.0]

    def __init__(self, task, nodes_xy: np.ndarray, radius: float = 0.02, z: float = 0.012):
        self.task = task
        self.nodes = np.asarray(nodes_xy, float)
        self.z = z
        self.discs = [P.build_target(task.scene, f"flash_{i}", P.RED, radius=radius, thickness=0.004) for i in range(len(self.nodes))]
        self.until = np.full(len(self.nodes), -1)

    def reset(self) -> None:
        self.until[:] = -1
        for d in self.discs:
            self.task.set_xyz(d, self.HIDDEN)

    def flash(self, i: int, clock: int) -> None:
        if self.until[i] < clock:
            self.task.set_xyz(self.discs[i], [*self.nodes[i], self.z])
        self.until[i] = clock + FLASH_STEPS

    def tick(self, clock: int) -> None:
        for i in np.nonzero((self.until >= 0) & (self.until <= clock))[0]:
            self.task.set_xyz(self.discs[i], self.HIDDEN)
            self.until[i] = -1

    def lit(self) -> list[int]:
        return [int(i) for i in np.nonzero(self.until >= 0)[0]]


class TipTrail:
    """Small white spheres left behind the stick tip while it is low; each lives ``TRAIL_STEPS``."""

    HIDDEN = [0.0, 0.0, -2.0]

    def __init__(self, task, radius: float = 0.005, size: int = TRAIL_STEPS):
        self.task = task
        self.spheres = []
        for i in range(size):
            b = task.scene.create_actor_builder()
            b.add_sphere_visual(radius=radius, material=sapien.render.RenderMaterial(base_color=[1, 1, 1, 1]))
            b.initial_pose = sapien.Pose(p=self.HIDDEN)
            self.spheres.append(b.build_kinematic(name=f"trail_{i}"))
        self.born = np.full(size, -1)

    def reset(self) -> None:
        self.born[:] = -1
        for s in self.spheres:
            self.task.set_xyz(s, self.HIDDEN)

    def tick(self, clock: int, tip: np.ndarray) -> None:
        for i in np.nonzero((self.born >= 0) & (self.born + TRAIL_STEPS <= clock))[0]:
            self.task.set_xyz(self.spheres[i], self.HIDDEN)
            self.born[i] = -1
        if tip[2] < TOUCH_Z:
            i = clock % len(self.spheres)
            self.task.set_xyz(self.spheres[i], tip)
            self.born[i] = clock

    def visible(self) -> int:
        return int((self.born >= 0).sum())


def touched_node(tip: np.ndarray, nodes_xy: np.ndarray, radius: float = TOUCH_RADIUS, below: float = TOUCH_Z) -> int | None:
    """Index of the node the tip touches (within ``radius`` horizontally, below ``below``)."""
    if tip[2] >= below:
        return None
    d = np.linalg.norm(np.asarray(nodes_xy) - tip[:2], axis=1)
    i = int(np.argmin(d))
    return i if d[i] < radius else None

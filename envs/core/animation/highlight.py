"""Highlight discs (:class:`HighlightDiscs`, PickHighlight): thin visual-only discs that sit 1 cm
below an object's centre while a step window is open and are parked under the floor otherwise."""

from __future__ import annotations

from envs.core import primitives as P
from envs.core.animation.swaps import actor_pose, put_pose

HIDDEN_Z = -1.0  # below the floor (z = -0.92): out of every camera's view
HIGHLIGHT_RADIUS = 0.05


class HighlightDiscs:
    """One visual-only disc per highlighted object, shown only while a window is open."""

    def __init__(self, scene, objects: list, rgb=P.WHITE, radius: float = HIGHLIGHT_RADIUS, name: str = "highlight"):
        self.objects = list(objects)
        self.discs = [P.build_disc(scene, f"{name}_{i}", rgb, radius) for i in range(len(self.objects))]
        self.visible = False

    def show(self) -> None:
        for disc, obj in zip(self.discs, self.objects):
            p, _ = actor_pose(obj)
            put_pose(disc, [p[0], p[1], p[2] - 0.01], [1, 0, 0, 0])
        self.visible = True

    def hide(self) -> None:
        for disc in self.discs:
            put_pose(disc, [0.0, 0.0, HIDDEN_Z], [1, 0, 0, 0])
        self.visible = False

    def update(self, on: bool) -> None:
        if on:
            self.show()  # follows its object
        elif self.visible:
            self.hide()

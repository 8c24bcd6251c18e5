"""Layout draws of the Reference tasks.

* **Anchor layouts** (:func:`anchor_points`): three points in a triangle or a line, rotated by a
  random angle about the origin (the VideoUnmaskSwap pattern).
* **The hidden table spot** (:func:`sample_table_spot`): a disc-shaped piece of free table,
  sampled like a target and then kept below the table, so the demonstration has somewhere to put
  the cube down that leaves no mark in the scene.
"""

from __future__ import annotations

import math

import numpy as np

from envs.core.layouts.scene import Placed
from envs.core.sampling import TablePlacer

# Anchor shapes of three objects (VideoUnmaskSwap's, reused by VideoRepick)
TRIANGLE_ANCHORS = ((-0.05, -0.1), (-0.05, 0.1), (0.1, 0.0))
LINE_ANCHORS = ((0.0, -0.15), (0.0, 0.15), (0.0, 0.0))


def anchor_points(rng: np.random.Generator) -> tuple[list[tuple[float, float]], str, float]:
    """Three anchors: a triangle or a line (chosen evenly), rotated about the origin."""
    shape = "triangle" if rng.random() < 0.5 else "line"
    base = TRIANGLE_ANCHORS if shape == "triangle" else LINE_ANCHORS
    angle = float(rng.uniform(0.0, 2 * np.pi))
    c, s = math.cos(angle), math.sin(angle)
    pts = [(c * x - s * y, s * x + c * y) for x, y in base]
    return pts, shape, angle


def sample_table_spot(placer: TablePlacer, center, half, radius: float) -> Placed:
    """A free round patch of table, reserved in the sampler and never shown."""
    fp = placer.place(center, half, radius, circle=True, yaw=0.0, min_gap=0.0, what="table spot")
    return Placed("table spot", fp.x, fp.y)

"""Seeded rejection sampling of object footprints on the table.

Footprints are 2-D oriented rectangles or circles. A new footprint is accepted when it does not
overlap any footprint already placed (separating-axis test for rectangles), after padding by
``min_gap``. After ``max_trials`` rejections a :class:`SceneSamplingError` is raised; the episode
manifest then moves on to the next retry seed, as the benchmark's generator does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class SceneSamplingError(RuntimeError):
    """No free spot was found; the caller re-draws the scene with another seed."""


@dataclass(frozen=True)
class Footprint:
    x: float
    y: float
    half_x: float
    half_y: float
    yaw: float = 0.0
    circle: bool = False  # then half_x is the radius

    def corners(self) -> np.ndarray:
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        local = np.array([[1, 1], [1, -1], [-1, -1], [-1, 1]]) * [self.half_x, self.half_y]
        rot = np.array([[c, -s], [s, c]])
        return local @ rot.T + [self.x, self.y]

    def padded(self, gap: float) -> "Footprint":
        return Footprint(self.x, self.y, self.half_x + gap, self.half_y + gap, self.yaw, self.circle)


def _axes(fp: Footprint) -> list[np.ndarray]:
    c, s = np.cos(fp.yaw), np.sin(fp.yaw)
    return [np.array([c, s]), np.array([-s, c])]


def overlaps(a: Footprint, b: Footprint) -> bool:
    if a.circle and b.circle:
        return np.hypot(a.x - b.x, a.y - b.y) < a.half_x + b.half_x
    if a.circle or b.circle:
        circ, rect = (a, b) if a.circle else (b, a)
        # distance from the circle centre to the rectangle, in the rectangle's frame
        c, s = np.cos(-rect.yaw), np.sin(-rect.yaw)
        dx, dy = circ.x - rect.x, circ.y - rect.y
        lx, ly = c * dx - s * dy, s * dx + c * dy
        qx = max(abs(lx) - rect.half_x, 0.0)
        qy = max(abs(ly) - rect.half_y, 0.0)
        return np.hypot(qx, qy) < circ.half_x
    ca, cb = a.corners(), b.corners()
    for axis in _axes(a) + _axes(b):
        pa, pb = ca @ axis, cb @ axis
        if pa.max() <= pb.min() or pb.max() <= pa.min():
            return False
    return True


class TablePlacer:
    """Places footprints one by one inside regions, avoiding everything placed before."""

    def __init__(self, rng: np.random.Generator, avoid: list[Footprint] | None = None):
        self.rng = rng
        self.placed: list[Footprint] = list(avoid or [])

    def avoid(self, fp: Footprint) -> None:
        self.placed.append(fp)

    def place(
        self,
        center: tuple[float, float],
        half_extent: tuple[float, float] | float,
        half_x: float,
        half_y: float | None = None,
        *,
        yaw: float | None = None,
        yaw_range: tuple[float, float] = (0.0, 2 * np.pi),
        circle: bool = False,
        min_gap: float = 0.02,
        max_trials: int = 256,
        what: str = "object",
    ) -> Footprint:
        if np.isscalar(half_extent):
            half_extent = (float(half_extent), float(half_extent))
        hy = half_x if half_y is None else half_y
        for _ in range(max_trials):
            x = center[0] + self.rng.uniform(-half_extent[0], half_extent[0])
            y = center[1] + self.rng.uniform(-half_extent[1], half_extent[1])
            theta = float(self.rng.uniform(*yaw_range)) if yaw is None else yaw
            fp = Footprint(float(x), float(y), half_x, hy, theta, circle)
            test = fp.padded(min_gap)
            if not any(overlaps(test, other) for other in self.placed):
                self.placed.append(fp)
                return fp
        raise SceneSamplingError(f"no free spot for {what} around {center} ± {half_extent}")

"""Layout draws of the objects many tasks share: where the button, the cubes of a region, the
distractors and a target disc go (:class:`Placed`: what an object is and its x, y, yaw)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.sampling import Footprint, TablePlacer


@dataclass(frozen=True)
class Placed:
    """A sampled object: what it is and where it goes (x, y, yaw)."""

    label: str
    x: float
    y: float
    yaw: float = 0.0


def sample_button(rng: np.random.Generator, nominal=(-0.2, 0.0), offset=(0.05, 0.2)) -> Placed:
    x = nominal[0] + rng.uniform(-offset[0], offset[0])
    y = nominal[1] + rng.uniform(-offset[1], offset[1])
    return Placed("button", float(x), float(y))


def button_keep_out(b: Placed) -> Footprint:
    return Footprint(b.x, b.y, P.BUTTON_KEEP_OUT_HALF, P.BUTTON_KEEP_OUT_HALF)


def sample_cubes(placer: TablePlacer, colours: list[str], center, half, min_gap=0.02, half_size=P.CUBE_HALF) -> list[Placed]:
    out = []
    for c in colours:
        fp = placer.place(center, half, half_size, min_gap=min_gap, what=f"{c} cube")
        out.append(Placed(c, fp.x, fp.y, fp.yaw))
    return out


def sample_distractors(rng: np.random.Generator, placer: TablePlacer, count: int, center, half,
                       min_gap=0.02) -> list[Placed]:
    """``count`` clutter cubes in colours no in-distribution scene uses (yellow, cyan, magenta; a
    random choice, cycling when more are asked): the ood split's distractors."""
    from envs.ood import NEW_COLOURS

    order = [str(c) for c in rng.permutation(NEW_COLOURS)]
    return sample_cubes(placer, [order[i % len(order)] for i in range(count)], center, half, min_gap=min_gap)


def sample_target(placer: TablePlacer, label: str, center, half, radius=0.04, min_gap=0.02) -> Placed:
    fp = placer.place(center, half, radius, circle=True, yaw=0.0, min_gap=min_gap, what=label)
    return Placed(label, fp.x, fp.y)

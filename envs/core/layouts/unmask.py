"""Layout draws of the Permanence tasks (:class:`UnmaskLayout`): container poses in a region or at
anchors, the hidden cubes' colours (in distribution and ood), and the swap plan.

The partner of a swap is the container nearest to the mover when the swap starts. The first
mover is a cube container, the second another cube container, the third any container not yet
used as a mover.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core.builders.container import OUTER_HALF
from envs.core.layouts.scene import Placed
from envs.core.sampling import SceneSamplingError, TablePlacer


@dataclass(frozen=True)
class UnmaskLayout:
    """Every random choice of a Permanence episode.

    ``containers[i]`` is the pose of container i at step 0; containers 0-2 hide the cubes whose
    colours are ``cube_colours``; ``pick_colours`` are the cubes to uncover, in order; ``swaps``
    are (mover, partner) container indices, in order; ``buttons`` the button positions.
    """

    containers: tuple[Placed, ...]
    cube_colours: tuple[str, ...]
    pick_colours: tuple[str, ...]
    swaps: tuple[tuple[int, int], ...] = ()
    buttons: tuple[Placed, ...] = ()


def sample_in_region(placer: TablePlacer, center, half, count: int, min_gap: float = 0.04) -> list[Placed]:
    """Up to ``count`` containers in a square region; stops when the region is full."""
    out = []
    for i in range(count):
        try:
            fp = placer.place(center, half, OUTER_HALF, yaw_range=(0.0, np.pi / 2), min_gap=min_gap, what=f"container {i}")
        except SceneSamplingError:
            if len(out) < 3:
                raise
            break
        out.append(Placed("container", fp.x, fp.y, fp.yaw))
    return out


def sample_at_anchors(placer: TablePlacer, anchors, jitter: float = 0.07, min_gap: float = 0.02) -> list[Placed]:
    """One container within ``jitter`` of each anchor point."""
    out = []
    for i, a in enumerate(anchors):
        fp = placer.place((float(a[0]), float(a[1])), jitter, OUTER_HALF, yaw_range=(0.0, np.pi / 2), min_gap=min_gap, what=f"container {i}")
        out.append(Placed("container", fp.x, fp.y, fp.yaw))
    return out


def sample_colours(rng: np.random.Generator, picks: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(colour of the cube under containers 0-2, colours to uncover in order)."""
    under = [str(c) for c in rng.permutation(["red", "green", "blue"])]
    wanted = [str(c) for c in rng.permutation(["red", "green", "blue"])][:picks]
    return tuple(under), tuple(wanted)


def sample_ood_colours(rng: np.random.Generator, picks: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ood split's :func:`sample_colours`: the three hidden cubes drawn from all six cube colours
    (yellow, cyan and magenta among them), ``picks`` of them to uncover in order."""
    under = [str(c) for c in rng.permutation(["red", "green", "blue", "yellow", "cyan", "magenta"])[:3]]
    wanted = [str(c) for c in rng.permutation(under)][:picks]
    return tuple(under), tuple(wanted)


def plan_swaps(rng: np.random.Generator, containers, n_swaps: int, n_cubes: int = 3) -> tuple[tuple[int, int], ...]:
    xy = [np.array([c.x, c.y]) for c in containers]
    movers: list[int] = []
    order = [int(i) for i in rng.permutation(n_cubes)]
    swaps = []
    for s in range(n_swaps):
        if s < 2:
            a = order[s]
        else:
            # every container has moved once (only with more swaps than containers, the ood split's):
            # any container but the last mover
            rest = [i for i in range(len(xy)) if i not in movers] or [i for i in range(len(xy)) if i != movers[-1]]
            a = int(rng.choice(rest))
        movers.append(a)
        d = [np.inf if j == a else float(np.linalg.norm(xy[j] - xy[a])) for j in range(len(xy))]
        b = int(np.argmin(d))
        xy[a], xy[b] = xy[b], xy[a]
        swaps.append((a, b))
    return tuple(swaps)

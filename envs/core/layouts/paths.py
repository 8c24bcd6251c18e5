"""Path draws of the stick tasks: the PatternLock grid path (randomised 8-connected DFS), the
RouteStick random walk, and the compass words of a path's steps."""

from __future__ import annotations

import numpy as np

COMPASS = {
    (1, 0): "forward",
    (-1, 0): "backward",
    (0, 1): "left",
    (0, -1): "right",
    (1, 1): "forward-left",
    (1, -1): "forward-right",
    (-1, 1): "backward-left",
    (-1, -1): "backward-right",
}


STEP_OF = {v: k for k, v in COMPASS.items()}


def compass_word(dxy) -> str:
    """The nearest of the 8 compass words for a displacement (forward = +x, left = +y)."""
    ang = np.arctan2(dxy[1], dxy[0])
    k = int(np.round(ang / (np.pi / 4))) % 8
    step = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)][k]
    return COMPASS[step]


def grid_neighbours(cell: tuple[int, int], n: int) -> list[tuple[int, int]]:
    """8-connected neighbours of ``cell`` = (i along x, j along y) inside an n x n grid."""
    i, j = cell
    return [(i + di, j + dj) for di, dj in COMPASS if 0 <= i + di < n and 0 <= j + dj < n]


def dfs_path(rng: np.random.Generator, n: int, length: tuple[int, int], attempts: int = 1000) -> list[tuple[int, int]]:
    """A random simple path between two random cells, found by randomised 8-connected DFS.

    Accepted when its node count lies in ``length`` (inclusive); raises after ``attempts``.
    """
    from envs.core.sampling import SceneSamplingError

    cells = [(i, j) for i in range(n) for j in range(n)]
    for _ in range(attempts):
        a, b = rng.choice(len(cells), size=2, replace=False)
        start, goal = cells[a], cells[b]
        stack = [start]
        seen = {start}
        frontier = {start: [c for c in rng.permutation(grid_neighbours(start, n)).tolist()]}
        while stack and stack[-1] != goal:
            top = stack[-1]
            nxt = None
            while frontier[top]:
                c = tuple(frontier[top].pop())
                if c not in seen:
                    nxt = c
                    break
            if nxt is None:
                stack.pop()
                continue
            seen.add(nxt)
            stack.append(nxt)
            frontier[nxt] = [c for c in rng.permutation(grid_neighbours(nxt, n)).tolist()]
        if stack and length[0] <= len(stack) <= length[1]:
            return [tuple(int(v) for v in c) for c in stack]
    raise SceneSamplingError(f"no DFS path with {length[0]}-{length[1]} nodes on a {n}x{n} grid")


def random_walk(rng: np.random.Generator, n_nodes: int, steps: int, backtrack: bool) -> list[int]:
    """A walk over ``n_nodes`` in a row; immediate backtracking only if allowed or at an end."""
    walk = [int(rng.integers(n_nodes))]
    for _ in range(steps):
        here = walk[-1]
        options = [k for k in (here - 1, here + 1) if 0 <= k < n_nodes]
        if not backtrack and len(walk) >= 2 and len(options) > 1:
            options = [k for k in options if k != walk[-2]]
        walk.append(int(options[int(rng.integers(len(options)))]))
    return walk

"""The out-of-distribution split: each task pushed past its ``hard`` range, in escalating tiers.

Why a table: the benchmark's own OOD set (``robomme_ood.md``) extrapolates each task along the
parameter its memory has to track (repetitions, passes, deposits, swaps, placements, pattern and
route length, workspace and yaw) and adds clutter (distractor cubes in colours no training scene
shows). Here every such knob is an option of the task's own sampler, read through
:meth:`RoboMMETask.ood_option`; this module only says which values each tier asks for, so there is
one copy of each task and one place that documents the split (the README table is generated from
the same numbers, ``python -m envs.ood``).

An ``ood`` episode samples as ``hard`` with the options of its tier; the tier is given by the
episode index, cycling ``1, 2, ..., n`` so that any run of ``n`` consecutive episodes (0-9 included)
covers every tier. A range ``(lo, hi)`` is drawn uniformly, both ends included, from the episode's
own generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Union

import numpy as np

Value = Union[int, float, str, tuple[int, int]]

NEW_COLOURS: tuple[str, ...] = ("yellow", "cyan", "magenta")
"""Cube colours no in-distribution scene uses: the distractors and the extra hidden cubes."""

OOD_STEP_BUDGET = 1800


@dataclass(frozen=True)
class OodTier:
    """The sampler options one tier of one task sets (``options``), beyond ``hard``."""

    task: str
    tier: int
    options: Mapping[str, Value] = field(default_factory=dict)

    def draw(self, rng: np.random.Generator, name: str) -> int:
        """An integer option: a fixed value, or a draw from the inclusive range ``(lo, hi)``."""
        value = self.options[name]
        if isinstance(value, tuple):
            return int(rng.integers(value[0], value[1] + 1))
        return int(value)

    def get(self, name: str, default=None):
        return self.options.get(name, default)

    def __contains__(self, name: str) -> bool:
        return name in self.options


def _tiers(task: str, *options: dict) -> tuple[OodTier, ...]:
    return tuple(OodTier(task, k + 1, dict(o)) for k, o in enumerate(options))


# task -> tiers (1-based). Training ranges in the comments are the ``hard`` values they extend.
OOD_TIERS: dict[str, tuple[OodTier, ...]] = {
    # repetitions [1-5]; distractor cubes in the new colours
    "PickXtimes": _tiers("PickXtimes",
                         {"repeats": 6, "distractors": 1},
                         {"repeats": 7, "distractors": 2},
                         {"repeats": 8, "distractors": 3}),
    # swings [<= 3]
    "SwingXtimes": _tiers("SwingXtimes", *({"repeats": 3 + k, "distractors": (1, 3)} for k in range(1, 6))),
    # stop on pass [2-5], fastest cube only
    "StopCube": _tiers("StopCube", *({"stop_pass": 5 + k, "fastest": 1} for k in range(1, 6))),
    # deposits [3-5] out of [10-12] on the table
    "BinFill": _tiers("BinFill",
                      {"deposits": 6, "spawn": 12, "colours": (2, 3)},
                      {"deposits": 7, "spawn": 12, "colours": 3}),
    # picks [3] of [6] cubes in red/green/blue, the colour named
    "PickHighlight": _tiers("PickHighlight",
                            {"cubes": 7, "highlights": 4, "any_hue": 1},
                            {"cubes": 8, "highlights": 5, "any_hue": 1}),
    # containers [up to 15 in +-0.2], picks [2] of three red/green/blue cubes
    "VideoUnmask": _tiers("VideoUnmask",
                          {"containers": 15, "picks": 2, "new_colours": 1},
                          {"containers": 15, "picks": 3, "new_colours": 1},
                          {"containers": 18, "picks": 3, "new_colours": 1, "region": 0.22},
                          {"containers": 20, "picks": 3, "new_colours": 1, "region": 0.22}),
    "ButtonUnmask": _tiers("ButtonUnmask",
                          {"containers": 15, "picks": 2, "new_colours": 1},
                          {"containers": 15, "picks": 3, "new_colours": 1},
                          {"containers": 18, "picks": 3, "new_colours": 1, "region": 0.22},
                          {"containers": 20, "picks": 3, "new_colours": 1, "region": 0.22}),
    # swaps [2-3], picks [2]
    "VideoUnmaskSwap": _tiers("VideoUnmaskSwap", *({"swaps": (2 + k, 3 + k), "picks": 2 if k < 3 else 3, "new_colours": 1}
                                                   for k in range(1, 5))),
    "ButtonUnmaskSwap": _tiers("ButtonUnmaskSwap", *({"swaps": (2 + k, 3 + k), "picks": 2 if k < 3 else 3, "new_colours": 1}
                                                     for k in range(1, 5))),
    # swaps [..], re-picks [1-3]
    "VideoRepick": _tiers("VideoRepick",
                          {"cubes": 4, "swaps": (4, 5), "repeats": 2},
                          {"cubes": 5, "swaps": (5, 6), "repeats": 3}),
    # placements [2-4] of four targets
    "VideoPlaceOrder": _tiers("VideoPlaceOrder", {"targets": 5}, {"targets": 6}),
    # targets [hard count]: one and two more
    "VideoPlaceButton": _tiers("VideoPlaceButton", {"extra_targets": 1}, {"extra_targets": 2}),
    # grid [5x5], pattern length [4-8]
    "PatternLock": _tiers("PatternLock",
                          {"length": (9, 11)},
                          {"length": (12, 14)},
                          {"length": (15, 18)}),
    # route steps [4-7]
    "RouteStick": _tiers("RouteStick", {"steps": (8, 9)}, {"steps": (10, 11)}, {"steps": (12, 14)}),
    # a disc workspace around the robot's reach -> an annulus, yaw [+-45 deg] -> the full circle
    "MoveCube": _tiers("MoveCube", {"annulus": 1, "full_yaw": 1}),
    # pegs [3], yaw [+-45 deg]
    "InsertPeg": _tiers("InsertPeg", {"pegs": 4, "full_yaw": 1}),
}


def n_tiers(task: str) -> int:
    return len(OOD_TIERS[task])


def tier_of(task: str, episode_idx: int) -> int:
    """The tier of ``ood`` episode ``episode_idx``: 1, 2, ..., n, 1, 2, ... by index."""
    return 1 + episode_idx % n_tiers(task)


def ood_tier(task: str, tier: int) -> OodTier:
    tiers = OOD_TIERS[task]
    if not 1 <= tier <= len(tiers):
        raise ValueError(f"{task} has ood tiers 1..{len(tiers)}, not {tier!r}")
    return tiers[tier - 1]


def difficulty_name(tier: int) -> str:
    """The difficulty string an ``ood`` episode carries (rows group by it): ``ood1``, ``ood2``, ..."""
    return f"ood{tier}"


def parse_difficulty(difficulty: str) -> tuple[str, int]:
    """``("hard", k)`` for ``oodk``; ``(difficulty, 0)`` for the in-distribution levels."""
    if difficulty.startswith("ood") and difficulty[3:].isdigit():
        return "hard", int(difficulty[3:])
    return difficulty, 0


def markdown_table() -> str:
    """The tier table for the README: one line per task and tier."""
    lines = ["| task | tier | sampler options beyond `hard` |", "|---|---|---|"]
    for task, tiers in OOD_TIERS.items():
        for t in tiers:
            opts = ", ".join(f"{k}={'-'.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in t.options.items())
            lines.append(f"| {task} | {t.tier} | {opts} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())

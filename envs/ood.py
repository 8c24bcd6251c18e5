"""The out-of-distribution split: each task pushed past its ``hard`` range, in escalating tiers.

Why a table: the benchmark's own OOD set (``robomme_ood.md``) extrapolates each task along the
parameter its memory has to track (repetitions, passes, deposits, swaps, placements, pattern and
route length, workspace and yaw) and adds clutter (distractor cubes in colours no training scene
shows). Here every such knob is an option of the task's own sampler, read through
:meth:`RoboMMETask.ood_option`; each task's card (``envs/cards/``) says which values each tier asks for, and
this module draws them, so there is one copy of each task and one place that documents the split (the README table is generated from
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

from envs.cards import all_cards

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


OOD_TIERS: dict[str, tuple[OodTier, ...]] = {c.name: _tiers(c.name, *c.ood_tiers) for c in all_cards()}
"""Task -> its tiers (1-based), read from the task cards (``envs/cards/<task>.py``, ``ood_tiers``)."""


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

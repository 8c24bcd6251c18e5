"""VideoUnmaskSwap: watch cubes being covered and the containers swapped, then uncover one.

Scene: 3 (easy) or 4 (medium, hard) look-alike containers, each within ± 0.07 of an anchor of a
small constellation turned by a random angle about the origin: four corners (-0.05, ±0.1),
(0.1, ±0.1), or for three either a triangle (-0.05, ±0.1), (0.1, 0) or a line (0, -0.15),
(0, 0), (0, 0.15). Three small cubes (red, green, blue, shuffled; half-size 0.02/1.2) sit
under containers 0-2; with four containers one is empty.

Video (inside ``reset``, the robot holds still for 64 + 50 * swaps steps: 114, 164 or 214):
the cubes in view (steps 0-31), the containers dropping onto them (step 32), then 1-2 swaps
(easy, medium) or 2-3 (hard) of 50 steps each from step 64. In a swap two containers trade
places along two lanes that bulge 0.07 to opposite sides, with smoothstep timing and blended
yaw; the others stay put. The first mover hides a cube, the second hides another, a third is
any container not yet moved first; its partner is the container nearest to it when the swap
starts. The cubes are away during the swaps and are back under their containers when the last
swap ends.

Subgoals: "pick up the container that hides the {c0} cube" (grounded on that container); with
two picks (easy: 1 or 2, medium: 1, hard: 2) "put down the container" and "pick up the container
that hides the {c1} cube". Picked: rim above 0.15; put down: below 0.07, released, gripper above
0.05.

Failure: lifting any container other than the one the current subgoal names.

Only memory can answer: where the named cube's container went — the containers look alike, and
only following them through every swap of the video tells which one it is now.
"""

from __future__ import annotations

import numpy as np

from envs.core.animation.container_swaps import SWAP_START, SWAP_STEPS
from envs.core.bases.unmask import UnmaskTask
from envs.core.checker import SubgoalEntry
from envs.core.layouts.unmask import UnmaskLayout, plan_swaps, sample_at_anchors, sample_colours, sample_ood_colours
from envs.core.sampling import TablePlacer

COUNTS = {"easy": 3, "medium": 4, "hard": 4}


def sample_swap_and_pick_counts(rng: np.random.Generator, difficulty: str) -> tuple[int, int]:
    swaps = int(rng.integers(2, 4)) if difficulty == "hard" else int(rng.integers(1, 3))
    picks = {"easy": int(rng.integers(1, 3)), "medium": 1, "hard": 2}[difficulty]
    return swaps, picks


def rotated_anchors(rng: np.random.Generator, count: int) -> np.ndarray:
    if count == 4:
        anchors = np.array([(-0.05, -0.1), (-0.05, 0.1), (0.1, 0.1), (0.1, -0.1)])
    elif rng.random() < 0.5:
        anchors = np.array([(-0.05, -0.1), (-0.05, 0.1), (0.1, 0.0)])  # triangle
    else:
        anchors = np.array([(0.0, -0.15), (0.0, 0.15), (0.0, 0.0)])  # line
    theta = rng.uniform(0.0, 2 * np.pi)
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    return anchors @ rot.T


class VideoUnmaskSwap(UnmaskTask):
    TASK = "VideoUnmaskSwap"
    HAS_VIDEO = True

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> UnmaskLayout:
        anchors = rng.permutation(rotated_anchors(rng, COUNTS[difficulty]))
        containers = sample_at_anchors(TablePlacer(rng), anchors)
        under, _ = sample_colours(rng, 0)
        n_swaps, n_picks = sample_swap_and_pick_counts(rng, difficulty)
        wanted = tuple(str(c) for c in rng.permutation(["red", "green", "blue"])[:n_picks])
        if self.ood is not None:  # more swaps than training ever follows, more picks, new cube colours
            n_swaps = self.ood.draw(rng, "swaps")
            under, wanted = sample_ood_colours(rng, self.ood.draw(rng, "picks"))
        return UnmaskLayout(tuple(containers), under, wanted, swaps=plan_swaps(rng, containers, n_swaps))

    @property
    def video_steps(self) -> int:
        return SWAP_START + SWAP_STEPS * len(self.layout.swaps)

    def goal_texts(self) -> list[str]:
        return [f"watch the video carefully, then {self.goal_suffix()}"]

    def build_subgoals(self) -> list[SubgoalEntry]:
        n = self.video_steps
        watch = SubgoalEntry(
            name="watch the video", template="watch the video",
            success=lambda: self.clock >= n, option="wait",
            demonstration=True, params={"steps": n},
        )
        return [watch, *self.container_entries()]

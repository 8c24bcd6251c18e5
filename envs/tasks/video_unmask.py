"""VideoUnmask: watch cubes being covered by look-alike containers, then uncover the named one.

Scene: containers (3 easy, 5 medium, up to 15 hard; sampling stops once the square region
(0, 0) ± 0.2 is full, gap 0.04, yaw in [0°, 90°)) and three small cubes (red, green, blue in a
shuffled order, half-size 0.02/1.2), each under one of the first three containers.

Video (inside ``reset``, 64 steps, the robot holds still): the containers are away and the cubes
are in plain view for steps 0-31; at step 32 every container drops back onto its pose and covers
whatever lies under it. The policy starts at step 64 facing identical containers.

Subgoals: "pick up the container that hides the {c0} cube" (grounded on that container);
on hard, "put down the container" and "pick up the container that hides the {c1} cube".
A container counts as picked once its rim is above 0.15; put down once it is back below 0.07,
released, with the gripper above 0.05.

Failure: lifting any container other than the one the current subgoal names.

Only memory can answer: which container hides the named cube — the containers look exactly
alike and the cubes under them are out of sight; only the video showed the cubes.
"""

from __future__ import annotations

import numpy as np

from envs.core.animation.container_swaps import REVEAL_END, SWAP_START
from envs.core.bases.unmask import UnmaskTask
from envs.core.checker import SubgoalEntry
from envs.core.layouts.unmask import UnmaskLayout, sample_colours, sample_in_region, sample_ood_colours
from envs.core.sampling import TablePlacer

COUNTS = {"easy": 3, "medium": 5, "hard": 15}
PICKS = {"easy": 1, "medium": 1, "hard": 2}


def sample_covers(task, rng: np.random.Generator, placer: TablePlacer, difficulty: str):
    """The Unmask tasks' containers and the cubes under them: ``(containers, under, wanted)``. On an
    ood tier, more containers over a wider region, more picks, cubes in colours never hidden before."""
    if task.ood is None:
        containers = sample_in_region(placer, (0.0, 0.0), 0.2, COUNTS[difficulty], min_gap=0.04)
        under, wanted = sample_colours(rng, PICKS[difficulty])
    else:
        containers = sample_in_region(placer, (0.0, 0.0), task.ood.get("region", 0.2), task.ood.draw(rng, "containers"),
                                      min_gap=0.04)
        under, wanted = sample_ood_colours(rng, task.ood.draw(rng, "picks"))
    return containers, under, wanted
VIDEO_STEPS = SWAP_START  # 32 steps of cubes in view, 32 of containers down


class VideoUnmask(UnmaskTask):
    TASK = "VideoUnmask"
    HAS_VIDEO = True

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> UnmaskLayout:
        placer = TablePlacer(rng)
        containers, under, wanted = sample_covers(self, rng, placer, difficulty)
        return UnmaskLayout(tuple(containers), under, wanted)

    def goal_texts(self) -> list[str]:
        return [f"watch the video carefully, then {self.goal_suffix()}"]

    def build_subgoals(self) -> list[SubgoalEntry]:
        assert REVEAL_END < VIDEO_STEPS
        watch = SubgoalEntry(
            name="watch the video", template="watch the video",
            success=lambda: self.clock >= VIDEO_STEPS, option="wait",
            demonstration=True, params={"steps": VIDEO_STEPS},
        )
        return [watch, *self.container_entries()]

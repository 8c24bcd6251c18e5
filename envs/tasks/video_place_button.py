"""VideoPlaceButton: put the cube back on the target it sat on right before (or after) the button press.

Scene: a button at (0.1, 0) with offsets ±0.025 in x and ±0.15 in y; one cube (easy) or three
cubes of distinct colours (medium, hard) and three (easy) or four (medium, hard) identical purple
target discs of radius 4 cm, all in the region (0, 0) ± 0.2; a hidden "table spot" of radius
6 cm reserved in (-0.1, 0) ± 0.1 and never shown. One cube is the demonstrated cube. With
probability 1/2 the goal asks about the target used right *before* the press (target_0), else
right *after* it (target_1).

Video (scripted, inside reset): pick the cube and place it on target_0; press the button; pick
it and place it on target_1; pick it and set it down on the hidden table spot; move home and stay
still for 20 steps; stay still for 60 more steps, during the first 50 of which (hard only) two
random targets swap places along two curved lanes; a hidden 30-step arm reset.

Subgoals: "pick up the {colour} cube", then "place the {colour} cube onto the correct target"
(grounded on the correct target, wherever the swap took it).

Failure: lifting any other cube, or setting the cube down on any other target.

Memory: at decision time the cube sits on bare table and the targets are indistinguishable
purple discs; only the video (and, in hard, the swap) tells which one was used when.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core.bases.target_recall import TargetRecallTask
from envs.core.layouts.scene import Placed

TARGET_COUNT = {"easy": 3, "medium": 4, "hard": 4}


@dataclass(frozen=True)
class VideoPlaceButtonLayout:
    button: Placed
    cubes: tuple[Placed, ...]
    targets: tuple[Placed, ...]
    spot: Placed
    target_cube: int
    when: str  # "before" -> target_0 is the answer, "after" -> target_1
    swap: tuple[int, int] | None


class VideoPlaceButton(TargetRecallTask):
    TASK = "VideoPlaceButton"
    SPOT_RADIUS = 0.06

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> VideoPlaceButtonLayout:
        n = TARGET_COUNT[difficulty] + self.ood_option("extra_targets", 0)  # ood: more targets and placements
        button, cubes, targets, spot, target_cube = self.sample_scene(rng, difficulty, n, self.SPOT_RADIUS)
        when = "before" if rng.random() < 0.5 else "after"
        return VideoPlaceButtonLayout(button, cubes, targets, spot, target_cube, when, self.sample_swap(rng, difficulty, n))

    @property
    def correct_target(self) -> int:
        return 0 if self.layout.when == "before" else 1

    def goal_values(self) -> dict[str, object]:
        return {"colour": self.colour, "when": self.layout.when}

    def goal_texts(self) -> list[str]:
        c, when = self.colour, self.layout.when
        where = "last placed before" if when == "before" else "first placed after"
        return [
            f"watch the video carefully, then place the {c} cube on the target right {when} the button was pressed",
            f"watch the video carefully, then place the {c} cube on the target where it was {where} the button was pressed",
        ]

    def visit_entries(self):
        return [
            self.demo_pick_cube(), self.demo_place_on(0),
            self.demo_press("press the button"),
            self.demo_pick_cube(), self.demo_place_on(1),
        ]

    @property
    def n_demonstrated_places(self) -> int:
        return 2

    def truth(self) -> dict:
        return {**super().truth(), "when": self.layout.when, "visit_order": [0, 1], "press_after": 1}

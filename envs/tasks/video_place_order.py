"""VideoPlaceOrder: put the cube back on the k-th target the video placed it on.

Scene: like VideoPlaceButton (a button at (0.1, 0) ± (0.025, 0.15); one cube for easy, three of
distinct colours for medium and hard, in (0, 0) ± 0.2), but always four identical purple targets
and a larger hidden table spot (radius 10 cm, in (-0.1, 0) ± 0.1).

Video (scripted, inside reset): the demonstrated cube is placed in turn on n = 2-4 distinct
targets in random order, and the button is pressed once, right after placement k (k = 1..n, so
possibly after the last one). The cube is then set down on the hidden table spot, the arm goes
home and stays still for 20 steps, then 60 more (hard: two random targets swap places during the
first 50); a hidden 30-step arm reset ends the video.

Goal: "... place the {colour} cube on the {i-th} target it was previously placed on", i = 1..n.
Subgoals: "pick up the {colour} cube", then "place the {colour} cube onto the correct target"
(grounded on the i-th visited target, wherever the swap took it).

On the ood split there are 5-6 targets and the video visits every one (5-6 placements).

Failure: lifting any other cube, or setting the cube down on any other target.

Memory: all targets look alike and the cube sits on bare table at decision time; only the order
of visits in the video (tracked through the swap) names the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core.bases.target_recall import TargetRecallTask
from envs.core.layouts.scene import Placed
from envs.core.rewording import ordinal_values
from subgoals.numbers import ordinal_word

N_TARGETS = 4


@dataclass(frozen=True)
class VideoPlaceOrderLayout:
    button: Placed
    cubes: tuple[Placed, ...]
    targets: tuple[Placed, ...]
    spot: Placed
    target_cube: int
    visit_order: tuple[int, ...]  # target indices in the order the video visits them
    press_after: int  # the press comes right after this many placements (1..n)
    answer: int  # the goal asks for the answer-th visited target (1..n)
    swap: tuple[int, int] | None


class VideoPlaceOrder(TargetRecallTask):
    TASK = "VideoPlaceOrder"
    SPOT_RADIUS = 0.1

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> VideoPlaceOrderLayout:
        # the ood split: more targets, every one of them visited (more placements than training)
        n_targets = N_TARGETS if self.ood is None else self.ood.draw(rng, "targets")
        button, cubes, targets, spot, target_cube = self.sample_scene(rng, difficulty, n_targets, self.SPOT_RADIUS)
        n = int(rng.integers(2, N_TARGETS + 1)) if self.ood is None else n_targets
        order = tuple(int(i) for i in rng.permutation(n_targets)[:n])
        press_after = int(rng.integers(1, n + 1))
        answer = int(rng.integers(1, n + 1))
        return VideoPlaceOrderLayout(button, cubes, targets, spot, target_cube, order, press_after, answer,
                                     self.sample_swap(rng, difficulty, n_targets))

    @property
    def correct_target(self) -> int:
        return self.layout.visit_order[self.layout.answer - 1]

    def goal_values(self) -> dict[str, object]:
        return {"colour": self.colour, **ordinal_values(self.layout.answer)}

    def goal_texts(self) -> list[str]:
        c, nth = self.colour, ordinal_word(self.layout.answer)
        return [
            f"watch the video carefully, then place the {c} cube on the {nth} target it was previously placed on",
            f"watch the video carefully and place the {c} cube on the {nth} target where it was placed",
        ]

    def visit_entries(self):
        entries = []
        for j, t in enumerate(self.layout.visit_order, start=1):
            entries += [self.demo_pick_cube(), self.demo_place_on(t)]
            if j == self.layout.press_after:
                entries.append(self.demo_press("press the button"))
        return entries

    @property
    def n_demonstrated_places(self) -> int:
        return len(self.layout.visit_order)

    def truth(self) -> dict:
        L = self.layout
        return {**super().truth(), "visit_order": list(L.visit_order), "press_after": L.press_after, "answer_index": L.answer}

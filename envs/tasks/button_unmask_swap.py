"""ButtonUnmaskSwap: press two buttons while cubes are covered and swapped, then uncover one.

Scene: two buttons at (-0.2, -0.1) and (-0.2, 0.1), each ± 0.025 per axis; 3 (easy) or 4
(medium, hard) look-alike containers, each within ± 0.07 of an anchor (not rotated): four at
(0, -0.1 + a), (0, 0.1 + a), (0.1, 0.1 + b), (0.1, -0.1 + b) with a, b ~ U(0, 0.1); three at
y = -0.15, 0, 0.15 with x = -0.05 + U(0, 0.1) each, except that in the triangle variant the
middle one sits further out at x = 0.05 + U(0, 0.1). Three small cubes (red, green, blue,
shuffled) sit under containers 0-2.

No video: the whole timeline runs live while the robot presses the buttons. Cubes in view for
steps 0-31, containers down at step 32, then 1-2 (easy, medium) or 2-3 (hard) swaps of 50 steps
each from step 64 (two-lane exchange with a 0.07 bulge, smoothstep timing, blended yaw; the
first mover hides a cube, the second another, a third any container not yet moved first; the
partner is the nearest container). The cubes are away during the swaps and back under their
containers when the last swap ends.

Subgoals: "press the first button", "press the second button" (either order: the second is the
one not pressed yet), then "pick up the container that hides the {c0} cube" (grounded on it);
with two picks (easy: 1 or 2, medium: 1, hard: 2) "put down the container" and "pick up the
container that hides the {c1} cube". The container point is grounded once the last swap is over.

Failure: lifting any container while pressing buttons, or any container other than the one the
current subgoal names.

Only memory can answer: which container hides the named cube — it was seen before step 32 and
must be followed through the swaps that happen while the robot is pressing buttons.
"""

from __future__ import annotations

import numpy as np

from envs.core import primitives as P
from envs.core.bases.button import ButtonMixin
from envs.core.bases.unmask import UnmaskTask
from envs.core.builders.posing import pose_button
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import button_keep_out, sample_button
from envs.core.layouts.unmask import UnmaskLayout, plan_swaps, sample_at_anchors, sample_colours, sample_ood_colours
from envs.core.sampling import TablePlacer
from envs.tasks.video_unmask_swap import COUNTS, sample_swap_and_pick_counts


def anchors(rng: np.random.Generator, count: int) -> np.ndarray:
    if count == 4:
        a, b = rng.uniform(0.0, 0.1, size=2)
        return np.array([(0.0, -0.1 + a), (0.0, 0.1 + a), (0.1, 0.1 + b), (0.1, -0.1 + b)])
    xs = -0.05 + rng.uniform(0.0, 0.1, size=3)
    if rng.random() < 0.5:  # triangle: the middle one further from the robot
        xs[2] = 0.05 + rng.uniform(0.0, 0.1)
    return np.stack([xs, [-0.15, 0.15, 0.0]], axis=1)


class ButtonUnmaskSwap(ButtonMixin, UnmaskTask):
    TASK = "ButtonUnmaskSwap"

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> UnmaskLayout:
        buttons = (
            sample_button(rng, nominal=(-0.2, -0.1), offset=(0.025, 0.025)),
            sample_button(rng, nominal=(-0.2, 0.1), offset=(0.025, 0.025)),
        )
        placer = TablePlacer(rng, [button_keep_out(b) for b in buttons])
        containers = sample_at_anchors(placer, rng.permutation(anchors(rng, COUNTS[difficulty])))
        under, _ = sample_colours(rng, 0)
        n_swaps, n_picks = sample_swap_and_pick_counts(rng, difficulty)
        wanted = tuple(str(c) for c in rng.permutation(["red", "green", "blue"])[:n_picks])
        if self.ood is not None:  # more swaps than training ever follows, more picks, new cube colours
            n_swaps = self.ood.draw(rng, "swaps")
            under, wanted = sample_ood_colours(rng, self.ood.draw(rng, "picks"))
        return UnmaskLayout(tuple(containers), under, wanted, swaps=plan_swaps(rng, containers, n_swaps), buttons=buttons)

    def build_scene(self) -> None:
        super().build_scene()
        self.buttons = [P.build_button(self.scene, f"button_{i}") for i in range(2)]

    def place_scene(self) -> None:
        for b, p in zip(self.buttons, self.layout.buttons):
            pose_button(self, b, p)
        self.first_pressed: int | None = None
        super().place_scene()

    def goal_texts(self) -> list[str]:
        return [f"first press both buttons on the table, then {self.goal_suffix()}"]

    # ------------------------------------------------------------------ predicates
    def first_press(self) -> bool:
        for i, b in enumerate(self.buttons):
            if self.button_pressed(b):
                self.first_pressed = i
                other = self.buttons[1 - i]
                self._second.ground, self._second.target = (P.button_cap(other),), other
                return True
        return False

    def second_press(self) -> bool:
        return self.first_pressed is not None and self.button_pressed(self.buttons[1 - self.first_pressed])

    def build_subgoals(self) -> list[SubgoalEntry]:
        no_lift = lambda: self.other_lifted(None)  # noqa: E731
        first = SubgoalEntry(
            name="press the first button", template="press the first button at <>",
            success=self.first_press, fail=no_lift, option="press",
            ground=(P.button_cap(self.buttons[0]),), target=self.buttons[0],
        )
        # grounded on whichever button is still unpressed once the first press lands
        self._second = SubgoalEntry(
            name="press the second button", template="press the second button at <>",
            success=self.second_press, fail=no_lift, option="press",
            ground=(P.button_cap(self.buttons[1]),), target=self.buttons[1],
        )
        return [first, self._second, *self.container_entries()]

    def candidates(self, option: str):
        if option == "press":
            return [("button", b) for b in self.buttons]
        return super().candidates(option)

    def truth(self) -> dict:
        return {**super().truth(), "first_pressed_button": self.first_pressed}

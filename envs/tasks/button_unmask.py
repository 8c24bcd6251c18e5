"""ButtonUnmask: press the button while cubes are being covered, then uncover the named one.

Scene: as VideoUnmask (containers in (0, 0) ± 0.2, 3/5/up to 15 of them, three small cubes under
the first three), plus a button at (-0.2, 0) ± 0.05 per axis whose keep-out the containers avoid.

No video: the same timeline runs live from the first step, while the robot goes for the button.
For steps 0-31 the containers are away and the cubes are in view; at step 32 the containers
drop back onto their poses and cover the cubes.

Subgoals: "press the button" (grounded on its cap), then "pick up the container that hides the
{c0} cube" (grounded on that container); on hard, "put down the container" and "pick up the
container that hides the {c1} cube". Picked: rim above 0.15; put down: below 0.07, released,
gripper above 0.05. The container point is grounded once the containers are down.

Failure: lifting any container while pressing the button, or any container other than the one
the current subgoal names.

Only memory can answer: which container hides the named cube — the cubes were only in view
during the first 32 steps, while the robot was busy with the button.
"""

from __future__ import annotations

import numpy as np

from envs.core import primitives as P
from envs.core.bases.button import ButtonMixin
from envs.core.bases.unmask import UnmaskTask
from envs.core.builders.posing import pose_button
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import button_keep_out, sample_button
from envs.core.layouts.unmask import UnmaskLayout
from envs.core.sampling import TablePlacer
from envs.tasks.video_unmask import sample_covers


class ButtonUnmask(ButtonMixin, UnmaskTask):
    TASK = "ButtonUnmask"

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> UnmaskLayout:
        button = sample_button(rng, nominal=(-0.2, 0.0), offset=(0.05, 0.05))
        placer = TablePlacer(rng, [button_keep_out(button)])
        containers, under, wanted = sample_covers(self, rng, placer, difficulty)
        return UnmaskLayout(tuple(containers), under, wanted, buttons=(button,))

    def build_scene(self) -> None:
        super().build_scene()
        self.button = P.build_button(self.scene, "button")

    def place_scene(self) -> None:
        pose_button(self, self.button, self.layout.buttons[0])
        super().place_scene()

    def goal_texts(self) -> list[str]:
        return [f"first press the button, then {self.goal_suffix()}"]

    def build_subgoals(self) -> list[SubgoalEntry]:
        press = SubgoalEntry(
            name="press the button", template="press the button at <>",
            success=lambda: self.button_pressed(self.button), fail=lambda: self.other_lifted(None),
            option="press", ground=(P.button_cap(self.button),), target=self.button,
        )
        return [press, *self.container_entries()]

    def candidates(self, option: str):
        if option == "press":
            return [("button", self.button)]
        return super().candidates(option)

"""PickXtimes: pick up one cube and place it on the target N times, then press the button.

Scene: a button near the robot; one (easy) or three (medium, hard) cubes of distinct pure
colours and one purple target disc in the region (-0.1, 0) ± 0.2. One cube is the target cube.
N is 1-3 (easy, medium) or 4-5 (hard); on the ood split 6-8, with 1-3 distractor cubes in
yellow, cyan or magenta (``envs/ood.py``). The repetitions leave no trace in the scene: after the
third place the scene looks like after the first, so only a count of past places tells the robot
whether to pick again or to press the button.

Failure: lifting a non-target cube or pressing the button before the last place; lifting any
cube once the button stage is reached (one repetition too many).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.bases.button import ButtonMixin
from envs.core.builders.posing import pose_button, pose_cube, pose_flat
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import Placed, button_keep_out, sample_button, sample_cubes, sample_distractors, sample_target
from envs.core.probes import ProbeQuestion
from envs.core.rewording import count_values
from envs.core.sampling import TablePlacer
from subgoals.numbers import number_word, ordinal_word
from subgoals.record_names import RecordName


@dataclass(frozen=True)
class PickXtimesLayout:
    button: Placed
    cubes: tuple[Placed, ...]
    target: Placed
    target_cube: int
    repeats: int
    goal_variant: int


class PickXtimes(ButtonMixin, RoboMMETask):
    TASK = "PickXtimes"

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> PickXtimesLayout:
        button = sample_button(rng)
        placer = TablePlacer(rng, [button_keep_out(button)])
        colours = ["red", "green", "blue"]
        rng.shuffle(colours)
        colours = colours[:1] if difficulty == "easy" else colours
        cubes = sample_cubes(placer, colours, (-0.1, 0.0), 0.2)
        target = sample_target(placer, "target", (-0.1, 0.0), 0.2)
        repeats = int(rng.integers(4, 6)) if difficulty == "hard" else int(rng.integers(1, 4))
        target_cube, goal_variant = int(rng.integers(len(cubes))), int(rng.integers(2))
        if self.ood is not None:  # more repetitions than training ever counts, amid new-colour clutter
            repeats = self.ood.draw(rng, "repeats")
            cubes += sample_distractors(rng, placer, self.ood.draw(rng, "distractors"), (-0.1, 0.0), 0.2)
        return PickXtimesLayout(button, tuple(cubes), target, target_cube, repeats, goal_variant)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.button = P.build_button(self.scene, "button")
        self.cubes = [P.build_cube(self.scene, f"cube_{c.label}", P.COLOURS[c.label]) for c in L.cubes]
        self.target = P.build_target(self.scene, "target", P.PURPLE)

    def place_scene(self) -> None:
        L = self.layout
        pose_button(self, self.button, L.button)
        for actor, c in zip(self.cubes, L.cubes):
            pose_cube(self, actor, c)
        pose_flat(self, self.target, L.target)

    @property
    def colour(self) -> str:
        return self.layout.cubes[self.layout.target_cube].label

    @property
    def cube(self):
        return self.cubes[self.layout.target_cube]

    def goal_values(self) -> dict[str, object]:
        return {"colour": self.colour, **count_values(self.layout.repeats)}

    def goal_texts(self) -> list[str]:
        n, c = self.layout.repeats, self.colour
        if n == 1:
            return [f"pick up the {c} cube and place it on the target, then press the button to stop"]
        action = "action" if self.layout.goal_variant == 0 else "pick-and-place action"
        return [
            f"pick up the {c} cube and place it on the target, repeating this {action} {number_word(n)} times, then press the button to stop",
        ]

    # ------------------------------------------------------------------ predicates
    def placed_on_target(self) -> bool:
        cube, tgt = self.pos(self.cube), self.pos(self.target)
        return (
            np.linalg.norm(cube[:2] - tgt[:2]) < 0.05
            and not self.is_grasping(self.cube)
            and cube[2] <= 0.2
            and self.tcp()[2] > 0.05
        )

    def picked(self) -> bool:
        return self.lifted(self.cube) and self.is_grasping(self.cube)

    def other_cube_lifted(self) -> bool:
        return any(self.lifted(a) for i, a in enumerate(self.cubes) if i != self.layout.target_cube)

    def build_subgoals(self) -> list[SubgoalEntry]:
        c = self.colour
        during_reps = lambda: self.other_cube_lifted() or self.button_pressed(self.button)  # noqa: E731
        entries = []
        for k in range(1, self.layout.repeats + 1):
            entries.append(SubgoalEntry(
                name=f"pick up the {c} cube for the {ordinal_word(k)} time",
                template=f"pick up the {c} cube at <> for the {ordinal_word(k)} time",
                success=self.picked, fail=during_reps, option="pick",
                ground=(self.cube,), target=self.cube, params={"repetition": k},
            ))
            entries.append(SubgoalEntry(
                name=f"place the {c} cube onto the target",
                template=f"place the {c} cube onto the target at <>",
                success=self.placed_on_target, fail=during_reps, option="place",
                ground=(self.target,), target=self.target, params={"repetition": k},
            ))
        entries.append(SubgoalEntry(
            name="press the button to stop",
            template="press the button at <> to stop",
            success=lambda: self.button_pressed(self.button),
            fail=lambda: any(self.lifted(a) for a in self.cubes),
            option="press", ground=(P.button_cap(self.button),), target=self.button,
        ))
        return entries

    def candidates(self, option: str):
        if option == "pick":
            return [(f"{c.label} cube", a) for c, a in zip(self.layout.cubes, self.cubes)]
        if option == "place":
            return [("target", self.target)]
        if option == "press":
            return [("button", self.button)]
        return []

    def history_slot(self):
        """After a place, only the count of past places says: pick again, or press the button."""
        e = self.current_entry
        if e is None or e.option not in ("pick", "press"):
            return None
        if e.option == "pick" and e.params["repetition"] == 1:
            return None  # the first pick is never in doubt
        k = sum(1 for x in self.checker.entries[: self.checker.index] if x.option == "place") + 1
        pick = self.ground_template(f"pick up the {self.colour} cube at <> for the {ordinal_word(min(k, 10))} time", self.cube)
        press = self.ground_template("press the button at <> to stop", P.button_cap(self.button))
        return HistorySlot("repeat or stop", (pick, press))

    def probe_questions(self):
        """Questions for the memory assessment: how many repetitions are done so far?"""
        done = self.truth()["places_done"]
        return [ProbeQuestion("count", "how many times has the cube been placed on the target?", RecordName.REPETITIONS, done)]

    def truth(self) -> dict:
        done = sum(1 for e in self.checker.entries[: self.checker.index] if e.option == "place")
        return {"repeats": self.layout.repeats, "places_done": done, "target_colour": self.colour}

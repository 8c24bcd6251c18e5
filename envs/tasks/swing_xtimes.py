"""SwingXtimes: swing one cube back and forth between two targets N times, then press the button.

Scene: a button near the robot; one (easy) or three (medium, hard) cubes of distinct pure
colours in the region (-0.1, 0) ± 0.25, one of them the target cube; two gray target discs of
radius 0.04, one sampled in (-0.1, -0.2) ± 0.1 (the right-side target: smaller y, the robot's
right) and one in (-0.1, +0.2) ± 0.1 (the left-side target). N is 1-3 (easy), 1-2 (medium) or
3 (hard); on the ood split 4-8, with 1-3 distractor cubes in new colours. There is no video: the episode starts live.

Timeline: pick up the cube; carry it over the right-side target, then over the left-side one,
N times; put it down on the table; press the button. A visit is counted when the cube enters a
target from outside (within 0.03 horizontally and below z 0.12; it must have left first, by
going farther than 0.04 or up to z 0.3). Each visit makes that target flash red for 20 steps:
a cue in the front camera that memory can count, after which the scene looks the same whatever
the count.

Subgoals: "pick up the {colour} cube"; N x ["move to the top of the right-side target for the
{k-th} time", "move to the top of the left-side target for the {k-th} time"]; "put the
{colour} cube on the table"; "press the button".

Success: every subgoal in order. Failure: more than 2N visits in all (one swing too many),
lifting a non-target cube, or pressing the button before the button stage.

What only memory can answer: after each visit of the left-side target, whether to swing again
or to put the cube down, i.e. how many round trips are already done.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.bases.button import ButtonMixin
from envs.core.bases.counting import VisitCounter
from envs.core.builders.parking import hide_visual
from envs.core.builders.posing import pose_button, pose_cube, pose_flat
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import Placed, button_keep_out, sample_button, sample_cubes, sample_distractors, sample_target
from envs.core.motion.carry import carry_to, put_down_here
from envs.core.options import held_object
from envs.core.probes import ProbeQuestion
from envs.core.rewording import count_values
from envs.core.sampling import TablePlacer
from subgoals.numbers import number_word, ordinal_word
from subgoals.record_names import RecordName

FLASH_STEPS = 20
HOVER_Z = 0.07  # cube centre height over a target while visiting it (entry needs < 0.12)


@dataclass(frozen=True)
class SwingXtimesLayout:
    button: Placed
    cubes: tuple[Placed, ...]
    right: Placed  # smaller y
    left: Placed
    target_cube: int
    repeats: int
    goal_variant: int


class SwingXtimes(ButtonMixin, RoboMMETask):
    TASK = "SwingXtimes"
    OPTION_PATTERNS = ((r"^put\b.*\bon the table\b", "put_down"),) + RoboMMETask.OPTION_PATTERNS

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> SwingXtimesLayout:
        button = sample_button(rng)
        placer = TablePlacer(rng, [button_keep_out(button)])
        right = sample_target(placer, "right-side target", (-0.1, -0.2), 0.1)
        left = sample_target(placer, "left-side target", (-0.1, 0.2), 0.1)
        colours = ["red", "green", "blue"]
        rng.shuffle(colours)
        colours = colours[:1] if difficulty == "easy" else colours
        cubes = sample_cubes(placer, colours, (-0.1, 0.0), 0.25)
        if difficulty == "easy":
            repeats = int(rng.integers(1, 4))
        elif difficulty == "medium":
            repeats = int(rng.integers(1, 3))
        else:
            repeats = 3
        target_cube, variant = int(rng.integers(len(cubes))), int(rng.integers(2))
        if self.ood is not None:  # more swings than training ever counts, amid new-colour clutter
            repeats = self.ood.draw(rng, "repeats")
            cubes += sample_distractors(rng, placer, self.ood.draw(rng, "distractors"), (-0.1, 0.0), 0.25)
        return SwingXtimesLayout(button, tuple(cubes), right, left, target_cube, repeats, variant)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.button = P.build_button(self.scene, "button")
        self.cubes = [P.build_cube(self.scene, f"cube_{c.label}", P.COLOURS[c.label]) for c in L.cubes]
        self.right = P.build_target(self.scene, "target_right", P.GRAY)
        self.left = P.build_target(self.scene, "target_left", P.GRAY)
        # red ring discs laid over a target while it flashes; hidden under the table otherwise
        self.flash_discs = {side: P.build_target(self.scene, f"flash_{side}", P.RED) for side in ("right", "left")}

    def place_scene(self) -> None:
        L = self.layout
        pose_button(self, self.button, L.button)
        for actor, c in zip(self.cubes, L.cubes):
            pose_cube(self, actor, c)
        pose_flat(self, self.right, L.right)
        pose_flat(self, self.left, L.left)
        for disc in self.flash_discs.values():
            hide_visual(self, disc)
        self.visits = {"right": VisitCounter((L.right.x, L.right.y)), "left": VisitCounter((L.left.x, L.left.y))}
        self.flash_until = {"right": -1, "left": -1}
        self.visit_log: list[tuple[int, str]] = []

    def animate(self, clock: int) -> None:
        cube = self.pos(self.cube)
        for side, counter in self.visits.items():
            if counter.update(cube):
                self.visit_log.append((clock, side))
                if self.flash_until[side] < clock:
                    spot = self.layout.right if side == "right" else self.layout.left
                    self.set_xyz(self.flash_discs[side], [spot.x, spot.y, 0.0045])
                self.flash_until[side] = clock + FLASH_STEPS
            elif self.flash_until[side] == clock:
                hide_visual(self, self.flash_discs[side])

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
            texts = [
                f"pick up the {c} cube, move it to the top of the right-side target, then put it down on the "
                f"left-side target, finally press the button to stop",
                f"pick up the {c} cube, bring it over the right-side target and then set it down on the "
                f"left-side target, and press the button to stop",
            ]
        else:
            texts = [
                f"pick up the {c} cube, move it to the top of the right-side target, then move it to the top of the "
                f"left-side target, repeating this back-and-forth motion {number_word(n)} times, finally press the "
                f"button to stop",
                f"pick up the {c} cube and swing it from above the right-side target to above the left-side target, "
                f"{number_word(n)} round trips in all, then put it down and press the button to stop",
            ]
        v = self.layout.goal_variant
        return [texts[v], texts[1 - v]]

    # ------------------------------------------------------------------ predicates
    @property
    def total_visits(self) -> int:
        return sum(c.count for c in self.visits.values())

    def picked(self) -> bool:
        return self.lifted(self.cube) and self.is_grasping(self.cube)

    def put_down(self) -> bool:
        return not self.is_grasping(self.cube) and self.pos(self.cube)[2] < 0.03 and self.tcp()[2] > 0.06

    def other_cube_lifted(self) -> bool:
        return any(self.lifted(a) for i, a in enumerate(self.cubes) if i != self.layout.target_cube)

    def task_failure(self) -> bool:
        if self.total_visits > 2 * self.layout.repeats or self.other_cube_lifted():
            return True
        e = self.current_entry
        return e is not None and e.option != "press" and self.button_pressed(self.button)

    def _visit_entry(self, side: str, k: int) -> SubgoalEntry:
        target = self.right if side == "right" else self.left
        return SubgoalEntry(
            name=f"move to the top of the {side}-side target for the {ordinal_word(k)} time",
            template=f"move to the top of the {side}-side target at <> for the {ordinal_word(k)} time",
            success=lambda: self.visits[side].count >= k,
            option="move_over", ground=(target,), target=target, params={"side": side, "repetition": k},
        )

    def build_subgoals(self) -> list[SubgoalEntry]:
        c = self.colour
        entries = [SubgoalEntry(
            name=f"pick up the {c} cube", template=f"pick up the {c} cube at <>",
            success=self.picked, option="pick", ground=(self.cube,), target=self.cube,
        )]
        for k in range(1, self.layout.repeats + 1):
            entries.append(self._visit_entry("right", k))
            entries.append(self._visit_entry("left", k))
        entries.append(SubgoalEntry(
            name=f"put the {c} cube on the table", template=f"put the {c} cube on the table",
            success=self.put_down, option="put_down", target=self.cube,
        ))
        entries.append(SubgoalEntry(
            name="press the button", template="press the button at <>",
            success=lambda: self.button_pressed(self.button),
            option="press", ground=(P.button_cap(self.button),), target=self.button,
        ))
        return entries

    def candidates(self, option: str):
        if option in ("pick", "put_down"):
            return [(f"{c.label} cube", a) for c, a in zip(self.layout.cubes, self.cubes)]
        if option == "move_over":
            return [("right-side target", self.right), ("left-side target", self.left)]
        if option == "press":
            return [("button", self.button)]
        return []

    def motion(self, option: str, target, executor, params: dict | None = None):
        if option == "move_over":
            held = held_object(self)
            if held is None:
                return iter(())
            return carry_to(executor, held, self.pos(target)[:2], HOVER_Z)
        if option == "put_down":
            held = held_object(self)
            if held is None:
                return iter(())
            return put_down_here(executor, held)
        return super().motion(option, target, executor, params)

    # ------------------------------------------------------------------ memory audit
    def _lefts_done(self) -> int:
        return sum(1 for e in self.checker.entries[: self.checker.index] if e.params.get("side") == "left")

    def history_slot(self):
        """After a visit of the left-side target: swing again, or put the cube down?"""
        e = self.current_entry
        if e is None:
            return None
        again = e.params.get("side") == "right" and e.params.get("repetition", 1) > 1
        if not (again or e.option == "put_down"):
            return None
        k = self._lefts_done() + 1
        swing = self.ground_template(
            f"move to the top of the right-side target at <> for the {ordinal_word(min(k, 10))} time", self.right)
        return HistorySlot("swing again or put down", (swing, f"put the {self.colour} cube on the table"))

    def probe_questions(self):
        """Questions for the memory assessment: how many target visits and round trips so far?"""
        t = self.truth()
        return [
            ProbeQuestion("count", "how many times has the cube entered a target?", RecordName.TARGET_VISITS,
                          t["visits_right"] + t["visits_left"]),
            ProbeQuestion("count", "how many round trips are done (visits of the left-side target)?", RecordName.ROUND_TRIPS,
                          t["visits_left"]),
        ]

    def truth(self) -> dict:
        return {
            "repeats": self.layout.repeats,
            "target_colour": self.colour,
            "visits_right": self.visits["right"].count,
            "visits_left": self.visits["left"].count,
            "round_trips_done": self._lefts_done(),
            "visit_log": list(self.visit_log),
        }

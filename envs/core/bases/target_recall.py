"""The task base of VideoPlaceButton and VideoPlaceOrder (:class:`TargetRecallTask`, a
:class:`~envs.core.bases.reference.ReferenceTask`): the video visits look-alike targets, the
policy must return to the one the goal describes."""

from __future__ import annotations

import numpy as np

from envs.core import primitives as P
from envs.core.animation.swaps import SwapAnimator
from envs.core.base_task import HistorySlot
from envs.core.bases.reference import ReferenceTask
from envs.core.checker import SubgoalEntry
from envs.core.layouts.reference import sample_table_spot
from envs.core.sampling import TablePlacer
from subgoals.record_names import RecordName


class TargetRecallTask(ReferenceTask):
    """VideoPlaceButton and VideoPlaceOrder: the video places a cube on several look-alike purple
    targets (pressing the button once in between), parks it on a hidden table spot, goes home and
    holds still (hard: two targets swap); the policy must put the cube on the target the goal
    describes relative to that history.

    The layout carries ``button``, ``cubes``, ``targets``, ``spot``, ``target_cube`` and ``swap``
    (a pair of target indices or None); subclasses add the visiting history, ``visit_entries``,
    ``correct_target`` and the goal text.
    """

    HAS_VIDEO = True
    SPOT_RADIUS = 0.06
    FINAL_HOLD = 60

    # ------------------------------------------------------------------ sampling
    @staticmethod
    def sample_scene(rng: np.random.Generator, difficulty: str, n_targets: int, spot_radius: float):
        from envs.core.layouts.scene import button_keep_out, sample_button, sample_cubes, sample_target

        button = sample_button(rng, nominal=(0.1, 0.0), offset=(0.025, 0.15))
        placer = TablePlacer(rng, [button_keep_out(button)])
        spot = sample_table_spot(placer, (-0.1, 0.0), 0.1, spot_radius)
        targets = [sample_target(placer, f"target_{i}", (0.0, 0.0), 0.2) for i in range(n_targets)]
        colours = ["red", "green", "blue"]
        rng.shuffle(colours)
        colours = colours[:1] if difficulty == "easy" else colours
        cubes = sample_cubes(placer, colours, (0.0, 0.0), 0.2)
        target_cube = int(rng.integers(len(cubes)))
        return button, tuple(cubes), tuple(targets), spot, target_cube

    @staticmethod
    def sample_swap(rng: np.random.Generator, difficulty: str, n_targets: int) -> tuple[int, int] | None:
        if difficulty != "hard":
            return None
        a, b = rng.choice(n_targets, size=2, replace=False)
        return int(a), int(b)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.button = P.build_button(self.scene, "button")
        self.cubes = [P.build_cube(self.scene, f"cube_{c.label}", P.COLOURS[c.label]) for c in L.cubes]
        self.targets = [P.build_target(self.scene, f"target_{i}", P.PURPLE) for i in range(len(L.targets))]
        self.swapper = SwapAnimator(self.targets)

    def place_scene(self) -> None:
        from envs.core.builders.posing import pose_button, pose_cube, pose_flat

        L = self.layout
        pose_button(self, self.button, L.button)
        for actor, c in zip(self.cubes, L.cubes):
            pose_cube(self, actor, c)
        for actor, t in zip(self.targets, L.targets):
            pose_flat(self, actor, t)
        self.swapper.log.clear()
        self.reset_phases()

    @property
    def colour(self) -> str:
        return self.layout.cubes[self.layout.target_cube].label

    @property
    def cube(self):
        return self.cubes[self.layout.target_cube]

    @property
    def correct_target(self) -> int:
        raise NotImplementedError

    def visit_entries(self) -> list[SubgoalEntry]:
        """The demonstrated placements and the press, in order."""
        raise NotImplementedError

    @property
    def n_demonstrated_places(self) -> int:
        """How many target places the video shows."""
        raise NotImplementedError

    def probe_questions(self):
        """Questions for the memory assessment, once the video is over: which target the goal asks
        for (the answer is its projected centre now; the candidates are every target's), and how many
        target places the video showed. Record texts are the memory's wording."""
        from envs.core.probes import ProbeQuestion

        e = self.current_entry
        if e is not None and e.demonstration:
            return []
        points = [tuple(float(v) for v in self.project(self.pos_of(t))) for t in self.targets]
        return [
            ProbeQuestion("binding", "which target does the goal ask for?", RecordName.REFERENCE_TARGET,
                          points[self.correct_target], tuple(points)),
            ProbeQuestion("count", "how many target places did the video show?", RecordName.DEMONSTRATED_PLACES,
                          self.n_demonstrated_places),
        ]

    def swap_pair(self, swap) -> tuple[int, int]:
        return tuple(swap)

    # ------------------------------------------------------------------ predicates
    def other_lifted(self) -> bool:
        return self.any_lifted([a for a in self.cubes if a is not self.cube])

    def on_wrong_target(self) -> bool:
        return any(self.resting_on(self.cube, t) for i, t in enumerate(self.targets) if i != self.correct_target)

    # ------------------------------------------------------------------ subgoals
    def demo_pick_cube(self) -> SubgoalEntry:
        return self.demo_pick(self.cube, f"pick up the {self.colour} cube")

    def demo_place_on(self, i: int) -> SubgoalEntry:
        return self.demo_place(self.cube, self.targets[i], f"place the {self.colour} cube onto the target")

    def build_subgoals(self) -> list[SubgoalEntry]:
        L, c = self.layout, self.colour
        entries = self.visit_entries()
        entries += [
            self.demo_pick_cube(),
            self.demo_put_down(self.cube, (L.spot.x, L.spot.y), "put the cube down on the table"),
            self.demo_home(),
        ]
        if L.swap is not None:
            entries.append(self.demo_hold(self.FINAL_HOLD, "stay still while two targets swap", swap=L.swap))
        else:
            entries.append(self.demo_hold(self.FINAL_HOLD, "stay still"))
        entries.append(self.demo_hidden_reset())
        fail = lambda: self.other_lifted() or self.on_wrong_target()  # noqa: E731
        goal = self.targets[self.correct_target]
        entries += [
            SubgoalEntry(name=f"pick up the {c} cube", template=f"pick up the {c} cube at <>",
                         success=lambda: self.picked(self.cube), fail=fail, option="pick",
                         ground=(self.cube,), target=self.cube),
            SubgoalEntry(name=f"place the {c} cube onto the correct target",
                         template=f"place the {c} cube onto the correct target at <>",
                         success=lambda: self.resting_on(self.cube, goal), fail=fail, option="place",
                         ground=(goal,), target=goal),
        ]
        return entries

    def history_slot(self):
        """Which target: every purple target in view looks the same."""
        e = self.current_entry
        if e is None or e.demonstration or e.option != "place":
            return None
        text = f"place the {self.colour} cube onto the correct target at <>"
        return HistorySlot("which target", tuple(self.ground_template(text, t) for t in self.targets))

    def truth(self) -> dict:
        L = self.layout
        return {
            "correct_target": self.correct_target,
            "correct_target_position": self.pos(self.targets[self.correct_target])[:2].round(4).tolist(),
            "target_positions": [self.pos(t)[:2].round(4).tolist() for t in self.targets],
            "cube_colour": self.colour,
            "swapped_targets": None if L.swap is None else list(L.swap),
            "table_spot": [L.spot.x, L.spot.y],
        }

"""VideoRepick: pick up again, N times, the very cube the video picked up; then press the button.

Scene: a button at (-0.2, 0) with offsets ±0.05 on each axis. Easy and medium: three cubes of
one random colour, each within ±0.07 of an anchor point (a triangle or a line of three anchors,
rotated about the origin by a random angle). Hard: fifteen cubes, five rounds of red, green and
blue in shuffled order, in the region (-0.1, 0) ± (0.2, 0.25) with a 3 cm gap (the gap is our
choice: enough for the open fingers). One cube is the demonstrated one.
N (the repetition count) is 1-3. On the ood split: 4-5 cubes of one colour in (-0.05, 0) ±
(0.15, 0.2), 4-6 swaps, N 2-3.

Video (scripted, inside reset): the arm picks the demonstrated cube up and drops it back on
the table. With swaps (easy 1-2, medium 2-3, hard none) it then moves to its home pose, stays
still for 20 steps and stays still for 50 more steps per swap while two cubes exchange places
along two curved lanes; swap 1 moves the demonstrated cube, later swaps start from a random
cube, and the partner is always the cube nearest to it when the swap starts. A hidden 30-step
arm reset ends the video.

Subgoals: N times ["pick up the correct cube for the {k-th} time" (grounded on the demonstrated
cube, wherever the swaps took it), "put it down"], then "press the button to finish".

Failure: lifting any other cube; pressing the button while repetitions remain, between 50 and
500 steps after the policy took over (the benchmark's window); lifting any cube once the button
stage has begun.

Memory: after the put-down (and the swaps) the demonstrated cube looks exactly like its
siblings; only the video says which one it is, and only a count says when to stop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.animation.swaps import SWAP_STEPS, SwapAnimator
from envs.core.base_task import HistorySlot
from envs.core.bases.reference import ReferenceTask
from envs.core.builders.posing import pose_button, pose_cube
from envs.core.checker import SubgoalEntry
from envs.core.layouts.reference import anchor_points
from envs.core.layouts.scene import Placed, button_keep_out, sample_button, sample_cubes
from envs.core.probes import ProbeQuestion
from envs.core.rewording import count_values
from envs.core.sampling import TablePlacer
from subgoals.numbers import number_word, ordinal_word
from subgoals.record_names import RecordName

COLOURS = ("red", "green", "blue")
SWAPS = {"easy": (1, 2), "medium": (2, 3), "hard": (0, 0)}
BUTTON_WINDOW = (50, 500)  # policy steps during which an early press fails


@dataclass(frozen=True)
class VideoRepickLayout:
    button: Placed
    cubes: tuple[Placed, ...]
    target_cube: int
    repeats: int
    swap_firsts: tuple[int, ...]  # the cube each swap starts from (swap 1: the demonstrated cube)
    anchor_shape: str | None  # "triangle" / "line" (easy, medium); None for hard


class VideoRepick(ReferenceTask):
    TASK = "VideoRepick"
    HAS_VIDEO = True

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> VideoRepickLayout:
        button = sample_button(rng, nominal=(-0.2, 0.0), offset=(0.05, 0.05))
        placer = TablePlacer(rng, [button_keep_out(button)])
        if difficulty == "hard":
            colours = []
            for _ in range(5):
                colours += [COLOURS[int(i)] for i in rng.permutation(3)]
            cubes = sample_cubes(placer, colours, (-0.1, 0.0), (0.2, 0.25), min_gap=0.03)
            shape = None
        else:
            colour = COLOURS[int(rng.integers(3))]
            anchors, shape, _ = anchor_points(rng)
            cubes = [sample_cubes(placer, [colour], a, 0.07)[0] for a in anchors]
        target = int(rng.integers(len(cubes)))
        repeats = int(rng.integers(1, 4))
        lo, hi = SWAPS[difficulty]
        n_swaps = int(rng.integers(lo, hi + 1))
        if self.ood is not None:
            # a handful of look-alikes (one colour) swapped more often than training ever shows
            placer = TablePlacer(rng, [button_keep_out(button)])
            colour = COLOURS[int(rng.integers(3))]
            cubes = sample_cubes(placer, [colour] * self.ood.draw(rng, "cubes"), (-0.05, 0.0), (0.15, 0.2), min_gap=0.04)
            shape, target = None, int(rng.integers(len(cubes)))
            repeats, n_swaps = self.ood.draw(rng, "repeats"), self.ood.draw(rng, "swaps")
        firsts = [target] + [int(rng.integers(len(cubes))) for _ in range(n_swaps - 1)]
        return VideoRepickLayout(button, tuple(cubes), target, repeats, tuple(firsts[:n_swaps]), shape)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.button = P.build_button(self.scene, "button")
        self.cubes = [P.build_cube(self.scene, f"cube_{i}_{c.label}", P.COLOURS[c.label]) for i, c in enumerate(L.cubes)]
        self.swapper = SwapAnimator(self.cubes)

    def place_scene(self) -> None:
        L = self.layout
        pose_button(self, self.button, L.button)
        for actor, c in zip(self.cubes, L.cubes):
            pose_cube(self, actor, c)
        self.swapper.log.clear()
        self.reset_phases()

    @property
    def cube(self):
        return self.cubes[self.layout.target_cube]

    def goal_values(self) -> dict[str, object]:
        n = self.layout.repeats
        return {"repeats": "one" if n == 1 else "many", **count_values(n)}

    def goal_texts(self) -> list[str]:
        n = self.layout.repeats
        if n == 1:
            return [
                "watch the video carefully, then pick up the same block that was previously picked up, finally put it down and press the button to stop",
                "watch the video, pick up once more the block that was picked up in it, put it down, then press the button to stop",
            ]
        times = "twice" if n == 2 else f"for {number_word(n)} times"
        return [
            f"watch the video carefully, then repeatedly pick up and put down the same block that was previously picked up {times}, finally put it down and press the button to stop",
            f"watch the video, then pick up and put down the block that was picked up in it {number_word(n)} times, then press the button to stop",
        ]

    # ------------------------------------------------------------------ timeline
    def swap_pair(self, swap: int) -> tuple[int, None]:
        return self.layout.swap_firsts[swap], None  # partner: the nearest cube at that moment

    # ------------------------------------------------------------------ predicates
    def other_lifted(self) -> bool:
        return self.any_lifted([a for a in self.cubes if a is not self.cube])

    def early_press(self) -> bool:
        lo, hi = BUTTON_WINDOW
        return self.button_pressed(self.button) and lo <= self.policy_steps() <= hi

    def build_subgoals(self) -> list[SubgoalEntry]:
        L = self.layout
        entries = [
            self.demo_pick(self.cube, "pick up the cube"),
            self.demo_put_down(self.cube, None, "drop the cube on the table"),
        ]
        if L.swap_firsts:
            entries.append(self.demo_home())
            for s in range(len(L.swap_firsts)):
                entries.append(self.demo_hold(SWAP_STEPS, "stay still while the cubes swap", swap=s))
        entries.append(self.demo_hidden_reset())
        during = lambda: self.other_lifted() or self.early_press()  # noqa: E731
        for k in range(1, L.repeats + 1):
            entries.append(SubgoalEntry(
                name=f"pick up the correct cube for the {ordinal_word(k)} time",
                template=f"pick up the correct cube at <> for the {ordinal_word(k)} time",
                success=lambda: self.picked(self.cube), fail=during, option="pick",
                ground=(self.cube,), target=self.cube, params={"repetition": k},
            ))
            entries.append(SubgoalEntry(
                name="put it down", template="put it down", success=lambda: self.resting(self.cube),
                fail=during, option="put_down", params={"repetition": k},
            ))
        cap = P.button_cap(self.button)
        entries.append(SubgoalEntry(
            name="press the button to finish", template="press the button at <> to finish",
            success=lambda: self.button_pressed(self.button), fail=lambda: self.any_lifted(self.cubes),
            option="press", ground=(cap,), target=self.button,
        ))
        return entries

    def picks_done(self) -> int:
        return sum(1 for e in self.checker.entries[: self.checker.index] if e.option == "pick" and not e.demonstration)

    def history_slot(self):
        """Which cube was demonstrated, and, once a repetition is done, whether to stop.

        Alternatives: the pick grounded on every cube in view (the goal names no colour, so
        without the video any of them could be the one; in easy and medium all three look the
        same), plus, from the second pick on, pressing the button.
        """
        e = self.current_entry
        if e is None or e.demonstration or e.option not in ("pick", "press"):
            return None
        k = self.picks_done() + 1
        picks = tuple(
            self.ground_template(f"pick up the correct cube at <> for the {ordinal_word(min(k, 10))} time", a)
            for a in self.cubes
        )
        press = self.ground_template("press the button at <> to finish", P.button_cap(self.button))
        if e.option == "pick" and k == 1:
            return HistorySlot("which cube", picks)
        return HistorySlot("which cube, or stop", (*picks, press))

    def probe_questions(self):
        """Questions for the memory assessment, once the video is over: where the demonstrated cube
        is (asked while it rests on the table; candidates: every resting cube) and how many picks of
        it are done (asked while it rests and the hand does not hold it). Record texts are the
        memory's wording."""
        e = self.current_entry
        if e is not None and e.demonstration:
            return []
        resting = {i: tuple(float(v) for v in self.project(self.pos_of(a))) for i, a in enumerate(self.cubes)
                   if self.pos(a)[2] < 0.03}
        out = []
        if self.layout.target_cube in resting and not self.is_grasping(self.cube):
            # asked between picks: while the cube is in the hand a pick is under way, and whether it
            # is counted yet depends on the height one calls lifted (the checker's 5 cm), not on memory
            out.append(ProbeQuestion("count", "how many times has the demonstrated cube been picked up again?",
                                     RecordName.REFERENCE_CUBE_PICKS, self.picks_done()))
        if self.layout.target_cube in resting:
            out.append(ProbeQuestion("binding", "where is the cube the video picked up?", RecordName.REFERENCE_CUBE,
                                     resting[self.layout.target_cube], tuple(resting.values())))
        return out

    def truth(self) -> dict:
        L = self.layout
        return {
            "demonstrated_cube": L.target_cube,
            "demonstrated_colour": L.cubes[L.target_cube].label,
            "demonstrated_position": self.pos(self.cube)[:2].round(4).tolist(),
            "start_position": [L.cubes[L.target_cube].x, L.cubes[L.target_cube].y],
            "swaps": [list(p) for p in self.swapper.log],
            "repeats": L.repeats,
            "picks_done": self.picks_done() if self.checker else 0,
        }

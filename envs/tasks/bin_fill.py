"""BinFill: put a given number of cubes of each named colour into the bin, then press the button.

Scene: a button near the robot; the "bin", a light-brown square frame open at top and bottom
(outer side 0.10, hole 0.08, height 0.05, a black square on the table inside the hole), kinematic,
centred at x = 0.15 + U(-0.2, 0), y = U(-0.2, 0.2), yaw U(-20°, 20°); and many cubes of one
(easy), two (medium) or three (hard) colours in the region (-0.1, 0) ± (0.2, 0.25):

    difficulty | colours present | cubes spawned | colours to deposit | cubes to deposit
    easy       | 1               | 4-6           | 1                  | 1-3
    medium     | 2               | 8-10          | 1-2                | 2-4
    hard       | 3               | 10-12         | 2-3                | 3-5

Each colour to deposit gets one cube of the total, the rest go one at a time to a random colour
to deposit; every colour present spawns at least max(its target, 1) cubes, the other cubes go to
random colours, and the spawn order is shuffled. There is no video.

Timeline: with probability 0.5 the episode is "dynamic": within each colour the cube of index
i >= 1 is away at the start and appears in its place at step 50·i, so cubes keep arriving while
the robot works. A cube dropped into the bin (released within 0.05 of the bin centre, below
z 0.2, gripper open and more than 2 cm from the TCP) is removed from the scene and its colour's
counter goes up: the bin never shows how many cubes it has received.

Subgoals: for each colour to deposit, in a random order, target-count times: "pick up the {k-th}
{colour} cube" (any cube lifted) and "put it into the bin" (one more deposit); then "press the
button".

Success: every subgoal in order. Failure: pressing the button before the last deposit; per-colour
deposit counts that differ from the targets once the button stage is reached (a wrong colour,
one cube too few or too many), including any deposit during the button stage.

What only memory can answer: after each deposit, how many cubes of each colour are already in the
bin, i.e. whether to pick another cube of this colour, switch colour, or press the button.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.bases.button import ButtonMixin
from envs.core.builders.parking import park
from envs.core.builders.posing import pose_button, pose_cube
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import Placed, button_keep_out, sample_button
from envs.core.motion.carry import drop_over, pick_among
from envs.core.options import held_object
from envs.core.probes import ProbeQuestion
from envs.core.rewording import amounts_values
from envs.core.sampling import TablePlacer
from subgoals.numbers import number_word, ordinal_word
from subgoals.record_names import deposited

OWED = "a cube of a colour still owed"
"""The choice a pick of any colour the bin still lacks makes (the goal sets no order among colours)."""

APPEAR_EVERY = 50  # dynamic mode: cube i >= 1 of a colour appears at step 50·i
DROP_Z = 0.10  # cube centre height when released over the bin (the walls are 0.05 high)
BIN_OUTER, BIN_HOLE, BIN_HEIGHT = 0.10, 0.08, 0.05

# difficulty -> (colours present, cubes spawned range, colours to deposit range, cubes to deposit range)
COUNT_TABLE = {
    "easy": (1, (4, 6), (1, 1), (1, 3)),
    "medium": (2, (8, 10), (1, 2), (2, 4)),
    "hard": (3, (10, 12), (2, 3), (3, 5)),
}


@dataclass(frozen=True)
class BinFillLayout:
    button: Placed
    bin: Placed
    cubes: tuple[Placed, ...]  # in spawn order; label = colour
    index_in_colour: tuple[int, ...]  # i-th cube of its colour (appearance order)
    targets: tuple[tuple[str, int], ...]  # (colour, count) in subgoal order
    dynamic: bool
    goal_variant: int

    def target_of(self, colour: str) -> int:
        return dict(self.targets).get(colour, 0)


class BinFill(ButtonMixin, RoboMMETask):
    TASK = "BinFill"

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> BinFillLayout:
        n_present, spawn_range, colour_range, deposit_range = COUNT_TABLE[difficulty]
        button = sample_button(rng)
        placer = TablePlacer(rng, [button_keep_out(button)])
        fp = placer.place((0.05, 0.0), (0.1, 0.2), BIN_OUTER / 2, yaw_range=(-np.pi / 9, np.pi / 9), min_gap=0.01,
                          what="bin")
        bin_ = Placed("bin", fp.x, fp.y, fp.yaw)

        colours = ["red", "green", "blue"]
        rng.shuffle(colours)
        present = colours[:n_present]
        n_spawn = int(rng.integers(spawn_range[0], spawn_range[1] + 1))
        n_colours = int(rng.integers(colour_range[0], colour_range[1] + 1))
        n_deposit = int(rng.integers(deposit_range[0], deposit_range[1] + 1))
        if self.ood is not None:  # more deposits than training ever counts, out of a full table
            n_spawn, n_colours, n_deposit = (self.ood.draw(rng, k) for k in ("spawn", "colours", "deposits"))
        chosen = list(present[:n_colours])  # present is already shuffled: a random subset, random order
        target = {c: 1 for c in chosen}
        for _ in range(n_deposit - len(chosen)):
            target[chosen[int(rng.integers(len(chosen)))]] += 1
        spawn = {c: max(target.get(c, 0), 1) for c in present}
        for _ in range(n_spawn - sum(spawn.values())):
            spawn[present[int(rng.integers(len(present)))]] += 1
        order = [c for c in present for _ in range(spawn[c])]
        rng.shuffle(order)

        cubes, index_in_colour, seen = [], [], {c: 0 for c in present}
        for c in order:
            f = placer.place((-0.1, 0.0), (0.2, 0.25), P.CUBE_HALF, min_gap=0.02, what=f"{c} cube")
            cubes.append(Placed(c, f.x, f.y, f.yaw))
            index_in_colour.append(seen[c])
            seen[c] += 1
        dynamic = bool(rng.random() < 0.5)
        return BinFillLayout(button, bin_, tuple(cubes), tuple(index_in_colour),
                             tuple((c, target[c]) for c in chosen), dynamic, int(rng.integers(2)))

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.button = P.build_button(self.scene, "button")
        self.bin = P.build_bin_frame(self.scene, "bin", BIN_OUTER, BIN_HOLE, BIN_HEIGHT)
        self.cubes = [P.build_cube(self.scene, f"cube_{i}_{c.label}", P.COLOURS[c.label])
                      for i, c in enumerate(L.cubes)]

    def place_scene(self) -> None:
        L = self.layout
        pose_button(self, self.button, L.button)
        self.set_xyz(self.bin, [L.bin.x, L.bin.y, 0.0], P.yaw_quat(L.bin.yaw))
        self.away = [False] * len(self.cubes)  # parked: not spawned yet, or deposited
        self.deposited = [False] * len(self.cubes)
        for i, (actor, c) in enumerate(zip(self.cubes, L.cubes)):
            if L.dynamic and L.index_in_colour[i] >= 1:
                park(self, actor, i)
                self.away[i] = True
            else:
                pose_cube(self, actor, c)
        self.counts = dict.fromkeys((p.label for p in L.cubes), 0)
        self.deposit_log: list[tuple[int, str]] = []

    def appear_step(self, i: int) -> int:
        return APPEAR_EVERY * self.layout.index_in_colour[i] if self.layout.dynamic else 0

    def animate(self, clock: int) -> None:
        L = self.layout
        if L.dynamic:
            for i, actor in enumerate(self.cubes):
                if self.away[i] and not self.deposited[i] and clock >= self.appear_step(i):
                    pose_cube(self, actor, L.cubes[i])
                    self.away[i] = False
        self._detect_deposits(clock)

    def _detect_deposits(self, clock: int) -> None:
        centre = np.array([self.layout.bin.x, self.layout.bin.y])
        gripper_open = self.qpos()[7] > 0.03
        if not gripper_open:
            return
        tcp = self.tcp()
        for i, actor in enumerate(self.cubes):
            if self.away[i]:
                continue
            p = self.pos(actor)
            if np.hypot(*(p[:2] - centre)) > 0.05 or p[2] > 0.2 or np.linalg.norm(p - tcp) <= 0.02:
                continue
            if self.is_grasping(actor):
                continue
            colour = self.layout.cubes[i].label
            self.counts[colour] += 1
            self.deposit_log.append((clock, colour))
            self.deposited[i] = self.away[i] = True
            park(self, actor, i)

    # ------------------------------------------------------------------ language
    def _amount(self, colour: str, n: int) -> str:
        return f"{number_word(n)} {colour} cube{'s' if n > 1 else ''}"

    def goal_values(self) -> dict[str, object]:
        return amounts_values(list(self.layout.targets))

    def goal_texts(self) -> list[str]:
        parts = [self._amount(c, n) for c, n in self.layout.targets]
        listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        texts = [f"put {listed} into the bin, then press the button to stop",
                 f"put {listed} into the bin and press the button to stop"]
        v = self.layout.goal_variant
        return [texts[v], texts[1 - v]]

    # ------------------------------------------------------------------ predicates
    @property
    def total_deposits(self) -> int:
        return len(self.deposit_log)

    def any_cube_lifted(self) -> bool:
        return any(not self.away[i] and self.lifted(a) for i, a in enumerate(self.cubes))

    def counts_match(self) -> bool:
        colours = set(self.counts) | {c for c, _ in self.layout.targets}
        return all(self.counts.get(c, 0) == self.layout.target_of(c) for c in colours)

    def task_failure(self) -> bool:
        e = self.current_entry
        return e is not None and e.option != "press" and self.button_pressed(self.button)

    def cube_of(self, colour: str, k: int):
        """The k-th (1-based, appearance order) cube of ``colour``."""
        for i, c in enumerate(self.layout.cubes):
            if c.label == colour and self.layout.index_in_colour[i] == k - 1:
                return self.cubes[i]
        raise IndexError(f"no {ordinal_word(k)} {colour} cube")

    def build_subgoals(self) -> list[SubgoalEntry]:
        entries, done = [], 0
        for colour, n in self.layout.targets:
            for k in range(1, n + 1):
                cube = self.cube_of(colour, k)
                entries.append(SubgoalEntry(
                    name=f"pick up the {ordinal_word(k)} {colour} cube",
                    template=f"pick up the {ordinal_word(k)} {colour} cube at <>",
                    success=self.any_cube_lifted, option="pick", ground=(cube,), target=cube,
                    params={"colour": colour, "k": k, "deposits_before": done},
                ))
                done += 1
                entries.append(SubgoalEntry(
                    name="put it into the bin", template="put it into the bin at <>",
                    success=lambda d=done: self.total_deposits >= d, option="place",
                    ground=(self.bin,), target=self.bin, params={"colour": colour, "k": k},
                ))
        entries.append(SubgoalEntry(
            name="press the button", template="press the button at <>",
            success=lambda: self.button_pressed(self.button), fail=lambda: not self.counts_match(),
            option="press", ground=(P.button_cap(self.button),), target=self.button,
            params={"deposits_before": done},
        ))
        return entries

    def visible_cubes(self) -> list[int]:
        return [i for i in range(len(self.cubes)) if not self.away[i]]

    def candidates(self, option: str):
        if option == "pick":
            return [(f"{self.layout.cubes[i].label} cube", self.cubes[i]) for i in self.visible_cubes()]
        if option == "place":
            return [("bin", self.bin)]
        if option == "press":
            return [("button", self.button)]
        return []

    def motion(self, option: str, target, executor, params: dict | None = None):
        if option == "pick":
            return pick_among(executor, target, [self.cubes[i] for i in self.visible_cubes()])
        if option == "place":
            held = held_object(self)
            if held is None:
                return iter(())
            return drop_over(executor, held, self.pos(target)[:2], DROP_Z)
        return super().motion(option, target, executor, params)

    # ------------------------------------------------------------------ memory audit
    def history_slot(self):
        """Before each pick after the first, and before the press: which colour next, or stop?

        A memoryless predictor sees the cubes on the table and reads the goal, but not how many of
        each colour the bin already received: it may pick any goal colour still on the table, or
        press the button.
        """
        e = self.current_entry
        if e is None or e.option not in ("pick", "press") or e.params.get("deposits_before", 0) == 0:
            return None
        alternatives = []
        for colour, _ in self.layout.targets:
            vis = [i for i in self.visible_cubes() if self.layout.cubes[i].label == colour]
            if not vis:
                continue
            k = self.counts.get(colour, 0) + 1
            want = [i for i in vis if self.layout.index_in_colour[i] == k - 1]
            cube = self.cubes[(want or vis)[0]]
            alternatives.append(self.ground_template(
                f"pick up the {ordinal_word(min(k, 10))} {colour} cube at <>", cube))
        alternatives.append(self.ground_template("press the button at <>", P.button_cap(self.button)))
        owed = frozenset(c for c, _ in self.layout.targets if self.counts.get(c, 0) < self.layout.target_of(c))
        # in a dynamic episode the next cube of an owed colour may not have arrived yet: then nothing
        # can be picked rightly, and holding still (acting on nothing) is the right step
        none_to_pick = bool(owed) and not any(self.layout.cubes[i].label in owed for i in self.visible_cubes())

        def accepts(does) -> bool:  # a pick of any colour still owed; the press once none is
            if none_to_pick and (does is None or does[1] is None):
                return True
            if does is None:
                return False
            return does[1] == OWED if owed else does[0] == "press"

        return HistorySlot("which colour next, or stop", tuple(alternatives),
                           choice_of=lambda obj: self._colour_or_object(obj, owed), accepts=accepts)

    def _colour_or_object(self, obj, owed: frozenset = frozenset()) -> object:
        """The decision a pick makes here is a colour, and the goal sets no order among colours: a cube
        of any colour still owed (``owed``, as at the decision) is the right next pick; a cube of a
        colour already complete is a decision of its own."""
        for actor, placed in zip(self.cubes, self.layout.cubes):
            if actor is obj:
                return OWED if placed.label in owed else ("colour", placed.label)
        return id(obj)

    def probe_questions(self):
        """Questions for the memory assessment: how many cubes of each goal colour are in the bin?"""
        return [ProbeQuestion("count", f"how many {c} cubes are in the bin?", deposited(c, "cube"), self.counts.get(c, 0))
                for c, _ in self.layout.targets]

    def truth(self) -> dict:
        return {
            "targets": dict(self.layout.targets),
            "deposited": dict(self.counts),
            "dynamic": self.layout.dynamic,
            "spawned": {c: sum(1 for p in self.layout.cubes if p.label == c) for c in self.counts},
            "appear_steps": [self.appear_step(i) for i in range(len(self.cubes))],
            "deposit_log": list(self.deposit_log),
        }

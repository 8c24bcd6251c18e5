"""PickHighlight: press the button, then pick up every cube that was highlighted while you did.

Scene: a button near the robot ((-0.2, 0), offsets ±0.05 in x and ±0.2 in y) and 3 (easy),
4 (medium) or 6 (hard) cubes in the region (-0.1, 0) ± 0.2 with a 4 cm gap; each cube's colour
is drawn independently from red/green/blue, so look-alikes are common. One, two or three of the
cubes (easy, medium, hard) are the highlighted ones. On the ood split 4-5 of 7-8 cubes are, each
cube of an arbitrary hue, and the pick subgoals name no colour.

Timeline (live, no video): from step 10 to step 100 a white disc of radius 5 cm lies under each
highlighted cube, i.e. while the robot goes to press the button. The discs also go away the
moment the button is pressed, so they are never visible once the pick stage has begun (our
solver presses faster than step 100; the benchmark's window is 10-100 only).

Subgoals: "press the button"; then, per highlighted cube, "pick up the {k-th} highlighted cube,
which is {colour}" (just "the highlighted cube" when there is one), with "place the cube onto the
table" between picks. The pick stage is order-free: the k-th pick succeeds once k distinct
highlighted cubes have been lifted while grasped, and the k-th pick subgoal is grounded, when it
begins, on the first highlighted cube (in sampling order) not picked yet.

Success: every highlighted cube has been lifted while grasped at least once, in any order.
Failure: lifting a cube that was not highlighted during the pick stage. (The benchmark's button
entry has a failure check that never fires; here it has none.)

Memory: once the discs are gone the highlighted cubes look exactly like the others, often of
the same colour; only a record of the highlight says which to pick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.animation.highlight import HighlightDiscs
from envs.core.base_task import HistorySlot
from envs.core.bases.reference import ReferenceTask
from envs.core.builders.posing import pose_button, pose_cube
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import Placed, button_keep_out, sample_button, sample_cubes
from envs.core.probes import ProbeQuestion
from envs.core.sampling import TablePlacer
from subgoals.numbers import ordinal_word
from subgoals.record_names import RecordName

COLOURS = ("red", "green", "blue")
CUBE_COUNT = {"easy": 3, "medium": 4, "hard": 6}
HIGHLIGHT_COUNT = {"easy": 1, "medium": 2, "hard": 3}
HIGHLIGHT_WINDOW = (10, 100)  # absolute steps during which the discs are shown


def any_hue(rng: np.random.Generator) -> tuple[float, float, float]:
    """A vivid cube colour of arbitrary hue (the ood split's): hue U(0, 360), saturation and value
    U(0.75, 1) so it reads as a coloured cube like the in-distribution ones, whatever its name."""
    import colorsys

    h, sat, val = rng.uniform(0.0, 1.0), rng.uniform(0.75, 1.0), rng.uniform(0.75, 1.0)
    return tuple(float(v) for v in colorsys.hsv_to_rgb(h, sat, val))


@dataclass(frozen=True)
class PickHighlightLayout:
    button: Placed
    cubes: tuple[Placed, ...]
    highlighted: tuple[int, ...]  # cube indices, in the oracle's pick order (far to near)
    rgbs: tuple[tuple[float, float, float], ...] | None = None  # ood: each cube's own arbitrary hue


class PickHighlight(ReferenceTask):
    TASK = "PickHighlight"

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> PickHighlightLayout:
        button = sample_button(rng)
        placer = TablePlacer(rng, [button_keep_out(button)])
        colours = [COLOURS[int(i)] for i in rng.integers(0, 3, size=CUBE_COUNT[difficulty])]
        cubes = sample_cubes(placer, colours, (-0.1, 0.0), 0.2, min_gap=0.04)
        chosen = rng.choice(len(cubes), size=HIGHLIGHT_COUNT[difficulty], replace=False)
        # the oracle picks far-to-near as seen by the front camera, so the arm, resting above the
        # cube it just put down, never hides the next one from view
        chosen = sorted((int(i) for i in chosen), key=lambda i: cubes[i].x)
        if self.ood is None:
            return PickHighlightLayout(button, tuple(cubes), tuple(chosen))
        # more cubes and more picks than training, in arbitrary hues that no colour word names
        placer = TablePlacer(rng, [button_keep_out(button)])
        n = self.ood.draw(rng, "cubes")
        cubes = sample_cubes(placer, ["cube"] * n, (-0.1, 0.0), 0.2, min_gap=0.04)
        chosen = rng.choice(n, size=self.ood.draw(rng, "highlights"), replace=False)
        chosen = sorted((int(i) for i in chosen), key=lambda i: cubes[i].x)
        return PickHighlightLayout(button, tuple(cubes), tuple(chosen), tuple(any_hue(rng) for _ in range(n)))

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.button = P.build_button(self.scene, "button")
        rgbs = L.rgbs or tuple(P.COLOURS[c.label] for c in L.cubes)
        self.cubes = [P.build_cube(self.scene, f"cube_{i}_{c.label}", rgb) for i, (c, rgb) in enumerate(zip(L.cubes, rgbs))]
        self.highlights = HighlightDiscs(self.scene, [self.cubes[i] for i in L.highlighted])

    def place_scene(self) -> None:
        L = self.layout
        pose_button(self, self.button, L.button)
        for actor, c in zip(self.cubes, L.cubes):
            pose_cube(self, actor, c)
        self.highlights.hide()
        self.reset_phases()
        self.picked_ids: list[int] = []  # highlighted cubes lifted while grasped, in order
        self.press_done = False

    def goal_texts(self) -> list[str]:
        return [
            # the benchmark's wording, its typo included
            "first press the button, then pick up all cubes that have been highlighteted with white areas on the table",
            "first press the button, then pick up all highlighted cubes, finally press the button again to stop",
        ]

    # ------------------------------------------------------------------ timeline
    def highlight_on(self, clock: int) -> bool:
        return HIGHLIGHT_WINDOW[0] <= clock <= HIGHLIGHT_WINDOW[1] and not self.press_done

    def animate(self, clock: int) -> None:
        self.track_phase(clock)
        self.highlights.update(self.highlight_on(clock))
        for i in self.layout.highlighted:
            if i not in self.picked_ids and self.picked(self.cubes[i]):
                self.picked_ids.append(i)

    def on_enter(self, index: int) -> None:
        if index >= 1 and not self.press_done:
            self.press_done = True
            self.highlights.update(False)  # gone before the pick stage is ever looked at
        entry = self.current_entry
        if entry is not None and entry.option == "pick":
            self._assign_pick(entry)

    # ------------------------------------------------------------------ predicates
    @property
    def others(self) -> list:
        return [a for i, a in enumerate(self.cubes) if i not in self.layout.highlighted]

    def other_lifted(self) -> bool:
        return self.any_lifted(self.others)

    def last_put_down(self) -> bool:
        return bool(self.picked_ids) and self.resting(self.cubes[self.picked_ids[-1]])

    # ------------------------------------------------------------------ subgoals
    def _pick_words(self, k: int, colour: str) -> tuple[str, str]:
        which = "highlighted cube" if len(self.layout.highlighted) == 1 else f"{ordinal_word(k)} highlighted cube"
        if self.layout.rgbs is not None:  # arbitrary hues: the subgoal names no colour
            return f"pick up the {which}", f"pick up the {which} at <>"
        return f"pick up the {which}, which is {colour}", f"pick up the {which} at <>, which is {colour}"

    def _assign_pick(self, entry: SubgoalEntry) -> None:
        """Ground the k-th pick on the first highlighted cube not picked yet."""
        k = entry.params["k"]
        todo = [i for i in self.layout.highlighted if i not in self.picked_ids]
        i = todo[0] if todo else self.layout.highlighted[k - 1]
        entry.name, entry.template = self._pick_words(k, self.layout.cubes[i].label)
        entry.ground, entry.target = (self.cubes[i],), self.cubes[i]
        entry.params["cube"] = i

    def build_subgoals(self) -> list[SubgoalEntry]:
        cap = P.button_cap(self.button)
        entries = [SubgoalEntry(
            name="press the button", template="press the button at <>",
            success=lambda: self.button_pressed(self.button), option="press", ground=(cap,), target=self.button,
        )]
        n = len(self.layout.highlighted)
        for k in range(1, n + 1):
            entry = SubgoalEntry(name="", template="", option="pick", fail=self.other_lifted,
                                 success=lambda k=k: len(self.picked_ids) >= k, params={"k": k})
            i = self.layout.highlighted[k - 1]
            entry.name, entry.template = self._pick_words(k, self.layout.cubes[i].label)
            entry.ground, entry.target, entry.params["cube"] = (self.cubes[i],), self.cubes[i], i
            entries.append(entry)
            if k < n:
                entries.append(SubgoalEntry(
                    name="place the cube onto the table", template="place the cube onto the table",
                    success=self.last_put_down, fail=self.other_lifted, option="put_down", params={"k": k},
                ))
        return entries

    def history_slot(self):
        """Which cube was highlighted: any cube in view could be the one."""
        e = self.current_entry
        if e is None or e.option != "pick":
            return None
        alts = []
        for c, actor in zip(self.layout.cubes, self.cubes):
            alts.append(self.ground_template(self._pick_words(e.params["k"], c.label)[1], actor))
        picked = frozenset(self.picked_ids)  # as at the decision, before the subgoal runs
        return HistorySlot("which cube", tuple(dict.fromkeys(alts)),
                           choice_of=lambda obj: self._highlighted_or_object(obj, picked))

    def _highlighted_or_object(self, obj, picked: frozenset) -> object:
        """Any highlighted cube not picked yet is the right next pick (the goal sets no order)."""
        for i in self.layout.highlighted:
            if self.cubes[i] is obj and i not in picked:
                return "a highlighted cube not picked yet"
        return id(obj)

    def probe_questions(self):
        """Questions for the memory assessment: how many cubes were highlighted, and, while one
        highlighted cube is left to pick, where it is (candidates: every cube resting on the table).
        The record texts are the memory's wording (``memory.language.words.highlight_binding``)."""
        if self.clock < HIGHLIGHT_WINDOW[0]:
            return []
        L = self.layout
        out = [ProbeQuestion("count", "how many cubes were highlighted?", RecordName.HIGHLIGHTED_CUBES, len(L.highlighted))]
        left = [i for i in L.highlighted if i not in self.picked_ids]
        resting = {i: tuple(float(v) for v in self.project(self.pos_of(a))) for i, a in enumerate(self.cubes)
                   if self.pos(a)[2] < 0.03}
        if len(left) == 1 and left[0] in resting:
            out.append(ProbeQuestion("binding", "where is the highlighted cube not picked yet?", RecordName.HIGHLIGHTED_CUBE,
                                     resting[left[0]], tuple(resting.values())))
        return out

    def truth(self) -> dict:
        L = self.layout
        return {
            "highlighted": list(L.highlighted),
            "highlighted_colours": [L.cubes[i].label for i in L.highlighted],
            "picked": list(self.picked_ids),
            "current_cube": None if self.current_entry is None else self.current_entry.params.get("cube"),
            "cube_positions": [self.pos(a)[:2].round(4).tolist() for a in self.cubes],
        }

"""PatternLock: watch the stick trace a pattern over a grid of dots, then retrace it.

Scene: the stick robot (``panda_stick``: a Panda with a rigid stick instead of a gripper) and an
n x n grid of gray ring dots (radius 0.02, spacing 0.10, centred at (-0.1, 0) on the table):
3 x 3 (easy), 4 x 4 (medium) or 5 x 5 (hard). A pattern is a simple path over the grid found by a
randomised 8-connected depth-first search between two random dots (diagonal steps allowed); it
has 2-4 (easy), 3-5 (medium) or 4-8 (hard) dots; 9-18 on the ood split (5 x 5 grid).

A dot is *touched* when the stick tip is within 0.01 of it horizontally and below z 0.1. A touched
dot flashes red for 40 steps; while the tip is below 0.1 it leaves small white spheres behind that
fade after 40 steps.

Timeline: the conditioning video shows the stick tracing the pattern dot by dot at z 0.07 (its
hidden first move takes it to the first dot; the joint pose there is remembered). Hidden resets
then take the arm home and back to that pose, so the policy starts with the stick over the first
dot, in a scene that looks like any other: the dots are all alike again.

Subgoals: one per edge of the pattern, "move {forward|backward|left|right|forward-left|
forward-right|backward-left|backward-right}" (the nearest compass direction; forward = +x, away
from the robot; left = +y). An edge is done when its end dot is touched.

Success: every edge done, and the last L dots touched since the video are the pattern (L its
length). Failure: touching any dot other than the expected next one or the one just left.

Only memory answers: which way to go next. Every dot offers up to eight directions and nothing in
the scene tells the demonstrated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core.animation.stick_feedback import NodeFlash, TipTrail
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.bases.stick import StickTaskMixin
from envs.core.checker import SubgoalEntry
from envs.core.layouts.paths import COMPASS, STEP_OF, dfs_path, grid_neighbours
from envs.core.motion.trace import TRACE_Z, stick_line, stick_over
from envs.core.probes import ProbeQuestion
from subgoals.record_names import RecordName

GRID_CENTRE = (-0.1, 0.0)
SPACING = 0.10
DOT_RADIUS = 0.02
DOT_Z = 0.01
SIZES = {"easy": 3, "medium": 4, "hard": 5}
LENGTHS = {"easy": (2, 4), "medium": (3, 5), "hard": (4, 8)}
DIRECTIONS = tuple(COMPASS.values())


@dataclass(frozen=True)
class PatternLockLayout:
    n: int
    path: tuple[tuple[int, int], ...]  # grid cells (i along x, j along y)


class PatternLock(StickTaskMixin, RoboMMETask):
    TASK = "PatternLock"
    ROBOT = "panda_stick"
    HAS_VIDEO = True

    OPTION_PATTERNS = tuple((rf"^move {re.escape(w)}$", f"move_{w}") for w in sorted(DIRECTIONS, key=len, reverse=True)) + RoboMMETask.OPTION_PATTERNS

    # ------------------------------------------------------------------ layout
    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> PatternLockLayout:
        n = SIZES[difficulty]
        length = LENGTHS[difficulty] if self.ood is None else self.ood.get("length")  # ood: 9-18 dots
        return PatternLockLayout(n, tuple(dfs_path(rng, n, length)))

    def cell_xy(self, cell) -> np.ndarray:
        n = self.layout.n
        i, j = cell
        return np.array([GRID_CENTRE[0] + (i - (n - 1) / 2) * SPACING, GRID_CENTRE[1] + (j - (n - 1) / 2) * SPACING])

    def index_of(self, cell) -> int:
        return int(cell[0]) * self.layout.n + int(cell[1])

    def cell_of(self, index: int) -> tuple[int, int]:
        return divmod(int(index), self.layout.n)

    @property
    def path_nodes(self) -> list[int]:
        return [self.index_of(c) for c in self.layout.path]

    @property
    def directions(self) -> list[str]:
        p = self.layout.path
        return [COMPASS[(b[0] - a[0], b[1] - a[1])] for a, b in zip(p[:-1], p[1:])]

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        n = self.layout.n
        self.nodes_xy = np.array([self.cell_xy(self.cell_of(k)) for k in range(n * n)])
        self.dots = [P.build_target(self.scene, f"dot_{k}", P.GRAY, radius=DOT_RADIUS, thickness=0.004) for k in range(n * n)]
        self.flash = NodeFlash(self, self.nodes_xy, radius=DOT_RADIUS)
        self.trail = TipTrail(self)

    def place_scene(self) -> None:
        for d, xy in zip(self.dots, self.nodes_xy):
            self.set_xyz(d, [xy[0], xy[1], DOT_Z])
        self.start_xy = self.nodes_xy[self.path_nodes[0]]
        self.reset_stick_state()

    def goal_texts(self) -> list[str]:
        return [
            "watch the video carefully, then use the stick attached to the robot to retrace the same pattern",
            "after watching the video, retrace the demonstrated pattern over the dots with the robot's stick",
        ]

    def animate(self, clock: int) -> None:
        self.stick_animate(clock)

    # ------------------------------------------------------------------ predicates
    def edge_done(self, k: int, last: bool = False):
        nodes = self.path_nodes

        def done() -> bool:
            if not self.touch_log or self.touch_log[-1] != nodes[k + 1]:
                return False
            return not last or self.touch_log[-len(nodes):] == nodes

        return done

    def edge_wrong_touch(self, k: int):
        allowed = {self.path_nodes[k], self.path_nodes[k + 1]}
        return lambda: (t := self.touching()) is not None and t not in allowed

    def build_subgoals(self) -> list[SubgoalEntry]:
        dirs = self.directions
        first = self.path_nodes[0]
        entries = [SubgoalEntry(
            name="move the stick to the first dot", template="move the stick to the first dot",
            success=self.phases.is_done("approach"), option="stick_start", demonstration=True, record=False,
        )]
        for k, w in enumerate(dirs):
            entries.append(SubgoalEntry(
                name=f"move {w}", template=f"move {w}", success=self.edge_done(k), option=f"move_{w}",
                demonstration=True, params={"edge": k},
            ))
        entries.append(SubgoalEntry(
            name="return over the first dot", template="return over the first dot",
            success=self.phases.is_done("return"), option="stick_return", demonstration=True, record=False,
            params={"node": first},
        ))
        for k, w in enumerate(dirs):
            entries.append(SubgoalEntry(
                name=f"move {w}", template=f"move {w}", success=self.edge_done(k, last=k == len(dirs) - 1),
                fail=self.edge_wrong_touch(k), option=f"move_{w}", params={"edge": k},
            ))
        return entries

    # ------------------------------------------------------------------ options
    def candidates(self, option: str):
        if option.startswith("move_"):
            return [("stick", self.agent.tcp)]
        return []

    def motion(self, option, target, executor, params=None):
        params = params or {}
        if option == "stick_start":
            return self.approach_start(executor)
        if option == "stick_return":
            return self.return_to_start(executor)
        if option.startswith("move_"):
            word = option[len("move_"):]
            return self.each_subgoal(executor, lambda ex: self._edge(ex, word))
        return super().motion(option, target, executor, params)

    def _edge(self, ex, word: str):
        """From the dot nearest the stick to its neighbour in direction ``word``."""
        k, tip = self.node_near_stick(ex, self.nodes_xy)
        here = self.cell_of(k)
        di, dj = STEP_OF[word]
        there = (here[0] + di, here[1] + dj)
        if not (0 <= there[0] < self.layout.n and 0 <= there[1] < self.layout.n):
            yield from ex.hold(4)  # off the grid: nothing to do
            return
        if tip[2] > TRACE_Z + 0.02:
            yield from stick_over(ex, self.cell_xy(here))
        yield from stick_line(ex, self.cell_xy(there))

    # ------------------------------------------------------------------ memory
    def live_edge(self) -> int | None:
        e = self.current_entry
        if e is None or e.demonstration or "edge" not in e.params:
            return None
        return int(e.params["edge"])

    def history_slot(self):
        """Which way next: every direction the current dot allows, the demonstrated one included."""
        k = self.live_edge()
        if k is None:
            return None
        here = self.layout.path[k]
        alts = tuple(f"move {COMPASS[(c[0] - here[0], c[1] - here[1])]}" for c in grid_neighbours(here, self.layout.n))
        return HistorySlot("direction", alts)

    def probe_questions(self):
        """Questions for the memory assessment: which way did each edge of the demonstrated pattern go?"""
        return [ProbeQuestion("route", "which directions did the demonstrated pattern take, in order?", RecordName.DEMONSTRATED_ROUTE,
                              tuple(self.directions))]

    def truth(self) -> dict:
        return {
            "grid": self.layout.n,
            "path": [list(c) for c in self.layout.path],
            "directions": self.directions,
            "edge": self.live_edge(),
            "touched": [list(self.cell_of(k)) for k in self.touch_log],
        }

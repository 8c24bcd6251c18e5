"""RouteStick: watch the stick weave around upright sticks from target to target, then repeat it.

Scene: the stick robot (``panda_stick``) and a row of nine slots, 0.07 apart along y, centred at
x = -0.1, the whole row turned about the world origin by U(-30°, 30°). The even slots (0, 2, 4,
6, 8) hold gray ring targets (radius 0.02); each odd slot holds an upright obstacle stick (a box
0.10 tall, 0.03 along the row, 0.06 across it, of a random colour) standing between two targets.

Route: a random walk over the five targets, 2-3 moves (easy), 4-5 (medium) or 4-7 (hard); a move
goes back to the target just left only at an end of the row, except in hard where it may anytime.
Every move circles the stick between its two targets either clockwise (passing it on the left of
the travel direction, seen from above) or counterclockwise.

Timeline: the conditioning video shows the stick going from target to target along arcs at
z 0.07 that bulge 0.1 sideways around the sticks (its hidden first move takes it to the start
target, whose joint pose is remembered). A hidden 200-step reset takes the arm home, and it
returns to the remembered pose: the policy starts with the stick over the start target.

Subgoals: one per move, "move to the nearest {left|right} target by circling around the stick
{clockwise|counterclockwise}" (left = the next target has the larger y). A move is done when the
tip is within 0.03 of the next target (horizontally, below z 0.15) and it went round the right way:
the mean sign of the cross product between the travel direction and the tip's path since the
move began (points within 5 mm of the straight line ignored) is positive for clockwise.

Success: every move done. Failure: a move that arrives the wrong way round (or straight through),
or touching a target other than the two of the move (within 0.01, below z 0.1).

Only memory answers: which neighbour next and which way round the stick; the scene does not
change during the episode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sapien

from envs.core import primitives as P
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.bases.stick import StickTaskMixin
from envs.core.checker import SubgoalEntry
from envs.core.layouts.paths import random_walk
from envs.core.motion.trace import TRACE_Z, stick_arc, stick_over
from envs.core.probes import ProbeQuestion
from subgoals.record_names import RecordName

ROW_X = -0.1
SLOT_SPACING = 0.07
N_SLOTS = 9
TARGET_RADIUS = 0.02
OBSTACLE_HALF = (0.015, 0.03, 0.05)  # along the row, across it, half height
ARC_PULL = 0.2  # control point of the quadratic arc, sideways from the middle of the move
REACH_RADIUS = 0.03
REACH_Z = 0.15
SIDE_DEADBAND = 0.005
STEPS = {"easy": (2, 3), "medium": (4, 5), "hard": (4, 7)}
SENSES = ("clockwise", "counterclockwise")
SIDES = ("left", "right")


@dataclass(frozen=True)
class RouteStickLayout:
    angle: float  # rotation of the row about the world origin
    walk: tuple[int, ...]  # target indices 0..4 (slot 2k)
    senses: tuple[str, ...]  # one per move
    obstacle_rgb: tuple[tuple[float, float, float], ...]  # one per odd slot


def subgoal_text(side: str, sense: str) -> str:
    return f"move to the nearest {side} target by circling around the stick {sense}"


class RouteStick(StickTaskMixin, RoboMMETask):
    TASK = "RouteStick"
    ROBOT = "panda_stick"
    HAS_VIDEO = True

    OPTION_PATTERNS = tuple(
        (rf"^move to the nearest {side} target by circling around the stick {sense}$", f"route_{side}_{sense}")
        for side in SIDES for sense in SENSES
    ) + RoboMMETask.OPTION_PATTERNS

    # ------------------------------------------------------------------ layout
    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> RouteStickLayout:
        angle = float(rng.uniform(-np.pi / 6, np.pi / 6))
        lo, hi = STEPS[difficulty] if self.ood is None else self.ood.get("steps")  # ood: 8-14 steps
        steps = int(rng.integers(lo, hi + 1))
        walk = random_walk(rng, N_SLOTS // 2 + 1, steps, backtrack=difficulty == "hard")
        senses = tuple(SENSES[int(rng.integers(2))] for _ in range(steps))
        rgbs = tuple(tuple(float(v) for v in rng.uniform(0.1, 1.0, size=3)) for _ in range(N_SLOTS // 2))
        return RouteStickLayout(angle, tuple(walk), senses, rgbs)

    def slot_xy(self, slot: int) -> np.ndarray:
        a = self.layout.angle
        local = np.array([ROW_X, (slot - (N_SLOTS - 1) / 2) * SLOT_SPACING])
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        return rot @ local

    @property
    def moves(self) -> list[tuple[str, str]]:
        """(side, sense) of every move of the route."""
        w = self.layout.walk
        return [("left" if b > a else "right", s) for a, b, s in zip(w[:-1], w[1:], self.layout.senses)]

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        L = self.layout
        self.nodes_xy = np.array([self.slot_xy(2 * k) for k in range(N_SLOTS // 2 + 1)])
        self.targets = [P.build_target(self.scene, f"target_{k}", P.GRAY, radius=TARGET_RADIUS, thickness=0.004) for k in range(len(self.nodes_xy))]
        self.obstacles = []
        for k, rgb in enumerate(L.obstacle_rgb):
            b = self.scene.create_actor_builder()
            # local x along the row, y across it
            b.add_box_collision(half_size=list(OBSTACLE_HALF))
            b.add_box_visual(half_size=list(OBSTACLE_HALF), material=sapien.render.RenderMaterial(base_color=[*rgb, 1.0]))
            b.initial_pose = sapien.Pose(p=[0, 0, -1.0])
            self.obstacles.append(b.build_kinematic(name=f"obstacle_{k}"))
        self.flash = None
        self.trail = None

    def place_scene(self) -> None:
        for t, xy in zip(self.targets, self.nodes_xy):
            self.set_xyz(t, [xy[0], xy[1], 0.01])
        row_yaw = self.layout.angle + np.pi / 2  # the row runs along the rotated y axis
        for k, ob in enumerate(self.obstacles):
            xy = self.slot_xy(2 * k + 1)
            self.set_xyz(ob, [xy[0], xy[1], OBSTACLE_HALF[2]], P.yaw_quat(row_yaw))
        self.start_xy = self.nodes_xy[self.layout.walk[0]]
        self.reset_stick_state()
        self.trace: list[np.ndarray] = []
        self._trace_index = -1

    def goal_texts(self) -> list[str]:
        return [
            "watch the video carefully, then use the stick attached to the robot to navigate around the sticks on the table, following the same path",
            "after watching the video, steer the robot's stick around the upright sticks along the route you were shown",
        ]

    # ------------------------------------------------------------------ clock
    def animate(self, clock: int) -> None:
        self.stick_animate(clock)
        idx = self.checker.index if self.checker is not None else -1
        if idx != self._trace_index:
            self._trace_index, self.trace = idx, []
        self.trace.append(self.tcp()[:2].copy())

    # ------------------------------------------------------------------ predicates
    def circling_sign(self, k: int) -> float:
        """Mean side of the tip's path since move ``k`` began: > 0 clockwise, < 0 counterclockwise."""
        a, b = self.nodes_xy[self.layout.walk[k]], self.nodes_xy[self.layout.walk[k + 1]]
        d = (b - a) / np.linalg.norm(b - a)
        if not self.trace:
            return 0.0
        rel = np.asarray(self.trace) - a
        cross = d[0] * rel[:, 1] - d[1] * rel[:, 0]
        cross = cross[np.abs(cross) > SIDE_DEADBAND]
        return float(np.sign(cross).mean()) if len(cross) else 0.0

    def arrived(self, k: int) -> bool:
        tip = self.tcp()
        b = self.nodes_xy[self.layout.walk[k + 1]]
        return bool(np.linalg.norm(tip[:2] - b) < REACH_RADIUS and tip[2] < REACH_Z)

    def right_way(self, k: int) -> bool:
        s = self.circling_sign(k)
        return s > 0 if self.layout.senses[k] == "clockwise" else s < 0

    def move_done(self, k: int):
        return lambda: self.arrived(k) and self.right_way(k)

    def move_failed(self, k: int):
        allowed = {self.layout.walk[k], self.layout.walk[k + 1]}

        def failed() -> bool:
            t = self.touching()
            if t is not None and t not in allowed:
                return True
            return self.arrived(k) and not self.right_way(k)

        return failed

    def build_subgoals(self) -> list[SubgoalEntry]:
        moves = self.moves
        entries = [SubgoalEntry(
            name="move the stick to the start target", template="move the stick to the start target",
            success=self.phases.is_done("approach"), option="stick_start", demonstration=True, record=False,
        )]
        for k, (side, sense) in enumerate(moves):
            entries.append(SubgoalEntry(
                name=subgoal_text(side, sense), template=subgoal_text(side, sense), success=self.move_done(k),
                option=f"route_{side}_{sense}", demonstration=True, params={"move": k},
            ))
        entries.append(SubgoalEntry(
            name="return over the start target", template="return over the start target",
            success=self.phases.is_done("return"), option="stick_return", demonstration=True, record=False,
        ))
        for k, (side, sense) in enumerate(moves):
            entries.append(SubgoalEntry(
                name=subgoal_text(side, sense), template=subgoal_text(side, sense), success=self.move_done(k),
                fail=self.move_failed(k), option=f"route_{side}_{sense}", params={"move": k},
            ))
        return entries

    # ------------------------------------------------------------------ options
    def candidates(self, option: str):
        if option.startswith("route_"):
            return [("stick", self.agent.tcp)]
        return []

    def motion(self, option, target, executor, params=None):
        params = params or {}
        if option == "stick_start":
            return self.approach_start(executor)
        if option == "stick_return":
            return self.return_to_start(executor, hold_total=200)
        if option.startswith("route_"):
            _, side, sense = option.split("_")
            return self.each_subgoal(executor, lambda ex: self._arc(ex, side, sense))
        return super().motion(option, target, executor, params)

    def _arc(self, ex, side: str, sense: str):
        """From the target nearest the stick to its neighbour on ``side``, round the stick between."""
        k, tip = self.node_near_stick(ex, self.nodes_xy)
        j = k + (1 if side == "left" else -1)
        if not 0 <= j < len(self.nodes_xy):
            yield from ex.hold(4)  # no target on that side
            return
        a, b = self.nodes_xy[k], self.nodes_xy[j]
        if tip[2] > TRACE_Z + 0.02:
            yield from stick_over(ex, a)
        d = (b - a) / np.linalg.norm(b - a)
        normal_left = np.array([-d[1], d[0]])
        pull = ARC_PULL if sense == "clockwise" else -ARC_PULL  # clockwise passes on the left
        yield from stick_arc(ex, b, (a + b) / 2 + pull * normal_left)

    # ------------------------------------------------------------------ memory
    def live_move(self) -> int | None:
        e = self.current_entry
        if e is None or e.demonstration or "move" not in e.params:
            return None
        return int(e.params["move"])

    def history_slot(self):
        """Which neighbour and which way round: every side the current target has, both senses."""
        k = self.live_move()
        if k is None:
            return None
        here = self.layout.walk[k]
        sides = [s for s, ok in (("left", here < len(self.nodes_xy) - 1), ("right", here > 0)) if ok]
        return HistorySlot("side and circling sense", tuple(subgoal_text(s, c) for s in sides for c in SENSES))

    def probe_questions(self):
        """Questions for the memory assessment: which side and circling sense did each demonstrated move take?"""
        return [ProbeQuestion("route", "which neighbour and which way round the stick was each demonstrated move, in order?",
                              RecordName.DEMONSTRATED_ROUTE, tuple(f"{side} {sense}" for side, sense in self.moves))]

    def truth(self) -> dict:
        return {
            "walk": list(self.layout.walk),
            "moves": [list(m) for m in self.moves],
            "row_angle_deg": float(np.degrees(self.layout.angle)),
            "move": self.live_move(),
            "touched": list(self.touch_log),
        }

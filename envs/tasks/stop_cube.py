"""StopCube: press the button just as the sliding cube reaches the target for the k-th time.

Scene: a button near the robot; a purple target disc of radius 0.036 at xy ~ U(-0.1, 0.1)²; one
cube of a random RGB colour that is visual only (kinematic, no collision). The cube slides on a
0.6 m straight line centred on the target (the y axis turned by U(-30°, 30°)), back and forth,
each pass lasting mi ∈ {60, 80, 120} steps with smoothstep easing; it makes at most 5 passes, so
it is over the target at steps mi·(j - 1/2), j = 1..5 (the arrivals). k ∈ {2..5} ("stop time");
difficulty changes nothing. On the ood split k is 6-10 of at most 10 passes, mi = 60 only.
There is no video: the motion runs live from step 0.

Timeline and subgoals: "move to the top of the button to prepare" (TCP within 0.03 of the
button horizontally, below z 0.2); "remain static" checkpoints, pure time marks passed at steps
100, 200, ... and 30 steps before each arrival before the k-th, the last one at mi·k - mi/2 - 30
(all with the same text; a hundred-mark within the 30 steps before an arrival is left out, so
that each arrival has one waiting entry during which a press could meet it); "press the button to
stop the cube on the target". Pressing the button freezes the cube where it is.

Success: the press happens while the cube is within 0.06 of the target horizontally and at a step
in [mi·(k-1), mi·k]. Failure: a press with the cube off the target, a press outside that window,
or step mi·k passing without the press.

What only memory can answer: every arrival looks the same (the cube crosses the same spot at the
same speed), so which arrival is the k-th one depends on counting the earlier ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core import solvers as S
from envs.core.base_task import HistorySlot, RoboMMETask
from envs.core.bases.button import ButtonMixin
from envs.core.builders.posing import pose_button, pose_flat
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import Placed, button_keep_out, sample_button
from envs.core.probes import ProbeQuestion
from envs.core.rewording import ordinal_values
from envs.core.sampling import TablePlacer
from subgoals.numbers import ordinal_word
from subgoals.record_names import RecordName

PASS_STEPS = (60, 80, 120)
MAX_PASSES = 5
OOD_MAX_PASSES = 10  # the ood split stops on pass 6-10
LINE_HALF = 0.3
TARGET_RADIUS = 0.036
ON_TARGET = 0.06
DECISION_LEAD = 30  # the press subgoal (and each per-arrival checkpoint) starts this long before an arrival
REACH_LEAD = 24  # a press proposed this long before an arrival still meets it (query delay + descent)
HOVER_DZ = 0.025  # TCP height over the cap top while waiting
PRESS_DEPTH = 0.012
DESCENT_STRIDE = 3
PRESS_LAG = 1  # control steps between the commanded TCP crossing the press depth and the press registering


@dataclass(frozen=True)
class StopCubeLayout:
    button: Placed
    target: Placed
    angle: float  # the line is the y axis turned by this angle
    colour: tuple[float, float, float]
    pass_steps: int  # mi
    stop_time: int  # k
    goal_variant: int
    max_passes: int = MAX_PASSES  # the ood split's later stops need more passes (OOD_MAX_PASSES)

    @property
    def direction(self) -> np.ndarray:
        return np.array([-np.sin(self.angle), np.cos(self.angle)])

    def arrival(self, j: int) -> int:
        """The step at which the cube is over the target for the j-th time (1-based)."""
        return int(round(self.pass_steps * (j - 0.5)))

    @property
    def arrivals(self) -> tuple[int, ...]:
        return tuple(self.arrival(j) for j in range(1, self.max_passes + 1))

    @property
    def window(self) -> tuple[int, int]:
        return self.pass_steps * (self.stop_time - 1), self.pass_steps * self.stop_time

    def offset(self, clock: int) -> float:
        """Signed position of the cube along the line at step ``clock`` (0 = over the target)."""
        mi = self.pass_steps
        j = min(clock // mi, self.max_passes - 1) if clock >= 0 else 0
        u = float(np.clip((clock - j * mi) / mi, 0.0, 1.0))
        e = 3 * u * u - 2 * u * u * u
        s = -LINE_HALF + 2 * LINE_HALF * e
        return s if j % 2 == 0 else -s

    def thresholds(self) -> tuple[int, ...]:
        """Steps at which the "remain static" checkpoints pass, the last one opening the press.

        The benchmark's marks at 100, 200, ... plus one mark 30 steps before each arrival before
        the k-th (the same lead the press subgoal gets). A hundred-mark that would fall within the
        30 steps before an arrival is left out, so that every arrival has one waiting entry that
        starts early enough to press at it (see ``StopCube.history_slot``).
        """
        k = self.stop_time
        last = self.arrival(k) - DECISION_LEAD
        before = [self.arrival(j) for j in range(1, k)]
        marks = {t - DECISION_LEAD for t in before if t - DECISION_LEAD > 0}
        marks |= {m for m in range(100, last, 100) if not any(t - DECISION_LEAD < m <= t + 1 for t in before)}
        return tuple(sorted(m for m in marks if m < last)) + (last,)


class StopCube(ButtonMixin, RoboMMETask):
    TASK = "StopCube"

    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> StopCubeLayout:
        button = sample_button(rng)
        placer = TablePlacer(rng, [button_keep_out(button)])
        fp = placer.place((0.0, 0.0), 0.1, TARGET_RADIUS, circle=True, yaw=0.0, min_gap=0.0, what="target")
        angle = float(rng.uniform(-np.pi / 6, np.pi / 6))
        colour = tuple(float(v) for v in rng.uniform(0.0, 1.0, 3))
        mi = int(PASS_STEPS[int(rng.integers(len(PASS_STEPS)))])
        k = int(rng.integers(2, 6))
        variant = int(rng.integers(2))
        if self.ood is None:
            return StopCubeLayout(button, Placed("target", fp.x, fp.y), angle, colour, mi, k, variant)
        # later stops than training ever counts, at the fastest speed only
        k = self.ood.draw(rng, "stop_pass")
        mi = min(PASS_STEPS) if self.ood.get("fastest") else mi
        return StopCubeLayout(button, Placed("target", fp.x, fp.y), angle, colour, mi, k, variant, OOD_MAX_PASSES)

    # ------------------------------------------------------------------ scene
    def build_scene(self) -> None:
        self.button = P.build_button(self.scene, "button")
        self.target = P.build_target(self.scene, "target", P.PURPLE, radius=TARGET_RADIUS)
        self.cube = P.build_cube(self.scene, "cube", self.layout.colour, kinematic=True)

    def cube_xy(self, clock: int) -> np.ndarray:
        L = self.layout
        return np.array([L.target.x, L.target.y]) + L.offset(clock) * L.direction

    def place_scene(self) -> None:
        L = self.layout
        pose_button(self, self.button, L.button)
        pose_flat(self, self.target, L.target)
        self._pose_cube(0)
        self.stop_step: int | None = None
        self.stop_distance: float | None = None

    def _pose_cube(self, clock: int) -> None:
        xy = self.cube_xy(clock)
        self.set_xyz(self.cube, [xy[0], xy[1], P.CUBE_HALF], P.yaw_quat(self.layout.angle))

    def animate(self, clock: int) -> None:
        if self.stop_step is not None:
            return
        if self.button_pressed(self.button):  # the press freezes the cube where it is now
            self.stop_step = clock
            self.stop_distance = self.cube_distance()
            return
        self._pose_cube(clock)

    def cube_distance(self) -> float:
        p = self.pos(self.cube)
        return float(np.hypot(p[0] - self.layout.target.x, p[1] - self.layout.target.y))

    def goal_values(self) -> dict[str, object]:
        return ordinal_values(self.layout.stop_time)

    def goal_texts(self) -> list[str]:
        o = ordinal_word(self.layout.stop_time)
        texts = [f"press the button to stop the cube just as it reaches the target for the {o} time",
                 f"press the button to stop the cube exactly at the target on its {o} visit"]
        v = self.layout.goal_variant
        return [texts[v], texts[1 - v]]

    # ------------------------------------------------------------------ predicates
    def stopped_well(self) -> bool:
        lo, hi = self.layout.window
        return self.stop_step is not None and self.stop_distance <= ON_TARGET and lo <= self.stop_step <= hi

    def task_failure(self) -> bool:
        if self.stop_step is not None:
            return not self.stopped_well()
        return self.clock > self.layout.window[1]

    def above_button(self) -> bool:
        t = self.tcp()
        b = self.pos_of(self.button)
        return float(np.hypot(t[0] - b[0], t[1] - b[1])) < 0.03 and t[2] < 0.2

    def build_subgoals(self) -> list[SubgoalEntry]:
        cap = P.button_cap(self.button)
        entries = [SubgoalEntry(
            name="move to the top of the button to prepare", template="move to the top of the button at <> to prepare",
            success=self.above_button, option="move_over", ground=(cap,), target=self.button,
        )]
        for th in self.layout.thresholds():
            entries.append(SubgoalEntry(
                name="remain static", template="remain static", success=lambda th=th: self.clock >= th,
                option="wait", params={"until": th},
            ))
        entries.append(SubgoalEntry(
            name="press the button to stop the cube on the target",
            template="press the button to stop the cube on the target at <>",
            success=self.stopped_well, option="press", ground=(self.target,), target=self.button,
        ))
        return entries

    def candidates(self, option: str):
        if option in ("press", "move_over"):
            return [("button", self.button)]
        return []

    # ------------------------------------------------------------------ scripted motions
    def motion(self, option: str, target, executor, params: dict | None = None):
        if option == "move_over":
            return self._hover_over_button(executor)
        if option == "press":
            return self._timed_press(executor)
        return super().motion(option, target, executor, params)

    def _cap_xy(self) -> np.ndarray:
        return P.button_cap(self.button).pose.p[0].cpu().numpy()[:2].astype(float)

    def _hover_over_button(self, ex: S.Executor):
        xy = self._cap_xy()
        if ex.has_gripper:
            ex.gripper = S.CLOSED  # the fingers close on the way
            ex.fingers = np.zeros_like(ex.fingers)
        yield from ex.move_to(S.down_pose([xy[0], xy[1], P.cap_top_z() + HOVER_DZ], ex.tcp_yaw()), settle=4)

    def press_latency(self, ex: S.Executor, path: np.ndarray) -> int:
        """Steps from the first descent action until the press registers (from the planned path)."""
        model = ex.planner.pinocchio_model
        threshold = P.cap_top_z() - P.BUTTON_PRESSED_DEPTH
        for i, q in enumerate(path):
            model.compute_forward_kinematics(np.hstack([q[:7], ex.fingers]).astype(np.float64))
            if model.get_link_pose(ex.planner.move_group_link_id)[2] < threshold:
                return i + 1 + PRESS_LAG
        return len(path) + PRESS_LAG

    def next_arrival(self, clock: int, latency: int) -> int | None:
        """The first arrival (1-based) a press started at ``clock`` can still meet."""
        for j, t in enumerate(self.layout.arrivals, start=1):
            if t + 1 - clock >= latency:
                return j
        return None

    def _timed_press(self, ex: S.Executor):
        """Wait over the button, then push so the press registers as the cube crosses the target.

        The oracle's privileged timing: the arrival steps (from mi) and the descent's latency.
        It aims at the next arrival it can still meet; the subgoal's timing (30 steps before the
        k-th arrival) makes that the k-th one.
        """
        xy = self._cap_xy()
        yaw = ex.tcp_yaw()
        if ex.has_gripper and ex.gripper != S.CLOSED:
            yield from ex.set_gripper(S.CLOSED, 4)
        start = self.clock
        sent = 0
        path = ex.plan(S.down_pose([xy[0], xy[1], P.cap_top_z() - PRESS_DEPTH], yaw))
        # the planned descent respects slow velocity limits; push faster (a few mm per step) so the
        # press can be decided late, close to the arrival
        path = np.vstack([path[::DESCENT_STRIDE], path[-1:]])
        latency = self.press_latency(ex, path)
        self.last_press_plan = {"start": start, "latency": latency, "path_len": len(path)}
        j = self.next_arrival(start, latency)
        if j is not None:
            # the press registers at clock (start + sent + latency); the cube is frozen at the pose
            # it had one step earlier, so aim for arrival + 1
            wait = self.layout.arrival(j) + 1 - latency - start
            for _ in range(max(wait, 0)):
                sent += 1
                yield ex.action()
            self.last_press_plan.update(arrival=j, expect=start + sent + latency)
        for q in path:
            ex.q_cmd = np.asarray(q[:7], dtype=np.float64)
            yield ex.action()
        yield from ex.hold(4)
        yield from ex.move_to(S.down_pose([xy[0], xy[1], P.cap_top_z() + 0.08], yaw))

    # ------------------------------------------------------------------ memory audit
    def _entry_start(self, index: int) -> int:
        return self.checker.completed_at[index - 1] if index >= 1 else 0

    def decided_arrival(self, index: int) -> int | None:
        """The arrival a press proposed during entry ``index`` would hit, if any.

        A press proposed when the entry starts (plus the predictor's query delay) waits over the
        button for the first arrival it can still meet; it only takes effect if that arrival comes
        before the entry ends (a new subgoal replaces the motion).
        """
        e = self.checker.entries[index]
        start = self._entry_start(index)
        end = e.params["until"] if e.option == "wait" else np.inf
        for j, t in enumerate(self.layout.arrivals, start=1):
            if t - start >= REACH_LEAD:
                return j if t + 2 < end else None
        return None

    def history_slot(self):
        """During the waiting and at the press: press at the coming arrival, or keep still?

        Every arrival looks alike, so a memoryless predictor presses at an arrival drawn uniformly
        among the ones left (of at most five). The entry during which an arrival comes (the one
        that starts 30 steps before it, or the press entry for the k-th) is that arrival's
        decision; the alternatives are weighted by repetition, one press to R - 1 "remain static"
        for R arrivals left, so that pressing at each remaining arrival is equally likely overall
        (a blind predictor succeeds with probability 1/R at its first decision).
        """
        e = self.current_entry
        if e is None or e.option not in ("wait", "press"):
            return None
        j = self.decided_arrival(self.checker.index)
        if j is None:
            return None
        press = self.ground_template("press the button to stop the cube on the target at <>", self.target)
        remaining = self.layout.max_passes - j + 1
        return HistorySlot("press at this arrival or wait", (press,) + ("remain static",) * (remaining - 1),
                           accepts=self.decision_judge())

    def decision_judge(self):
        """During the waiting and at the press, judged on the world: a press is right when it meets
        the k-th arrival, whenever it is sent (it waits over the button for the first arrival it can
        still reach, so a press sent while the k-th arrival is the next one in reach stops the cube
        where the oracle's later press would); keeping still is right while the oracle keeps still."""
        e = self.current_entry
        if e is None or e.option not in ("wait", "press"):
            return None
        oracle_presses, clock, k = e.option == "press", self.clock, self.layout.stop_time

        def accepts(does) -> bool:
            if does is None:
                return False
            if does[0] == "press":
                return oracle_presses or self.arrival_in_reach(clock) == k
            return not oracle_presses

        return accepts

    def arrival_in_reach(self, clock: int) -> int | None:
        """The first arrival (1-based) a press sent at ``clock`` can still meet (``REACH_LEAD``)."""
        return next((j for j, t in enumerate(self.layout.arrivals, start=1) if t - clock >= REACH_LEAD), None)

    def probe_questions(self):
        """Questions for the memory assessment: how many times has the cube passed over the target?

        A pass is complete once the cube is beyond the target: arrivals before the current step, and,
        after a press, before the step whose pose the press froze (a cube stopped on the target has
        reached it but not passed it).
        """
        t = self.truth()
        until = t["stop_step"] - 1 if t["stop_step"] is not None else self.clock
        return [ProbeQuestion("count", "how many times has the cube passed over the target?", RecordName.PASSES,
                              sum(1 for a in t["arrivals"] if a < until))]

    def truth(self) -> dict:
        L = self.layout
        return {
            "pass_steps": L.pass_steps,
            "stop_time": L.stop_time,
            "arrivals": list(L.arrivals),
            "window": list(L.window),
            "stop_step": self.stop_step,
            "stop_distance": self.stop_distance,
            "arrivals_so_far": sum(1 for t in L.arrivals if t <= self.clock),
        }

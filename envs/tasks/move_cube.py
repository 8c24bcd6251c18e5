"""MoveCube: watch how the cube was moved to the target, then move it again the same way.

Scene: a red cube, a purple target disc (radius 0.04) and a salmon peg, a straight bar of two
0.10 links (0.2 m, cross-section 0.02) that can serve as a tool. The peg lies at y = ±0.2 (random
side) with ±0.05 jitter and a yaw of U(-45°, 45°); the target is in (0, 0) ± 0.15; the cube is
near a point of [-0.1, 0.1]² at least 0.10 from the target, jittered by ±0.05.

Manner (uniform): ``peg_push`` (pick up the peg and sweep the cube onto the target with it),
``gripper_push`` (close the gripper and push the cube with the fingers) or ``grasp_putdown``
(pick the cube up and put it down on the target).

Timeline: the conditioning video shows the manner on a first configuration, then the scene stays
still for 30 (peg) or 60 steps. During a hidden 30-step reset the arm goes home and the peg, cube
and target are teleported to a second configuration (target in ± 0.1). The policy must move the
cube to the target there, in the manner it saw.

Subgoals:
* peg_push: "pick up the peg at <tail end>", then "hook the cube at <> to the target at <> with
  the peg".
* gripper_push: "close the gripper and push the cube at <> to the target at <>".
* grasp_putdown: "pick up the cube at <>", then "place the cube onto the target at <>".

Success: pushes end with the cube within 0.048 of the target (horizontally) and the gripper open;
grasp_putdown ends with the standard place (within 0.05, released). Failure: peg_push: the cube
lifted or on the target before the peg is picked; gripper_push: the cube or the peg lifted;
grasp_putdown: the cube on the target before it is picked, or the peg lifted.

On the ood split the second configuration puts goal and cube on a ring of radii 0.08-0.16
around the centre and the peg at any yaw.

Only memory answers: the manner. The second configuration looks like any MoveCube scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.core import primitives as P
from envs.core import solvers as S
from envs.core.base_task import REST_QPOS, HistorySlot, RoboMMETask
from envs.core.bases.imitation import Counted, Phases, SegGroundMixin
from envs.core.builders.peg import build_peg, peg_links, pose_peg
from envs.core.checker import SubgoalEntry
from envs.core.layouts.scene import Placed
from envs.core.motion.bars import pick_bar, push_stroke, wrap
from envs.core.motion.trace import commanded_tip, go_joints
from envs.core.probes import ProbeQuestion
from envs.core.sampling import Footprint, SceneSamplingError, TablePlacer
from subgoals.record_names import RecordName

MANNERS = ("peg_push", "gripper_push", "grasp_putdown")
SALMON = (0xEC / 255, 0x73 / 255, 0x57 / 255)
PEG_LINK = 0.10
PEG_HALF = 0.01
PUSH_TOLERANCE = 0.048
PLACE_TOLERANCE = 0.05
GOAL_RADIUS = 0.04
ANNULUS = (0.08, 0.16)  # the ood split's ring of goal and cube positions (radii, m)


@dataclass(frozen=True)
class MoveCubeConfig:
    peg: Placed  # centre of the bar (between its links) and its yaw
    cube: Placed
    goal: Placed


@dataclass(frozen=True)
class MoveCubeLayout:
    first: MoveCubeConfig
    second: MoveCubeConfig
    manner: str


def annulus_point(rng: np.random.Generator, r_in: float, r_out: float) -> tuple[float, float]:
    """A point uniform over the ring ``r_in <= |p| <= r_out`` around the workspace centre."""
    r, a = np.sqrt(rng.uniform(r_in**2, r_out**2)), rng.uniform(0.0, 2 * np.pi)
    return float(r * np.cos(a)), float(r * np.sin(a))


def sample_config(rng: np.random.Generator, goal_half: float, annulus: bool = False) -> MoveCubeConfig:
    """One configuration. ``annulus`` (the ood split's): the peg at any yaw, the goal and the cube
    on a ring ``ANNULUS`` around the centre instead of in the central square, so the push or carry
    runs in directions and at distances the training squares never ask for."""
    side = 1.0 if rng.random() < 0.5 else -1.0
    px, py = rng.uniform(-0.05, 0.05), side * 0.2 + rng.uniform(-0.05, 0.05)
    pyaw = float(rng.uniform(-np.pi, np.pi)) if annulus else float(rng.uniform(-np.pi / 4, np.pi / 4))
    peg = Footprint(float(px), float(py), PEG_LINK, PEG_HALF, pyaw)
    placer = TablePlacer(rng, [peg])
    if annulus:
        goal = None
        for _ in range(256):
            try:
                goal = placer.place(annulus_point(rng, *ANNULUS), 0.0, GOAL_RADIUS, circle=True, yaw=0.0, min_gap=0.01,
                                    max_trials=1, what="goal")
                break
            except SceneSamplingError:
                continue
        if goal is None:
            raise SceneSamplingError("no goal position on the annulus clear of the peg")
    else:
        goal = placer.place((0.0, 0.0), goal_half, GOAL_RADIUS, circle=True, yaw=0.0, min_gap=0.01, what="goal")
    for _ in range(256):
        nominal = np.array(annulus_point(rng, *ANNULUS)) if annulus else rng.uniform(-0.1, 0.1, size=2)
        if np.hypot(nominal[0] - goal.x, nominal[1] - goal.y) < 0.10:
            continue
        try:
            cube = placer.place(tuple(nominal), 0.05, P.CUBE_HALF, min_gap=0.02, max_trials=32, what="cube")
        except SceneSamplingError:
            continue
        if np.hypot(cube.x - goal.x, cube.y - goal.y) >= 0.08:  # never already on the target
            return MoveCubeConfig(Placed("peg", float(px), float(py), pyaw), Placed("cube", cube.x, cube.y, cube.yaw), Placed("goal", goal.x, goal.y))
        placer.placed.pop()
    raise SceneSamplingError("no cube position away from the goal")


class MoveCube(SegGroundMixin, RoboMMETask):
    TASK = "MoveCube"
    HAS_VIDEO = True

    OPTION_PATTERNS = (
        (r"^hook\b", "hook"),
        (r"^close the gripper and push\b", "gripper_push"),
    ) + RoboMMETask.OPTION_PATTERNS

    # ------------------------------------------------------------------ layout
    def sample_layout(self, rng: np.random.Generator, difficulty: str) -> MoveCubeLayout:
        first = sample_config(rng, 0.15)
        second = sample_config(rng, 0.10, annulus=bool(self.ood_option("annulus", False)))
        return MoveCubeLayout(first, second, MANNERS[int(rng.integers(3))])

    def build_scene(self) -> None:
        self.peg = build_peg(self.scene, "peg", PEG_LINK, PEG_HALF, SALMON, SALMON, density=1200)
        self.peg_head, self.peg_tail = peg_links(self.peg, "peg")
        self.cube = P.build_cube(self.scene, "cube", P.RED)
        self.goal = P.build_target(self.scene, "goal", P.PURPLE, radius=GOAL_RADIUS)

    def place_scene(self) -> None:
        self.phases = Phases()
        self.cube_picked_once = False
        self.config = 1
        self.pose_config(self.layout.first)

    def pose_config(self, c: MoveCubeConfig) -> None:
        pose_peg(self.peg, c.peg.x, c.peg.y, PEG_HALF, c.peg.yaw, PEG_LINK)
        self.set_xyz(self.cube, [c.cube.x, c.cube.y, P.CUBE_HALF], P.yaw_quat(c.cube.yaw))
        self.set_xyz(self.goal, [c.goal.x, c.goal.y, 0.003])

    @property
    def manner(self) -> str:
        return self.layout.manner

    def goal_texts(self) -> list[str]:
        return [
            "watch the video carefully, then move the cube to the target in the same manner as before",
            "after watching the video, bring the cube onto the target the same way it was done there",
        ]

    # ------------------------------------------------------------------ predicates
    def gripper_open(self) -> bool:
        return bool(self.qpos()[7] > 0.035)

    def cube_goal_dist(self) -> float:
        return float(np.linalg.norm(self.pos(self.cube)[:2] - self.pos(self.goal)[:2]))

    def cube_on_goal(self) -> bool:
        return self.cube_goal_dist() < PUSH_TOLERANCE

    def cube_lifted(self) -> bool:
        return self.lifted(self.cube, 0.04)

    def peg_lifted(self) -> bool:
        return max(self.pos(self.peg_head)[2], self.pos(self.peg_tail)[2]) > 0.04

    def peg_picked(self) -> bool:
        held = self.is_grasping(self.peg_head) or self.is_grasping(self.peg_tail)
        return held and self.peg_lifted()

    def cube_picked(self) -> bool:
        ok = self.is_grasping(self.cube) and self.lifted(self.cube, 0.05)
        if ok:
            self.cube_picked_once = True
        return ok

    def pushed_home(self) -> bool:
        return self.cube_on_goal() and self.gripper_open() and not self.cube_lifted()

    def placed(self) -> bool:
        cube = self.pos(self.cube)
        return (
            self.cube_goal_dist() < PLACE_TOLERANCE
            and not self.is_grasping(self.cube)
            and cube[2] < 0.03
            and self.tcp()[2] > 0.05
        )

    # ------------------------------------------------------------------ subgoals
    def manner_entries(self, demonstration: bool) -> list[SubgoalEntry]:
        live = not demonstration
        fail = (lambda f: f) if live else (lambda f: None)
        if self.manner == "peg_push":
            return [
                SubgoalEntry(
                    name="pick up the peg", template="pick up the peg at <>", success=self.peg_picked, option="pick",
                    ground=(self.peg_tail,), target=self.peg_tail, demonstration=demonstration,
                    fail=fail(lambda: self.cube_lifted() or self.cube_on_goal()),
                ),
                SubgoalEntry(
                    name="hook the cube to the target with the peg", template="hook the cube at <> to the target at <> with the peg",
                    success=self.pushed_home, option="hook", ground=(self.cube, self.goal), target=self.cube,
                    demonstration=demonstration,
                ),
            ]
        if self.manner == "gripper_push":
            return [SubgoalEntry(
                name="close the gripper and push the cube to the target",
                template="close the gripper and push the cube at <> to the target at <>",
                success=self.pushed_home, option="gripper_push", ground=(self.cube, self.goal), target=self.cube,
                demonstration=demonstration, fail=fail(lambda: self.cube_lifted() or self.peg_lifted()),
            )]
        return [
            SubgoalEntry(
                name="pick up the cube", template="pick up the cube at <>", success=self.cube_picked, option="pick",
                ground=(self.cube,), target=self.cube, demonstration=demonstration,
                fail=fail(lambda: self.peg_lifted() or (self.cube_on_goal() and not self.cube_picked_once)),
            ),
            SubgoalEntry(
                name="place the cube onto the target", template="place the cube onto the target at <>", success=self.placed,
                option="place", ground=(self.goal,), target=self.goal, demonstration=demonstration,
                fail=fail(self.peg_lifted),
            ),
        ]

    def build_subgoals(self) -> list[SubgoalEntry]:
        still = 30 if self.manner == "peg_push" else 60
        return [
            *self.manner_entries(demonstration=True),
            SubgoalEntry(
                name="stay still", template="stay still", success=self.phases.is_done("still"), option="static",
                demonstration=True, params={"steps": still},
            ),
            SubgoalEntry(
                name="reset to the second configuration", template="reset to the second configuration",
                success=self.phases.is_done("teleport"), option="teleport", demonstration=True, record=False,
            ),
            *self.manner_entries(demonstration=False),
        ]

    # ------------------------------------------------------------------ options
    def candidates(self, option: str):
        if option == "pick":
            return [("peg", self.peg_tail), ("peg", self.peg_head), ("cube", self.cube)]
        if option in ("hook", "gripper_push"):
            return [("cube", self.cube)]
        if option == "place":
            return [("target", self.goal)]
        return []

    def motion(self, option, target, executor, params=None):
        params = params or {}
        if option == "pick" and target in (self.peg_head, self.peg_tail):
            return pick_bar(executor, target, lift_to=0.12, grasp_z=PEG_HALF + 0.004)
        if option == "hook":
            return self._hook(executor)
        if option == "gripper_push":
            return self._finger_push(executor)
        if option == "static":
            return self.phases.run("still", executor.hold(params["steps"]))
        if option == "teleport":
            return self._teleport(executor)
        return super().motion(option, target, executor, params)

    def _teleport(self, ex):
        """Hidden reset: open, arm home, scene to the second configuration, 30 steps in all."""
        n = 0
        if ex.gripper != S.OPEN:
            for a in ex.set_gripper(S.OPEN, 6):
                n += 1
                yield a
        up = commanded_tip(ex)
        if up[2] < 0.12:
            for a in ex.move_to(S.down_pose([up[0], up[1], 0.15], ex.tcp_yaw()), settle=0):
                n += 1
                yield a
        for a in go_joints(ex, REST_QPOS, settle=2):
            n += 1
            yield a
        self.pose_config(self.layout.second)
        self.config = 2
        yield from ex.hold(max(4, 30 - n))
        self.phases.mark("teleport")

    def _hook(self, ex):
        """Sweep the cube onto the target with the held peg, the bar across the push direction."""
        held = self.is_grasping(self.peg_head) or self.is_grasping(self.peg_tail)
        if not held:
            return
        cube, goal = self.pos(self.cube)[:2], self.pos(self.goal)[:2]
        tcp = self.tcp()
        # the grasped link is the one nearer the fingers; sweep with the other one
        near, far = (self.peg_head, self.peg_tail)
        if np.linalg.norm(self.pos(near)[:2] - tcp[:2]) > np.linalg.norm(self.pos(far)[:2] - tcp[:2]):
            near, far = far, near
        contact = self.pos(far)
        offset = contact[:2] - tcp[:2]  # TCP -> sweeping link, in the world
        dz = tcp[2] - contact[2]
        u = goal - cube
        dist = float(np.linalg.norm(u))
        u = u / max(dist, 1e-6)
        perp = np.array([-u[1], u[0]])
        yaw0 = ex.tcp_yaw()
        best = None
        for sign in (1.0, -1.0):
            want = np.arctan2(sign * perp[1], sign * perp[0])
            delta = wrap(want - np.arctan2(offset[1], offset[0]))
            if best is None or abs(delta) < abs(best):
                best = delta
        c, s = np.cos(best), np.sin(best)
        off = np.array([c * offset[0] - s * offset[1], s * offset[0] + c * offset[1]])
        back = P.CUBE_HALF + PEG_HALF + 0.03
        start = cube - back * u - off
        end = goal - (P.CUBE_HALF + PEG_HALF) * u - off
        z = PEG_HALF + 0.006 + dz
        yield from push_stroke(ex, start, end, z, yaw0 + best, travel_z=max(0.12, z + 0.07))
        yield from ex.set_gripper(S.OPEN, 10)
        tip = commanded_tip(ex)
        yield from ex.move_to(S.down_pose([tip[0], tip[1], 0.15], ex.tcp_yaw()))

    def _finger_push(self, ex, rounds: int = 3):
        """Close the gripper and push the cube toward the target, re-aiming after each stroke."""
        cnt = Counted(self, ex)
        if ex.gripper != S.CLOSED:
            yield from cnt.run(ex.set_gripper(S.CLOSED, 8))
        for _ in range(rounds):
            yield from cnt.barrier()  # measure the cube where the last stroke really left it
            cube, goal = self.pos(self.cube)[:2], self.pos(self.goal)[:2]
            u = goal - cube
            dist = float(np.linalg.norm(u))
            if dist < 0.025:
                break
            u = u / dist
            yaw = S.nearest_yaw(np.arctan2(u[1], u[0]), ex.tcp_yaw())  # fingers close along the push
            start = cube - (P.CUBE_HALF + 0.035) * u
            end = goal - (P.CUBE_HALF + 0.008) * u
            yield from cnt.run(push_stroke(ex, start, end, 0.018, yaw))
        tip = commanded_tip(ex)
        yield from ex.move_to(S.down_pose([tip[0], tip[1], 0.12], ex.tcp_yaw()))
        yield from ex.set_gripper(S.OPEN, 10)

    # ------------------------------------------------------------------ memory
    def history_slot(self):
        """Which manner: the first subgoal of each manner, grounded in the current scene."""
        e = self.current_entry
        if e is None or e.demonstration or self.checker.index != self._first_live():
            return None
        alts = (
            self.ground_seg("pick up the peg at <>", self.peg_tail),
            self.ground_seg("close the gripper and push the cube at <> to the target at <>", self.cube, self.goal),
            self.ground_seg("pick up the cube at <>", self.cube),
        )
        return HistorySlot("manner", alts, choice_of=self._manner_object)

    def _manner_object(self, obj):
        """What the manner decision is about: the peg by either of its links. Its two links are one
        colour, so which one is the tail is nowhere to be seen; in distribution (yaw within 45 degrees)
        the tail is the end nearer the robot, on the ood split's any-yaw pegs either end may be. The
        past settles the manner (the tool, the fingers or a grasp), not the link's name."""
        return "peg" if obj is self.peg_head or obj is self.peg_tail else id(obj)

    def _first_live(self) -> int:
        return next(i for i, x in enumerate(self.checker.entries) if not x.demonstration)

    def probe_questions(self):
        """Which procedure did the video demonstrate? Its steps in words (the peg is held by its tail,
        the end nearer the robot)."""
        steps = {
            "peg_push": ("pick up the peg by its near end", "hook the cube to the target with the peg"),
            "gripper_push": ("close the gripper and push the cube to the target",),
            "grasp_putdown": ("pick up the cube", "place the cube onto the target"),
        }[self.manner]
        return [ProbeQuestion("route", "how was the cube moved in the video?", RecordName.DEMONSTRATED_PROCEDURE, steps)]

    def truth(self) -> dict:
        L = self.layout
        as_dict = lambda c: {k: [round(v.x, 4), round(v.y, 4), round(v.yaw, 4)] for k, v in (("peg", c.peg), ("cube", c.cube), ("goal", c.goal))}  # noqa: E731
        return {"manner": L.manner, "configuration": self.config, "first": as_dict(L.first), "second": as_dict(L.second)}

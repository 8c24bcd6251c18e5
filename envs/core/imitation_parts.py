"""Shared pieces of the Imitation suite (MoveCube, InsertPeg, PatternLock, RouteStick).

* Cartesian path following for any Panda (gripper or stick): dense waypoints turned into joint
  targets by seeded IK, so a trace is a smooth line or arc rather than a chain of stop-and-go
  screw plans.
* Stick-robot solvers: go over a point, trace a polyline or a quadratic arc at a fixed height.
* Visual feedback of the stick tasks: a red flash on touched nodes and a white trail of small
  spheres behind the stick tip, both driven by the step clock.
* Samplers: the PatternLock grid path (randomised 8-connected DFS), the RouteStick random walk.
* Builders: the two-link peg articulation and the box with a square through-hole.
* Hidden phases: entries of the video that are executed but not recorded (resets, teleports,
  static holds) complete when their scripted motion has run to its end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import sapien

from envs.core import primitives as P
from envs.core.solvers import Executor, PlanningFailed, down_pose

Actions = Iterator[np.ndarray]

TRACE_Z = 0.07  # the stick tip height of every demonstrated trace
HOVER_Z = 0.15  # the stick tip height when travelling between traces
TOUCH_RADIUS = 0.01  # a node is touched when the tip is this close horizontally ...
TOUCH_Z = 0.1  # ... and below this height
FLASH_STEPS = 40
TRAIL_STEPS = 40


# ---------------------------------------------------------------------- cartesian following
def ik_step(ex: Executor, pose: sapien.Pose, max_jump: float = 0.35) -> np.ndarray:
    """Joint target for a world ``pose`` near the last commanded one (seeded IK)."""
    base = ex.env.agent.robot.pose.p[0].cpu().numpy().astype(float)
    goal = np.hstack([np.asarray(pose.p, dtype=float) - base, pose.q])  # the base is not rotated
    start = np.hstack([ex.q_cmd, ex.fingers])
    for n_init in (1, 8):
        status, sols = ex.planner.IK(goal, start, n_init_qpos=n_init, threshold=2e-3)
        if status == "Success":
            best = min(sols, key=lambda s: np.abs(s[:7] - ex.q_cmd).max())
            if np.abs(best[:7] - ex.q_cmd).max() <= max_jump:
                return np.asarray(best[:7], dtype=np.float64)
    raise PlanningFailed(f"no IK near the current joints for {np.round(pose.p, 3).tolist()}")


def follow(ex: Executor, points, yaw: float, settle: int = 6) -> Actions:
    """Stream joint targets along dense world ``points`` with the TCP pointing down at ``yaw``.

    All IK is solved before the first action, so a path that cannot be followed fails cleanly
    (``PlanningFailed``) without having moved the arm halfway.
    """
    q_save = ex.q_cmd.copy()
    qs = []
    try:
        for p in points:
            ex.q_cmd = ik_step(ex, down_pose(p, yaw))
            qs.append(ex.q_cmd)
    finally:
        ex.q_cmd = q_save
    for q in qs:
        ex.q_cmd = q
        yield ex.action()
    yield from ex.hold(settle)


def eased(n: int) -> np.ndarray:
    """``n`` samples in (0, 1] with a smooth start and stop."""
    s = np.linspace(0, 1, n + 1)[1:]
    return 0.5 - 0.5 * np.cos(np.pi * s)


def line_points(a, b, speed: float = 0.008) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = max(2, int(np.ceil(np.linalg.norm(b - a) / speed * 1.4)))
    s = eased(n)[:, None]
    return a + s * (b - a)


def arc_points(a, b, ctrl, speed: float = 0.008) -> np.ndarray:
    """A quadratic Bezier from ``a`` to ``b`` pulled toward ``ctrl``."""
    a, b, c = (np.asarray(v, float) for v in (a, b, ctrl))
    length = np.linalg.norm(c - a) + np.linalg.norm(b - c)
    n = max(4, int(np.ceil(length / speed * 1.3)))
    s = eased(n)[:, None]
    return (1 - s) ** 2 * a + 2 * (1 - s) * s * c + s**2 * b


# ---------------------------------------------------------------------- stick solvers
def stick_yaw(ex: Executor) -> float:
    return ex.tcp_yaw()


def stick_over(ex: Executor, xy, z: float = TRACE_Z, hover: float = HOVER_Z) -> Actions:
    """Lift the tip to ``hover``, travel over ``xy``, lower it to ``z``."""
    tip = ex.env.tcp()
    yaw = stick_yaw(ex)
    if tip[2] < hover - 0.01:
        yield from follow(ex, line_points(tip, [tip[0], tip[1], hover]), yaw, settle=0)
    yield from ex.move_to(down_pose([xy[0], xy[1], hover], yaw), settle=2)
    yield from follow(ex, line_points([xy[0], xy[1], hover], [xy[0], xy[1], z]), yaw, settle=8)


def stick_line(ex: Executor, xy_to, z: float = TRACE_Z, speed: float = 0.006) -> Actions:
    """Trace a straight line from the commanded tip position to ``xy_to`` at height ``z``."""
    start = commanded_tip(ex)
    yield from follow(ex, line_points([start[0], start[1], z], [xy_to[0], xy_to[1], z], speed), stick_yaw(ex), settle=8)


def stick_arc(ex: Executor, xy_to, ctrl_xy, z: float = TRACE_Z, speed: float = 0.008) -> Actions:
    start = commanded_tip(ex)
    yield from follow(
        ex, arc_points([start[0], start[1], z], [xy_to[0], xy_to[1], z], [ctrl_xy[0], ctrl_xy[1], z], speed), stick_yaw(ex), settle=8
    )


def commanded_tip(ex: Executor) -> np.ndarray:
    """The TCP position of the last commanded joint target (where the arm is heading)."""
    model = ex.planner.pinocchio_model
    model.compute_forward_kinematics(np.hstack([ex.q_cmd, ex.fingers]))
    p = np.asarray(model.get_link_pose(ex.planner.link_name_2_idx[ex.planner.move_group])[:3], dtype=float)
    return p + ex.env.agent.robot.pose.p[0].cpu().numpy().astype(float)


def go_joints(ex: Executor, q_goal, steps: int | None = None, settle: int = 4) -> Actions:
    """Interpolate the arm joints to ``q_goal`` (hidden resets)."""
    q_goal = np.asarray(q_goal, dtype=np.float64)[:7]
    q0 = ex.q_cmd.copy()
    n = steps or max(8, int(np.ceil(np.abs(q_goal - q0).max() / 0.05)))
    for s in eased(n):
        ex.q_cmd = q0 + s * (q_goal - q0)
        yield ex.action()
    yield from ex.hold(settle)


# ---------------------------------------------------------------------- visual feedback
class NodeFlash:
    """A red copy of every node, shown for ``FLASH_STEPS`` steps after the node is touched."""

    HIDDEN = [0.0, 0.0, -2.0]

    def __init__(self, task, nodes_xy: np.ndarray, radius: float = 0.02, z: float = 0.012):
        self.task = task
        self.nodes = np.asarray(nodes_xy, float)
        self.z = z
        self.discs = [P.build_target(task.scene, f"flash_{i}", P.RED, radius=radius, thickness=0.004) for i in range(len(self.nodes))]
        self.until = np.full(len(self.nodes), -1)

    def reset(self) -> None:
        self.until[:] = -1
        for d in self.discs:
            self.task.set_xyz(d, self.HIDDEN)

    def flash(self, i: int, clock: int) -> None:
        if self.until[i] < clock:
            self.task.set_xyz(self.discs[i], [*self.nodes[i], self.z])
        self.until[i] = clock + FLASH_STEPS

    def tick(self, clock: int) -> None:
        for i in np.nonzero((self.until >= 0) & (self.until <= clock))[0]:
            self.task.set_xyz(self.discs[i], self.HIDDEN)
            self.until[i] = -1

    def lit(self) -> list[int]:
        return [int(i) for i in np.nonzero(self.until >= 0)[0]]


class TipTrail:
    """Small white spheres left behind the stick tip while it is low; each lives ``TRAIL_STEPS``."""

    HIDDEN = [0.0, 0.0, -2.0]

    def __init__(self, task, radius: float = 0.005, size: int = TRAIL_STEPS):
        self.task = task
        self.spheres = []
        for i in range(size):
            b = task.scene.create_actor_builder()
            b.add_sphere_visual(radius=radius, material=sapien.render.RenderMaterial(base_color=[1, 1, 1, 1]))
            b.initial_pose = sapien.Pose(p=self.HIDDEN)
            self.spheres.append(b.build_kinematic(name=f"trail_{i}"))
        self.born = np.full(size, -1)

    def reset(self) -> None:
        self.born[:] = -1
        for s in self.spheres:
            self.task.set_xyz(s, self.HIDDEN)

    def tick(self, clock: int, tip: np.ndarray) -> None:
        for i in np.nonzero((self.born >= 0) & (self.born + TRAIL_STEPS <= clock))[0]:
            self.task.set_xyz(self.spheres[i], self.HIDDEN)
            self.born[i] = -1
        if tip[2] < TOUCH_Z:
            i = clock % len(self.spheres)
            self.task.set_xyz(self.spheres[i], tip)
            self.born[i] = clock

    def visible(self) -> int:
        return int((self.born >= 0).sum())


def touched_node(tip: np.ndarray, nodes_xy: np.ndarray, radius: float = TOUCH_RADIUS, below: float = TOUCH_Z) -> int | None:
    """Index of the node the tip touches (within ``radius`` horizontally, below ``below``)."""
    if tip[2] >= below:
        return None
    d = np.linalg.norm(np.asarray(nodes_xy) - tip[:2], axis=1)
    i = int(np.argmin(d))
    return i if d[i] < radius else None


# ---------------------------------------------------------------------- samplers
COMPASS = {
    (1, 0): "forward",
    (-1, 0): "backward",
    (0, 1): "left",
    (0, -1): "right",
    (1, 1): "forward-left",
    (1, -1): "forward-right",
    (-1, 1): "backward-left",
    (-1, -1): "backward-right",
}
STEP_OF = {v: k for k, v in COMPASS.items()}


def compass_word(dxy) -> str:
    """The nearest of the 8 compass words for a displacement (forward = +x, left = +y)."""
    ang = np.arctan2(dxy[1], dxy[0])
    k = int(np.round(ang / (np.pi / 4))) % 8
    step = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)][k]
    return COMPASS[step]


def grid_neighbours(cell: tuple[int, int], n: int) -> list[tuple[int, int]]:
    """8-connected neighbours of ``cell`` = (i along x, j along y) inside an n x n grid."""
    i, j = cell
    return [(i + di, j + dj) for di, dj in COMPASS if 0 <= i + di < n and 0 <= j + dj < n]


def dfs_path(rng: np.random.Generator, n: int, length: tuple[int, int], attempts: int = 1000) -> list[tuple[int, int]]:
    """A random simple path between two random cells, found by randomised 8-connected DFS.

    Accepted when its node count lies in ``length`` (inclusive); raises after ``attempts``.
    """
    from envs.core.sampling import SceneSamplingError

    cells = [(i, j) for i in range(n) for j in range(n)]
    for _ in range(attempts):
        a, b = rng.choice(len(cells), size=2, replace=False)
        start, goal = cells[a], cells[b]
        stack = [start]
        seen = {start}
        frontier = {start: [c for c in rng.permutation(grid_neighbours(start, n)).tolist()]}
        while stack and stack[-1] != goal:
            top = stack[-1]
            nxt = None
            while frontier[top]:
                c = tuple(frontier[top].pop())
                if c not in seen:
                    nxt = c
                    break
            if nxt is None:
                stack.pop()
                continue
            seen.add(nxt)
            stack.append(nxt)
            frontier[nxt] = [c for c in rng.permutation(grid_neighbours(nxt, n)).tolist()]
        if stack and length[0] <= len(stack) <= length[1]:
            return [tuple(int(v) for v in c) for c in stack]
    raise SceneSamplingError(f"no DFS path with {length[0]}-{length[1]} nodes on a {n}x{n} grid")


def random_walk(rng: np.random.Generator, n_nodes: int, steps: int, backtrack: bool) -> list[int]:
    """A walk over ``n_nodes`` in a row; immediate backtracking only if allowed or at an end."""
    walk = [int(rng.integers(n_nodes))]
    for _ in range(steps):
        here = walk[-1]
        options = [k for k in (here - 1, here + 1) if 0 <= k < n_nodes]
        if not backtrack and len(walk) >= 2 and len(options) > 1:
            options = [k for k in options if k != walk[-2]]
        walk.append(int(options[int(rng.integers(len(options)))]))
    return walk


# ---------------------------------------------------------------------- builders
def _mat(rgb) -> sapien.render.RenderMaterial:
    return sapien.render.RenderMaterial(base_color=[*rgb, 1.0], roughness=0.5)


def build_peg(scene, name: str, link_len: float, half_cross: float, head_rgb, tail_rgb, density: float = 1000.0):
    """A rigid two-link bar (head link + tail link joined by a fixed joint) along its local x.

    The head link's centre is the articulation root; the tail link sits ``link_len`` further
    along -x. Each link is its own segmentation id, so an end can be grounded and grasped.
    """
    b = scene.create_articulation_builder()
    half = [link_len / 2, half_cross, half_cross]
    head = b.create_link_builder(parent=None)
    head.set_name(f"{name}_head")
    head.add_box_collision(half_size=half, density=density)
    head.add_box_visual(half_size=half, material=_mat(head_rgb))
    tail = b.create_link_builder(head)
    tail.set_name(f"{name}_tail")
    tail.add_box_collision(half_size=half, density=density)
    tail.add_box_visual(half_size=half, material=_mat(tail_rgb))
    tail.set_joint_name(f"{name}_weld")
    tail.set_joint_properties(type="fixed", limits=[], pose_in_parent=sapien.Pose([-link_len, 0, 0]), pose_in_child=sapien.Pose())
    b.initial_pose = sapien.Pose(p=[0, 0, -1.0])
    return b.build(name=name, fix_root_link=False)


def peg_links(peg, name: str):
    return peg.links_map[f"{name}_head"], peg.links_map[f"{name}_tail"]


def pose_peg(peg, x: float, y: float, z: float, yaw: float, link_len: float) -> None:
    """Rest the peg so that its *centre* (the joint between the links) is at (x, y, z)."""
    c, s = np.cos(yaw), np.sin(yaw)
    head = [x + c * link_len / 2, y + s * link_len / 2, z]
    peg.set_pose(sapien.Pose(p=head, q=P.yaw_quat(yaw)))
    import torch

    peg.set_root_linear_velocity(torch.zeros(3))
    peg.set_root_angular_velocity(torch.zeros(3))


def _hole_walls(hole_half: float, outer_half: float, half_depth: float, grow: float = 0.0):
    """(pose, half size) of the four walls around a square hole running along local x."""
    wall = (outer_half - hole_half) / 2
    off = hole_half + wall
    walls = []
    for py, pz, hy, hz in (
        (0.0, off, outer_half, wall),  # roof
        (0.0, -off, outer_half, wall),  # floor
        (off, 0.0, wall, hole_half),  # side
        (-off, 0.0, wall, hole_half),  # side
    ):
        walls.append((sapien.Pose([0.0, py, pz]), [half_depth + grow, hy + grow, hz + grow]))
    return walls


def build_holed_box(scene, name: str, hole_half: float, outer_half: float, half_depth: float, rgb):
    """A fixed box with a square through-hole along its local x axis (four walls around it)."""
    b = scene.create_actor_builder()
    for pose, half in _hole_walls(hole_half, outer_half, half_depth):
        b.add_box_collision(pose=pose, half_size=half)
        b.add_box_visual(pose=pose, half_size=half, material=_mat(rgb))
    b.initial_pose = sapien.Pose(p=[0, 0, -1.0])
    return b.build_kinematic(name=name)


def build_box_core(scene, name: str, hole_half: float, outer_half: float, half_depth: float, rgb=P.RED):
    """A red shell over the box walls, shown after a correct insertion (hidden otherwise)."""
    b = scene.create_actor_builder()
    for pose, half in _hole_walls(hole_half, outer_half, half_depth, grow=0.0015):
        b.add_box_visual(pose=pose, half_size=half, material=_mat(rgb))
    b.initial_pose = sapien.Pose(p=[0, 0, -2.0])
    return b.build_kinematic(name=name)


# ---------------------------------------------------------------------- hidden phases
class Phases:
    """Completion flags of scripted phases (hidden resets, static holds) by name."""

    def __init__(self):
        self.done: set[str] = set()

    def mark(self, name: str) -> None:
        self.done.add(name)

    def is_done(self, name: str) -> Callable[[], bool]:
        return lambda: name in self.done

    def run(self, name: str, motion: Actions) -> Actions:
        """Run ``motion`` to its end, then mark ``name`` done."""
        yield from motion
        self.mark(name)


# ---------------------------------------------------------------------- stick tasks
class StickTaskMixin:
    """What PatternLock and RouteStick share: the touch log, the hidden approach to the start
    node and the hidden return to it after the video, and subgoals that repeat their text.

    The task provides ``nodes_xy`` (touchable node centres), ``start_xy`` and, optionally,
    ``flash`` (a :class:`NodeFlash`) and ``trail`` (a :class:`TipTrail`).
    """

    flash: NodeFlash | None = None
    trail: TipTrail | None = None

    def reset_stick_state(self) -> None:
        if self.flash is not None:
            self.flash.reset()
        if self.trail is not None:
            self.trail.reset()
        self.phases = Phases()
        self.touch_log: list[int] = []  # touch events (rising edges), restarted at the live start
        self._touching: int | None = None
        self._live = False
        self.start_q: np.ndarray | None = None

    @property
    def live(self) -> bool:
        return self._live

    def touching(self) -> int | None:
        return touched_node(self.tcp(), self.nodes_xy)

    def stick_animate(self, clock: int) -> None:
        tip = self.tcp()
        now = touched_node(tip, self.nodes_xy)
        entry = self.current_entry
        if not self._live and entry is not None and not entry.demonstration:
            self._live = True  # the first policy step: the log restarts with the node under the stick
            self.touch_log = [] if now is None else [now]
            self.on_live_start()
        elif now is not None and now != self._touching:
            self.touch_log.append(now)
        if self.flash is not None:
            if now is not None and now != self._touching:
                self.flash.flash(now, clock)
            self.flash.tick(clock)
        if self.trail is not None:
            self.trail.tick(clock, tip)
        self._touching = now

    def on_live_start(self) -> None:
        """Hook for tasks that keep more per-move state."""

    def approach_start(self, ex: Executor) -> Actions:
        """Hidden: go over the start node at trace height and remember the joint pose there."""
        yield from stick_over(ex, self.start_xy)
        self.start_q = ex.q_cmd.copy()
        if self.flash is not None:
            self.flash.reset()
        self.phases.mark("approach")

    def return_to_start(self, ex: Executor, hold_total: int = 0) -> Actions:
        """Hidden: home, hold (``hold_total`` steps in all), then back to the remembered pose."""
        from envs.core.base_task import REST_QPOS

        if self.trail is not None:
            self.trail.reset()
        n = 0
        for a in go_joints(ex, REST_QPOS, settle=10):
            n += 1
            yield a
        if hold_total > n:
            yield from ex.hold(hold_total - n)
        if self.flash is not None:
            self.flash.reset()
        yield from stick_over(ex, self.start_xy)
        if self.start_q is not None:
            yield from go_joints(ex, self.start_q, steps=6, settle=4)
        self.phases.mark("return")

    def each_subgoal(self, ex: Executor, one: Callable[[Executor], Actions], wait: int = 40) -> Actions:
        """Run ``one`` move; repeat it at every subgoal boundary reached while it is current.

        Consecutive subgoals can share their text ("move forward" twice) and the scripted policy
        keeps a motion while its text is unchanged, so after one move the motion waits for the
        boundary and, if it is still running then (same text), makes the next move.
        """
        while True:
            index = self.checker.index
            yield from one(ex)
            for _ in range(wait):
                if self.checker.index != index:
                    break
                yield ex.action()
            if self.checker.index == index or self.checker.done:
                return

    def node_near_stick(self, ex: Executor, nodes_xy: np.ndarray) -> tuple[int, np.ndarray]:
        tip = commanded_tip(ex)
        return int(np.argmin(np.linalg.norm(np.asarray(nodes_xy) - tip[:2], axis=1))), tip


# ---------------------------------------------------------------------- gripper solvers
def wrap(a: float) -> float:
    return float(np.angle(np.exp(1j * a)))


def bar_grasp_yaw(bar_yaw: float, reference_yaw: float) -> float:
    """Grasp yaw for a bar lying along ``bar_yaw``: fingers close across it, nearest the reference."""
    cands = bar_yaw + np.pi * np.arange(-2, 3)
    return float(cands[np.argmin([abs(wrap(c - reference_yaw)) for c in cands])])


def move_first_reachable(ex: Executor, poses, settle: int = 2) -> Actions:
    """Move to the first of ``poses`` a plan exists for (fallbacks near the reach limit)."""
    last = None
    for pose in poses:
        try:
            path = ex._plan(pose)
        except PlanningFailed as exc:
            last = exc
            continue
        for q in path:
            ex.q_cmd = np.asarray(q[:7], dtype=np.float64)
            yield ex.action()
        yield from ex.hold(settle)
        return
    raise last if last is not None else PlanningFailed("no poses")


def pick_bar(ex: Executor, link, lift_to: float = 0.12, grasp_z: float | None = None) -> Actions:
    """Grasp one link of a lying bar (fingers across it, from above) and lift it.

    Near the edge of the reach a lower approach and a lift that draws the bar toward the robot
    are tried when the straight ones cannot be planned.
    """
    from envs.core.solvers import CLOSED, OPEN, yaw_of

    p = ex.env.pos(link)
    yaw = bar_grasp_yaw(yaw_of(link), ex.tcp_yaw())
    z = p[2] if grasp_z is None else grasp_z
    if ex.gripper != OPEN:
        yield from ex.set_gripper(OPEN, 6)
    yield from move_first_reachable(ex, [down_pose([p[0], p[1], z + dz], yaw) for dz in (0.08, 0.05, 0.03)])
    yield from ex.move_to(down_pose([p[0], p[1], z], yaw), settle=3)
    yield from ex.set_gripper(CLOSED, 10)
    base = ex.env.agent.robot.pose.p[0].cpu().numpy()[:2].astype(float)
    toward = (base - p[:2]) / np.linalg.norm(base - p[:2])
    lifts = [(0.0, lift_to), (0.05, lift_to - 0.02), (0.10, lift_to - 0.04)]
    yield from move_first_reachable(ex, [down_pose([*(p[:2] + d * toward), h], yaw) for d, h in lifts])


def push_stroke(ex: Executor, start_xy, end_xy, z: float, yaw: float, travel_z: float = 0.09, speed: float = 0.005) -> Actions:
    """Lift, go over ``start_xy``, lower to ``z``, slide to ``end_xy`` at ``z``, lift a little."""
    tip = commanded_tip(ex)
    if tip[2] < travel_z - 0.01:
        yield from follow(ex, line_points(tip, [tip[0], tip[1], travel_z]), ex.tcp_yaw(), settle=0)
    yield from ex.move_to(down_pose([start_xy[0], start_xy[1], travel_z], yaw), settle=2)
    yield from follow(ex, line_points([start_xy[0], start_xy[1], travel_z], [start_xy[0], start_xy[1], z]), yaw, settle=2)
    yield from follow(ex, line_points([start_xy[0], start_xy[1], z], [end_xy[0], end_xy[1], z], speed), yaw, settle=4)
    yield from follow(ex, line_points([end_xy[0], end_xy[1], z], [end_xy[0], end_xy[1], z + 0.05]), yaw, settle=2)


# ---------------------------------------------------------------------- fresh measurements
class Counted:
    """Counts the actions a motion has handed out, so it can wait until they have all run.

    A scripted motion measures the scene when its next action is *drawn*. The demonstration draws
    one action per step, but the scripted policy draws a whole chunk before executing it, so a
    measurement taken in the middle of a motion can be up to a chunk old. ``barrier`` holds the
    arm until the task's step clock has caught up with every action handed out; after it, the
    scene is measured as it really is.
    """

    def __init__(self, task, ex: Executor):
        self.task, self.ex = task, ex
        self.start = task.clock
        self.n = 0

    def run(self, motion: Actions) -> Actions:
        for a in motion:
            self.n += 1
            yield a

    def barrier(self, min_hold: int = 0) -> Actions:
        for _ in range(min_hold):
            self.n += 1
            yield self.ex.action()
        while self.task.clock - self.start < self.n:
            self.n += 1
            yield self.ex.action()


# ---------------------------------------------------------------------- slot grounding
class SegGroundMixin:
    """Ground history-slot alternatives the way the oracle grounds subgoals.

    The oracle writes ``<y, x>`` as segmentation centroids latched at subgoal onset; grounding the
    alternatives by projected centres would differ from it by a pixel or so. Here the correct
    alternative *is* the oracle's latched text, and the others use centroids from one
    segmentation render per subgoal.
    """

    def ground_seg(self, template: str, *objs) -> str:
        e = self.current_entry
        if e is not None and template == e.template and len(objs) == len(e.ground) and all(a is b for a, b in zip(objs, e.ground)):
            return self.grounded_subgoal()
        key = self.checker.index if self.checker is not None else -1
        cache = getattr(self, "_seg_cache", None)
        if cache is None or cache[0] != key:
            cache = (key, self.render_front(segmentation=True)["segmentation"])
            self._seg_cache = cache
        seg = cache[1]
        for o in objs:
            ys, xs = np.nonzero(seg == self.seg_id(o))
            point = f"<{int(ys.mean())}, {int(xs.mean())}>" if len(ys) else self.point_of(o)
            template = template.replace("<>", point, 1)
        return template

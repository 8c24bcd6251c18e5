"""What the four Reference tasks (PickHighlight, VideoRepick, VideoPlaceButton, VideoPlaceOrder) share.

* **Highlight discs** (:class:`HighlightDiscs`): thin visual-only discs that sit 1 cm below an
  object's centre while a step window is open and are parked under the floor otherwise.
* **Two-lane swaps** (:class:`SwapAnimator`): two objects exchange places along straight lines,
  each bulging sideways by ``0.07 * sin(pi * s)`` to its own left, so the two paths form two
  lanes; ``s`` is the smoothstep of the phase fraction and orientations are blended by slerp.
  The partner of a swap is, unless fixed, the object nearest to the first one when it starts.
* **Anchor layouts** (:func:`anchor_points`): three points in a triangle or a line, rotated by a
  random angle about the origin (the VideoUnmaskSwap pattern).
* **The hidden table spot** (:func:`sample_table_spot`): a disc-shaped piece of free table,
  sampled like a target and then kept below the table, so the demonstration has somewhere to put
  the cube down that leaves no mark in the scene.
* **Demonstration phases** (:class:`ReferenceTask`): subgoal entries for "pick", "place",
  "press", "put down", "move home and stay still for 20 steps", static holds of a fixed length
  (during which scripted swaps run), and the hidden 30-step arm reset that ends every video. Hold
  lengths are measured with a phase clock: the absolute step at which each entry became current.
* **Motions that reach the far corners** (:func:`plan_leg`, ``ReferenceTask._pick`` / ``_place``):
  the targets and cubes of these tasks are sampled up to (0.2, ±0.2), 0.8 m from the robot's
  base, where the screw planner's first-order path can end a centimetre or more from its goal,
  crawl, or hit a joint limit. Every leg is therefore checked by forward kinematics, corrected,
  or replaced by a joint-space glide to an inverse-kinematics solution (never a sampling planner,
  so the same scene always gets the same motion). Grasps pick the face-aligned yaw whose open
  fingers clear the neighbouring cubes and that the arm can reach; placements may turn the
  wrist, carry lower, or let go a little higher. Poses truly out of reach raise
  ``PlanningFailed`` (the episode then needs a retry seed, as in the benchmark).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import sapien

from envs.core import primitives as P
from envs.core import solvers as S
from envs.core.base_task import REST_QPOS, HistorySlot, RoboMMETask
from envs.core.checker import SubgoalEntry
from envs.core.options import held_object
from envs.core.sampling import TablePlacer
from envs.core.scene_parts import ButtonMixin, Placed

SWAP_STEPS = 50
SWAP_BULGE = 0.07
HOME_HOLD_STEPS = 20
HIDDEN_RESET_STEPS = 30
HIDDEN_Z = -1.0  # below the floor (z = -0.92): out of every camera's view
HIGHLIGHT_RADIUS = 0.05

# Anchor shapes of three objects (VideoUnmaskSwap's, reused by VideoRepick)
TRIANGLE_ANCHORS = ((-0.05, -0.1), (-0.05, 0.1), (0.1, 0.0))
LINE_ANCHORS = ((0.0, -0.15), (0.0, 0.15), (0.0, 0.0))


# ---------------------------------------------------------------------- geometry helpers
def smoothstep(a: float) -> float:
    a = min(max(a, 0.0), 1.0)
    return a * a * (3.0 - 2.0 * a)


def slerp(q0, q1, t: float) -> np.ndarray:
    """Spherical blend of two (w, x, y, z) quaternions."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    dot = float(np.dot(q0, q1))
    if dot < 0.0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + t * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = math.acos(dot)
    return (math.sin((1 - t) * theta) * q0 + math.sin(t * theta) * q1) / math.sin(theta)


def lane_point(start, end, s: float, bulge: float = SWAP_BULGE) -> np.ndarray:
    """Position (x, y) of an object travelling from ``start`` to ``end`` at progress ``s``.

    It leaves the straight line to its own left by ``bulge * sin(pi * s)``; the partner, moving
    the opposite way, bulges to *its* left, which is the other side: two lanes that never cross.
    """
    start, end = np.asarray(start, float)[:2], np.asarray(end, float)[:2]
    d = end - start
    n = np.linalg.norm(d)
    left = np.array([-d[1], d[0]]) / n if n > 1e-9 else np.zeros(2)
    return start + s * d + bulge * math.sin(math.pi * s) * left


def anchor_points(rng: np.random.Generator) -> tuple[list[tuple[float, float]], str, float]:
    """Three anchors: a triangle or a line (chosen evenly), rotated about the origin."""
    shape = "triangle" if rng.random() < 0.5 else "line"
    base = TRIANGLE_ANCHORS if shape == "triangle" else LINE_ANCHORS
    angle = float(rng.uniform(0.0, 2 * np.pi))
    c, s = math.cos(angle), math.sin(angle)
    pts = [(c * x - s * y, s * x + c * y) for x, y in base]
    return pts, shape, angle


def sample_table_spot(placer: TablePlacer, center, half, radius: float) -> Placed:
    """A free round patch of table, reserved in the sampler and never shown."""
    fp = placer.place(center, half, radius, circle=True, yaw=0.0, min_gap=0.0, what="table spot")
    return Placed("table spot", fp.x, fp.y)


def actor_pose(actor) -> tuple[np.ndarray, np.ndarray]:
    return actor.pose.p[0].cpu().numpy().astype(float), actor.pose.q[0].cpu().numpy().astype(float)


def put_pose(actor, p, q) -> None:
    """Pose an actor (kinematic or dynamic) and, if dynamic, stop it."""
    actor.set_pose(sapien.Pose(p=[float(v) for v in p], q=[float(v) for v in q]))
    if getattr(actor, "px_body_type", "dynamic") == "dynamic":
        import torch

        actor.set_linear_velocity(torch.zeros(3))
        actor.set_angular_velocity(torch.zeros(3))


# ---------------------------------------------------------------------- motions checked by forward kinematics
def _fk_error(ex: S.Executor, pose: sapien.Pose) -> float:
    """How far the commanded joints put the TCP from ``pose`` (planner's model): metres of
    position error plus 5 cm per radian of orientation error."""
    planner = ex.planner
    model = planner.pinocchio_model
    model.compute_forward_kinematics(np.hstack([ex.q_cmd, ex.fingers]))
    at = np.asarray(model.get_link_pose(planner.move_group_link_id))
    goal = np.asarray(planner.transform_goal_to_wrt_base(np.hstack([pose.p, pose.q])))
    angle = 2 * math.acos(min(1.0, abs(float(np.dot(at[3:], goal[3:])))))
    return float(np.linalg.norm(at[:3] - goal[:3])) + 0.05 * angle


def _goal7(pose: sapien.Pose) -> np.ndarray:
    return np.hstack([pose.p, pose.q])


def _screw_path(ex: S.Executor, q7: np.ndarray, pose: sapien.Pose) -> np.ndarray | None:
    """Joint path (n x 7) of a screw motion from ``q7`` to ``pose``; empty if already there,
    None if the screw motion runs into a joint limit or a self-collision."""
    try:
        res = ex.planner.plan_screw(_goal7(pose), np.hstack([q7, ex.fingers]), time_step=ex.dt)
    except RuntimeError:  # a zero-length path cannot be time-parametrised: already there
        return np.empty((0, 7))
    return np.asarray(res["position"])[:, :7] if res["status"] == "Success" else None


def _glide(q0: np.ndarray, q1: np.ndarray, rad_per_step: float = 0.04) -> np.ndarray:
    n = int(np.clip(np.ceil(np.max(np.abs(q1 - q0)) / rad_per_step), 4, 120))
    return np.stack([q0 + (q1 - q0) * smoothstep(k / n) for k in range(1, n + 1)])


def _retime(path: np.ndarray, rad_per_step: float = 0.02) -> np.ndarray:
    """Near the edge of the workspace the time parametrisation of a screw path crawls (a straight
    TCP line needs fast joints there): resample such a path by joint distance instead."""
    if len(path) < 2:
        return path
    d = np.concatenate([[0.0], np.cumsum(np.max(np.abs(np.diff(path, axis=0)), axis=1))])
    n = max(10, int(np.ceil(d[-1] / rad_per_step)))
    if len(path) <= max(80, 3 * n):
        return path
    at = np.array([smoothstep(k / n) for k in range(1, n + 1)]) * d[-1]
    return np.stack([np.interp(at, d, path[:, j]) for j in range(path.shape[1])], axis=1)


def _fk_error_at(ex: S.Executor, q7: np.ndarray, pose: sapien.Pose) -> float:
    saved = ex.q_cmd
    ex.q_cmd = q7
    try:
        return _fk_error(ex, pose)
    finally:
        ex.q_cmd = saved


def _clik(ex: S.Executor, seed7: np.ndarray, pose: sapien.Pose) -> tuple[np.ndarray, float]:
    """Closed-loop IK from ``seed7`` (joints wrapped into, else clipped to, their limits) and
    how far (:func:`_fk_error`) that leaves the TCP from ``pose``: a cheap reachability probe."""
    planner = ex.planner
    goal = planner.transform_goal_to_wrt_base(_goal7(pose))
    q, _, _ = planner.pinocchio_model.compute_IK_CLIK(planner.move_group_link_id, goal, np.hstack([seed7, ex.fingers]))
    q = np.asarray(q, float)
    if not planner.wrap_joint_limit(q):
        lim = np.asarray(planner.joint_limits)
        q = np.clip(q, lim[:, 0], lim[:, 1])
    return q[:7], _fk_error_at(ex, q[:7], pose)


def plan_leg(ex: S.Executor, q7: np.ndarray, pose: sapien.Pose, tol: float = 0.003) -> tuple[np.ndarray | None, float]:
    """A joint path from ``q7`` to ``pose`` and how far (:func:`_fk_error`) it ends from it.

    First a screw motion (a straight TCP line), whose end is checked by forward kinematics and
    corrected by up to two short screw motions: the screw planner integrates in first-order
    joint steps and near the edge of the workspace can end a centimetre or more off. If that
    fails (a joint limit on the way, still off, or a crawl), a smooth joint-space glide to a
    closed-loop inverse kinematics solution. Deterministic: no random restarts and no sampling
    planner, so the same scene always gets the same motion.
    """
    path, q, err = [], np.asarray(q7, float), float("inf")
    for _ in range(3):
        leg = _screw_path(ex, q, pose)
        if leg is None:
            break
        path.append(leg)
        if len(leg):
            q = leg[-1]
        err = _fk_error_at(ex, q, pose)
        if err < tol or not len(leg):
            break
    joined = _retime(np.concatenate(path)) if path else np.empty((0, 7))
    if err < tol and len(joined) <= 200:
        return joined, err
    # else: glide in joint space to the best inverse-kinematics solution, or, if the screw path
    # got closer, to where it ended (out of reach by a little: the closest the arm gets), rather
    # than crawl along it
    q0 = np.asarray(q7, float)
    q_ik, err_ik = min((_clik(ex, seed, pose) for seed in (q0, REST_QPOS)), key=lambda r: r[1])
    if err_ik < tol or err_ik <= err:
        return _glide(q0, q_ik), err_ik
    if len(joined):
        return _glide(q0, joined[-1]), err
    return (None, float("inf")) if not path else (joined, err)


def move_leg(ex: S.Executor, pose: sapien.Pose, max_err: float = 0.01, settle: int = 2):
    """Stream the :func:`plan_leg` path to ``pose``; ``PlanningFailed`` if it cannot get within
    ``max_err`` (the pose is out of reach)."""
    path, err = plan_leg(ex, ex.q_cmd, pose)
    if path is None or err > max_err:
        off = "no path" if path is None else f"the best path ends {err * 100:.1f} cm off"
        raise S.PlanningFailed(f"{np.round(pose.p, 3).tolist()} is out of reach ({off})")
    yield from stream(ex, path, settle)


def plan_chain(ex: S.Executor, *poses: sapien.Pose) -> tuple[list[np.ndarray] | None, list[float]]:
    """:func:`plan_leg` through ``poses`` in turn from the commanded joints: the paths and the
    end error of each leg (None if a leg has no path)."""
    q, paths, errs = np.asarray(ex.q_cmd, float), [], []
    for pose in poses:
        path, err = plan_leg(ex, q, pose)
        if path is None:
            return None, [float("inf")] * len(poses)
        paths.append(path)
        errs.append(err)
        if len(path):
            q = path[-1]
    return paths, errs


def stream(ex: S.Executor, path: np.ndarray, settle: int = 2):
    """Command the joints of ``path`` one step each, then hold still for ``settle`` steps."""
    for q in path:
        ex.q_cmd = np.asarray(q, dtype=np.float64)
        yield ex.action()
    yield from ex.hold(settle)


def leg_error(ex: S.Executor, *poses: sapien.Pose) -> float:
    """How close the arm can get to ``poses`` in turn (worst leg, by :func:`_clik` from the
    commanded joints or the rest pose): below a few millimetres means reachable."""
    q, worst = np.asarray(ex.q_cmd, float), 0.0
    for pose in poses:
        best = min((_clik(ex, seed, pose) for seed in (q, REST_QPOS)), key=lambda r: r[1])
        q, worst = best[0], max(worst, best[1])
    return worst


# ---------------------------------------------------------------------- highlight discs
class HighlightDiscs:
    """One visual-only disc per highlighted object, shown only while a window is open."""

    def __init__(self, scene, objects: list, rgb=P.WHITE, radius: float = HIGHLIGHT_RADIUS, name: str = "highlight"):
        self.objects = list(objects)
        self.discs = [P.build_disc(scene, f"{name}_{i}", rgb, radius) for i in range(len(self.objects))]
        self.visible = False

    def show(self) -> None:
        for disc, obj in zip(self.discs, self.objects):
            p, _ = actor_pose(obj)
            put_pose(disc, [p[0], p[1], p[2] - 0.01], [1, 0, 0, 0])
        self.visible = True

    def hide(self) -> None:
        for disc in self.discs:
            put_pose(disc, [0.0, 0.0, HIDDEN_Z], [1, 0, 0, 0])
        self.visible = False

    def update(self, on: bool) -> None:
        if on:
            self.show()  # follows its object
        elif self.visible:
            self.hide()


# ---------------------------------------------------------------------- swaps
class SwapAnimator:
    """Runs one two-lane swap at a time among ``objects`` (cubes or target discs).

    ``begin(first, partner=None)`` fixes the pair (the nearest object when ``partner`` is None)
    and their start poses; ``update(k)`` poses both at step ``k`` of ``duration`` (k = 1..duration,
    exactly exchanged at k = duration). ``log`` keeps the pairs in the order they ran.
    """

    def __init__(self, objects: list, duration: int = SWAP_STEPS, bulge: float = SWAP_BULGE):
        self.objects = list(objects)
        self.duration = duration
        self.bulge = bulge
        self.log: list[tuple[int, int]] = []
        self._pair: tuple[int, int] | None = None
        self._start: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def nearest(self, first: int) -> int:
        p0 = actor_pose(self.objects[first])[0][:2]
        dist = [np.inf if i == first else float(np.linalg.norm(actor_pose(o)[0][:2] - p0)) for i, o in enumerate(self.objects)]
        return int(np.argmin(dist))

    def begin(self, first: int, partner: int | None = None) -> tuple[int, int]:
        partner = self.nearest(first) if partner is None else partner
        self._pair = (first, partner)
        self._start = {i: actor_pose(self.objects[i]) for i in self._pair}
        self.log.append(self._pair)
        return self._pair

    def update(self, k: int) -> None:
        if self._pair is None:
            return
        a, b = self._pair
        s = smoothstep(k / self.duration)
        (pa, qa), (pb, qb) = self._start[a], self._start[b]
        for i, (p0, q0, p1, q1) in ((a, (pa, qa, pb, qb)), (b, (pb, qb, pa, qa))):
            xy = lane_point(p0, p1, s, self.bulge)
            z = p0[2] + (p1[2] - p0[2]) * s
            put_pose(self.objects[i], [xy[0], xy[1], z], slerp(q0, q1, s))
        if k >= self.duration:
            self._pair = None


# ---------------------------------------------------------------------- the task base
class ReferenceTask(ButtonMixin, RoboMMETask):
    """Common predicates, demonstration phases and options of the Reference suite.

    Subclasses provide ``self.cubes`` (list of cube actors) and ``self.button``; optional
    ``self.targets``. The phase clock records, in ``animate``, the absolute step at which each
    subgoal entry became current, so an entry can last an exact number of steps.
    """

    OPTION_PATTERNS = (
        (r"^(place|put|drop)\b.*\btable\b", "put_down"),
        (r"^(put|drop)\b.*\bdown\b", "put_down"),
        *RoboMMETask.OPTION_PATTERNS,
    )

    LIFT_Z = 0.05      # "lifted": the cube's centre above 5 cm
    REST_Z = 0.03      # "resting": the cube's centre below 3 cm (it sits at 2 cm)
    RELEASE_TCP_Z = 0.07  # after a put-down the gripper has risen above 7 cm
    PLACE_RADIUS = 0.05

    cubes: list
    button: Any

    # ------------------------------------------------------------------ phase clock
    def reset_phases(self) -> None:
        self._phase_start: dict[int, int] = {}
        self._home_still = 0
        self._entered = 0

    def on_enter(self, index: int) -> None:
        """Called right after the checker moves on to entry ``index`` (before anyone reads it)."""

    def _after_control_step(self):
        super()._after_control_step()
        if self.checker is not None and self.checker.index != self._entered:
            self._entered = self.checker.index
            self.on_enter(self._entered)

    def track_phase(self, clock: int) -> int:
        """Record the start of the current entry; returns which step of it ``clock`` is (1-based)."""
        if self.checker is None:
            return 0
        start = self._phase_start.setdefault(self.checker.index, clock)
        return clock - start + 1

    def phase_steps(self) -> int:
        if self.checker is None or self.checker.index not in self._phase_start:
            return 0
        return self.clock - self._phase_start[self.checker.index] + 1

    def held_for(self, steps: int) -> Callable[[], bool]:
        return lambda: self.phase_steps() >= steps

    @property
    def policy_start_clock(self) -> int | None:
        """Absolute step of the first policy-controlled step (None before it)."""
        if self.checker is None:
            return None
        first_live = next((i for i, e in enumerate(self.checker.entries) if not e.demonstration), None)
        return None if first_live is None else self._phase_start.get(first_live)

    def policy_steps(self) -> int:
        start = self.policy_start_clock
        return 0 if start is None else self.clock - start + 1

    # ------------------------------------------------------------------ scripted swaps
    def swap_pair(self, swap) -> tuple[int, int | None]:
        """(first, partner) of the swap named by an entry's ``swap`` param; None = nearest."""
        raise NotImplementedError

    def animate(self, clock: int) -> None:
        """Run the swap of the current hold entry, if any, over its first SWAP_STEPS steps."""
        k = self.track_phase(clock)
        e = self.current_entry
        if e is not None and "swap" in e.params and 1 <= k <= self.swapper.duration:
            if k == 1:
                self.swapper.begin(*self.swap_pair(e.params["swap"]))
            self.swapper.update(k)

    # ------------------------------------------------------------------ predicates
    def picked(self, cube) -> bool:
        return self.lifted(cube, self.LIFT_Z) and self.is_grasping(cube)

    def resting(self, cube) -> bool:
        """Let go of, sitting on the table, with the gripper away above it."""
        return self.pos(cube)[2] < self.REST_Z and self.tcp()[2] > self.RELEASE_TCP_Z and not self.is_grasping(cube)

    def resting_at(self, cube, xy, radius: float | None = None) -> bool:
        r = self.PLACE_RADIUS if radius is None else radius
        return self.resting(cube) and float(np.linalg.norm(self.pos(cube)[:2] - np.asarray(xy, float)[:2])) < r

    def resting_on(self, cube, target) -> bool:
        return self.resting_at(cube, self.pos(target)[:2])

    def any_lifted(self, cubes) -> bool:
        return any(self.lifted(c, self.LIFT_Z) for c in cubes)

    def at_home(self) -> bool:
        return bool(np.all(np.abs(self.qpos()[:7] - REST_QPOS) < 0.03))

    def home_and_still(self, steps: int) -> Callable[[], bool]:
        def pred() -> bool:
            self._home_still = self._home_still + 1 if self.at_home() else 0
            return self._home_still >= steps
        return pred

    # ------------------------------------------------------------------ demonstration entries
    def demo_pick(self, cube, name: str = "pick up the cube") -> SubgoalEntry:
        return SubgoalEntry(name=name, template=name.replace("cube", "cube at <>", 1), success=lambda: self.picked(cube),
                            option="pick", ground=(cube,), target=cube, demonstration=True)

    def demo_place(self, cube, target, name: str = "place the cube onto the target") -> SubgoalEntry:
        return SubgoalEntry(name=name, template=f"{name} at <>", success=lambda: self.resting_on(cube, target),
                            option="place", ground=(target,), target=target, demonstration=True)

    def demo_put_down(self, cube, xy=None, name: str = "drop the cube on the table") -> SubgoalEntry:
        """Put the held cube down where it is (``xy`` None) or at ``xy`` (the hidden table spot)."""
        if xy is None:
            success = lambda: self.resting(cube)  # noqa: E731
            params = {}
        else:
            success = lambda: self.resting_at(cube, xy)  # noqa: E731
            params = {"xy": (float(xy[0]), float(xy[1]))}
        return SubgoalEntry(name=name, template=name, success=success, option="put_down", demonstration=True, params=params)

    def demo_press(self, name: str = "press the button") -> SubgoalEntry:
        cap = P.button_cap(self.button)
        return SubgoalEntry(name=name, template=f"{name} at <>", success=lambda: self.button_pressed(self.button),
                            option="press", ground=(cap,), target=self.button, demonstration=True)

    def demo_home(self, steps: int = HOME_HOLD_STEPS) -> SubgoalEntry:
        return SubgoalEntry(name="move to the home pose and stay still", template="move to the home pose and stay still",
                            success=self.home_and_still(steps), option="home", demonstration=True, params={"steps": steps})

    def demo_hold(self, steps: int, name: str = "stay still", **params) -> SubgoalEntry:
        return SubgoalEntry(name=name, template=name, success=self.held_for(steps), option="hold",
                            demonstration=True, params={"steps": steps, **params})

    def demo_hidden_reset(self, steps: int = HIDDEN_RESET_STEPS) -> SubgoalEntry:
        return SubgoalEntry(name="NO RECORD", template="NO RECORD", success=self.held_for(steps), option="reset_arm",
                            demonstration=True, record=False, params={"steps": steps})

    # ------------------------------------------------------------------ options
    def candidates(self, option: str):
        if option == "pick":
            return [(f"{c} cube", a) for c, a in zip(self.cube_colours, self.cubes)]
        if option == "place":
            return [("target", t) for t in getattr(self, "targets", [])]
        if option == "press":
            return [("button", self.button)]
        if option == "put_down":
            return [("table", self.table_scene.table)]
        return []

    @property
    def cube_colours(self) -> list[str]:
        return [c.label for c in self.layout.cubes]

    def motion(self, option: str, target, executor: S.Executor, params: dict | None = None):
        params = params or {}
        if option == "pick" and target is not None:
            return self._pick(executor, target)
        if option == "place" and target is not None:
            held = held_object(self)
            return self._place(executor, held, self.pos_of(target)[:2]) if held is not None else iter(())
        if option == "put_down":
            return self._put_down(executor, params)
        if option == "home":
            return self._home(executor, params.get("steps", HOME_HOLD_STEPS))
        if option == "hold":
            return executor.hold(params.get("steps", 1))
        if option == "reset_arm":
            return self._hidden_reset(executor, params.get("steps", HIDDEN_RESET_STEPS))
        return super().motion(option, target, executor, params)

    FINGER_REACH = 0.045  # finger centre from the grasp centre, gripper open
    FINGER_CLEARANCE = 0.05  # wanted distance from a finger centre to a neighbouring cube's centre
    CARRY_HEIGHTS = (0.15, 0.12, 0.10)  # TCP heights to carry / lift at, highest reachable first
    PLACE_SLACK = 0.025  # a release pose this far off still drops the cube on its spot

    def grasp_yaws(self, actor, reference_yaw: float) -> list[float]:
        """The four face-aligned grasp yaws, best first: open fingers clear of the neighbouring
        cubes, then the least wrist turn from ``reference_yaw``."""
        p = self.pos(actor)[:2]
        others = [self.pos(c)[:2] for c in self.cubes if c is not actor]

        def clearance(yaw: float) -> float:
            d = np.array([-np.sin(yaw), np.cos(yaw)]) * self.FINGER_REACH
            return min((float(np.linalg.norm(p + s * d - o)) for s in (1, -1) for o in others), default=np.inf)

        base = S.yaw_of(actor)
        yaws = []
        for k in range(4):
            y = base + k * np.pi / 2
            y = reference_yaw + float(np.angle(np.exp(1j * (y - reference_yaw))))  # nearest turn
            yaws.append(y)
        return sorted(yaws, key=lambda y: (clearance(y) < self.FINGER_CLEARANCE, abs(y - reference_yaw)))

    def _rise(self, ex: S.Executor, xy, yaw: float):
        """Up to the highest carry height reachable above ``xy``."""
        for z in self.CARRY_HEIGHTS:
            pose = S.down_pose([xy[0], xy[1], z], yaw)
            if leg_error(ex, pose) < 0.01 or z == self.CARRY_HEIGHTS[-1]:
                yield from move_leg(ex, pose, max_err=0.03)
                return

    def _pick(self, ex: S.Executor, actor):
        """Top-down grasp and lift. The grasp yaw keeps the open fingers clear of neighbouring
        cubes and is one the arm can reach; at the far edge of the workspace the lift settles
        for a lower height. Every leg is checked by forward kinematics (:func:`plan_leg`)."""
        p = self.pos(actor)
        tcp = self.tcp()
        if tcp[2] < 0.12 and np.linalg.norm(tcp[:2] - p[:2]) > 0.03:
            # coming from low down (a button press, a put-down): rise first, so that the open
            # fingers do not sweep through the cubes on the way
            yield from self._rise(ex, tcp[:2], ex.tcp_yaw())
        legs = lambda y: (S.down_pose([p[0], p[1], p[2] + 0.08], y), S.down_pose([p[0], p[1], p[2]], y))  # noqa: E731
        # yaws in order of preference, those the probe finds reachable first; the first whose
        # actual plan ends close enough wins (a few millimetres off still grasps a 4 cm cube
        # between fingers 8 cm apart)
        yaws = self.grasp_yaws(actor, ex.tcp_yaw())
        probe = {y: leg_error(ex, *legs(y)) for y in yaws}
        ranked = [y for y in yaws if probe[y] < 0.004] + sorted((y for y in yaws if probe[y] >= 0.004), key=probe.get)
        plan = None
        for y in ranked:
            paths, errs = plan_chain(ex, *legs(y))
            if paths is not None and errs[0] <= 0.02 and errs[1] <= 0.012:
                plan, yaw = paths, y
                break
        if plan is None:
            raise S.PlanningFailed(f"cannot grasp the cube at {np.round(p, 3).tolist()}: out of reach")
        if ex.gripper != S.OPEN:
            yield from ex.set_gripper(S.OPEN, 6)
        for path in plan:
            yield from stream(ex, path)
        yield from ex.set_gripper(S.CLOSED, 10)
        yield from self._rise(ex, p[:2], yaw)

    def _place(self, ex: S.Executor, held, xy):
        """Carry the held cube over ``xy``, lower it onto the table, open and rise.

        A cube does not mind which way it is turned, so when the carry or release pose is out
        of reach with the current wrist angle, the wrist turns by 90 or 180 degrees on the way
        (the cube's offset from the TCP turns with it), and the carry height drops if need be.
        """
        obj, tcp, yaw0 = self.pos(held), self.tcp(), ex.tcp_yaw()
        offset = tcp[:2] - obj[:2]
        release = 0.025 + (tcp[2] - obj[2]) + 0.005
        xy = np.asarray(xy, float)[:2]

        def legs(carry, turn, drop):
            c, s_ = np.cos(turn), np.sin(turn)
            at = xy + np.array([c * offset[0] - s_ * offset[1], s_ * offset[0] + c * offset[1]])
            return (S.down_pose([at[0], at[1], max(carry, release + drop)], yaw0 + turn),
                    S.down_pose([at[0], at[1], release + drop], yaw0 + turn))

        # the first option that lands exactly (at the far edge of the workspace: letting go a
        # centimetre or two higher); else the closest, if it still lands on the spot
        options = [(carry, turn, drop) for drop in (0.0, 0.01, 0.02) for carry in self.CARRY_HEIGHTS
                   for turn in (0.0, np.pi / 2, -np.pi / 2, np.pi)]
        # probe cheaply, then plan for real in order: the options that land exactly (in the
        # order above), then the others, closest first; the first real plan on the spot wins
        probe = []
        for o in options:
            probe.append((leg_error(ex, *legs(*o)), o))
            if probe[-1][0] < 0.004:
                break
        exact = [o for e, o in probe if e < 0.004]
        ranked = exact + [o for e, o in sorted(probe, key=lambda r: r[0]) if e >= 0.004 and e <= self.PLACE_SLACK]
        plan = None
        for o in ranked[:8]:
            paths, errs = plan_chain(ex, *legs(*o))
            if paths is not None and max(errs) <= self.PLACE_SLACK:
                plan, down = paths, legs(*o)[1]
                break
        if plan is None:
            raise S.PlanningFailed(f"cannot set the cube down at {np.round(xy, 3).tolist()}: out of reach")
        for path in plan:
            yield from stream(ex, path)
        yield from ex.set_gripper(S.OPEN, 6)
        yield from self._rise(ex, down.p[:2], ex.tcp_yaw())

    def _put_down(self, ex: S.Executor, params: dict):
        """Carry the held cube to ``params["xy"]`` and set it down; without ``xy``, straight down."""
        held = held_object(self)
        if held is None:
            return
        if params.get("xy") is not None:
            yield from self._place(ex, held, params["xy"])
            return
        obj, tcp, yaw = self.pos(held), self.tcp(), ex.tcp_yaw()
        release_z = tcp[2] - obj[2] + 0.025 + 0.005
        yield from move_leg(ex, S.down_pose([tcp[0], tcp[1], release_z], yaw), max_err=self.PLACE_SLACK)
        yield from ex.set_gripper(S.OPEN, 6)
        yield from self._rise(ex, tcp[:2], yaw)

    def _home(self, ex: S.Executor, hold: int):
        """Joint-space glide to the rest configuration (smoothstep timing), then stay still."""
        q0 = ex.q_cmd.copy()
        n = int(np.clip(np.ceil(np.max(np.abs(REST_QPOS - q0)) / 0.04), 10, 80))
        for k in range(1, n + 1):
            ex.q_cmd = q0 + (REST_QPOS - q0) * smoothstep(k / n)
            yield ex.action()
        yield from ex.hold(hold + 10)

    def _hidden_reset(self, ex: S.Executor, steps: int):
        """Teleport the arm to its reset configuration (gripper open) and hold; never recorded."""
        q = self.agent.robot.get_qpos()[0].cpu().numpy().copy()
        q[:7] = REST_QPOS
        if q.shape[0] > 7:
            q[7:] = 0.04
        import torch

        self.agent.reset(torch.as_tensor(q, dtype=torch.float32))
        ex.sync(gripper=S.OPEN)
        yield from ex.hold(steps)


# ---------------------------------------------------------------------- place-on-a-remembered-target
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
        from envs.core.scene_parts import button_keep_out, sample_button, sample_cubes, sample_target

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
        from envs.core.scene_parts import pose_button, pose_cube, pose_flat

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
            ProbeQuestion("binding", "which target does the goal ask for?", "reference target",
                          points[self.correct_target], tuple(points)),
            ProbeQuestion("count", "how many target places did the video show?", "demonstrated places",
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

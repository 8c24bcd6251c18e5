"""Scripted solvers: mplib motion plans turned into streams of joint-position actions.

A solver is a generator of 8-D actions (7 arm joint targets + gripper, +1 open / -1 closed).
It plans lazily, segment by segment, from the *last commanded* joint target rather than the
measured one, because a chunk of actions is drawn from the generator before it is executed.
Solvers are fail-aware: a plan is tried as a screw motion, then with RRTConnect up to three
times; if all fail the solver records the reason in ``Executor.failures`` and stops (the arm
holds still), it never raises into the control loop.
"""

from __future__ import annotations

from collections.abc import Iterator

import mplib
import numpy as np
import sapien
from transforms3d.quaternions import mat2quat

OPEN, CLOSED = 1.0, -1.0
Actions = Iterator[np.ndarray]


class PlanningFailed(RuntimeError):
    pass


_LIBC = None


def seed_planner_randomness(seed: int) -> None:
    """Seed the C library's ``rand()``, which mplib's IK restarts draw from.

    ``mplib.Planner`` samples random start configurations with pinocchio's
    ``getRandomConfiguration`` (Eigen's ``Random``, i.e. ``std::rand``), a process-wide stream nobody
    seeds: the same episode then planned differently depending on what the process had planned
    before it (val BinFill episode 3 timed out in a fresh process and succeeded after episode 2).
    Called at every reset with the episode's seed, so a plan depends on the episode alone.
    """
    global _LIBC
    import ctypes

    if _LIBC is None:
        _LIBC = ctypes.CDLL(None)
    _LIBC.srand(ctypes.c_uint(int(seed) & 0xFFFFFFFF))


def down_pose(xyz, yaw: float) -> sapien.Pose:
    """A TCP pose pointing straight down, with the fingers closing along world angle ``yaw``."""
    approach = np.array([0.0, 0.0, -1.0])
    closing = np.array([-np.sin(yaw), np.cos(yaw), 0.0])
    ortho = np.cross(closing, approach)
    rot = np.stack([ortho, closing, approach], axis=1)
    return sapien.Pose(p=list(map(float, xyz)), q=mat2quat(rot))


def nearest_yaw(object_yaw: float, reference_yaw: float) -> float:
    """Of the four faces of a square object, the grasp yaw closest to the reference."""
    candidates = object_yaw + np.arange(-4, 5) * (np.pi / 2)
    return float(candidates[np.argmin(np.abs(np.angle(np.exp(1j * (candidates - reference_yaw)))))])


def yaw_of(actor) -> float:
    q = actor.pose.q[0].cpu().numpy()
    w, x, y, z = q
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


class Executor:
    """Plans and streams actions for one env; holds the commanded arm target and gripper."""

    def __init__(self, env, joint_vel_scale: float = 0.9):
        self.env = env
        agent = env.agent
        robot = agent.robot
        self.planner = mplib.Planner(
            urdf=agent.urdf_path,
            srdf=agent.urdf_path.replace(".urdf", ".srdf"),
            user_link_names=[link.get_name() for link in robot.get_links()],
            user_joint_names=[j.get_name() for j in robot.get_active_joints()],
            move_group="panda_hand_tcp",
        )
        base = robot.pose
        self.planner.set_base_pose(np.hstack([base.p[0].cpu().numpy(), base.q[0].cpu().numpy()]))
        self.planner.joint_vel_limits = np.asarray(self.planner.joint_vel_limits) * joint_vel_scale
        self.planner.joint_acc_limits = np.asarray(self.planner.joint_acc_limits) * joint_vel_scale
        self.dt = env.control_timestep
        self.has_gripper = env.action_space.shape[-1] == 8
        self.failures: list[str] = []
        self.sync()

    def sync(self, gripper: float | None = None) -> None:
        """Take the measured arm state as the commanded one (at the start of a subgoal)."""
        q = self.env.qpos()
        self.q_cmd = q[:7].astype(np.float64)
        self.fingers = q[7:].astype(np.float64)
        if gripper is not None:
            self.gripper = gripper
        elif self.has_gripper:
            self.gripper = OPEN if q[7] > 0.035 else CLOSED
        else:
            self.gripper = OPEN

    def action(self, q7=None) -> np.ndarray:
        q7 = self.q_cmd if q7 is None else q7
        if self.has_gripper:
            return np.hstack([q7, self.gripper]).astype(np.float32)
        return np.asarray(q7, dtype=np.float32)

    # ------------------------------------------------------------------ planning
    def plan(self, pose: sapien.Pose) -> np.ndarray:
        """Joint path (N, dof) from the commanded target to ``pose``; raises PlanningFailed."""
        start = np.hstack([self.q_cmd, self.fingers])
        goal = np.hstack([pose.p, pose.q])
        res = {"status": "not tried"}
        attempts = [lambda: self.planner.plan_screw(goal, start, time_step=self.dt)] * 2 + [
            lambda: self.planner.plan_qpos_to_pose(goal, start, time_step=self.dt, wrt_world=True, planning_time=1)] * 3
        for attempt in attempts:
            try:
                res = attempt()
            except RuntimeError as exc:  # mplib raises on degenerate (e.g. zero-length) paths
                res = {"status": f"{type(exc).__name__}: {exc}"}
            if res["status"] == "Success":
                return res["position"]
        raise PlanningFailed(f"no plan to {np.round(pose.p, 3).tolist()}: {res['status']}")

    _plan = plan  # kept for callers written before ``plan`` was public

    def move_to(self, pose: sapien.Pose, settle: int = 2) -> Actions:
        path = self.plan(pose)
        for q in path:
            self.q_cmd = np.asarray(q[:7], dtype=np.float64)
            yield self.action()
        for _ in range(settle):
            yield self.action()

    def hold(self, steps: int) -> Actions:
        for _ in range(steps):
            yield self.action()

    def set_gripper(self, value: float, steps: int = 8) -> Actions:
        self.gripper = value
        self.fingers = np.full_like(self.fingers, 0.04 if value > 0 else 0.0)
        yield from self.hold(steps)

    def tcp_yaw(self) -> float:
        m = self.env.agent.tcp.pose.to_transformation_matrix()[0, :3, 1].cpu().numpy()
        return float(np.arctan2(-m[0], m[1]))

    def guarded(self, motion: Actions, what: str) -> Actions:
        """Run ``motion``; on a planning failure record it and stop cleanly."""
        try:
            yield from motion
        except PlanningFailed as exc:
            self.failures.append(f"{what}: {exc}")


# ---------------------------------------------------------------------- motion primitives
def pick(ex: Executor, actor, lift_to: float = 0.15, grasp_dz: float = 0.0, quarter_turns: int = 0) -> Actions:
    """Grasp ``actor`` from above and lift it; ``quarter_turns`` turns the grasp by 90 degrees each
    (the fingers close on the other pair of faces: a retry after a grip that closed on nothing)."""
    p = ex.env.pos(actor)
    yaw = nearest_yaw(yaw_of(actor), ex.tcp_yaw()) + quarter_turns * (np.pi / 2)
    if ex.gripper != OPEN:
        yield from ex.set_gripper(OPEN, 6)
    yield from ex.move_to(down_pose([p[0], p[1], p[2] + 0.08], yaw))
    yield from ex.move_to(down_pose([p[0], p[1], p[2] + grasp_dz], yaw))
    yield from ex.set_gripper(CLOSED, 10)
    yield from ex.move_to(down_pose([p[0], p[1], lift_to], yaw))


def place_at(ex: Executor, held, xy, release_z: float | None = None, retreat_z: float = 0.15) -> Actions:
    """Carry the held object over ``xy``, lower it, open, retreat upward."""
    obj = ex.env.pos(held)
    tcp = ex.env.tcp()
    offset = tcp[:2] - obj[:2]  # keep the grasp offset so the object, not the TCP, lands on xy
    yaw = ex.tcp_yaw()
    half = obj[2] - 0.0 if release_z is None else None
    z_obj = release_z if release_z is not None else 0.025
    dz = tcp[2] - obj[2]
    x, y = float(xy[0] + offset[0]), float(xy[1] + offset[1])
    yield from ex.move_to(down_pose([x, y, max(tcp[2], 0.12)], yaw))
    yield from ex.move_to(down_pose([x, y, z_obj + dz + 0.005], yaw))
    yield from ex.set_gripper(OPEN, 6)
    yield from ex.move_to(down_pose([x, y, retreat_z], yaw))
    del half


def move_over(ex: Executor, held, xy, z_obj: float = 0.06) -> Actions:
    """Carry the held object to hover over ``xy`` (without releasing)."""
    obj = ex.env.pos(held)
    tcp = ex.env.tcp()
    offset = tcp[:2] - obj[:2]
    dz = tcp[2] - obj[2]
    yaw = ex.tcp_yaw()
    yield from ex.move_to(down_pose([xy[0] + offset[0], xy[1] + offset[1], z_obj + dz], yaw))
    yield from ex.hold(4)


def press(ex: Executor, cap_xy, cap_top: float, depth: float = 0.012) -> Actions:
    """Close the gripper and push the button cap down, then come back up."""
    yaw = ex.tcp_yaw()
    if ex.gripper != CLOSED and ex.has_gripper:
        yield from ex.set_gripper(CLOSED, 6)
    yield from ex.move_to(down_pose([cap_xy[0], cap_xy[1], cap_top + 0.06], yaw))
    yield from ex.move_to(down_pose([cap_xy[0], cap_xy[1], cap_top - depth], yaw), settle=4)
    yield from ex.move_to(down_pose([cap_xy[0], cap_xy[1], cap_top + 0.08], yaw))


def hover_over(ex: Executor, xy, z: float) -> Actions:
    """Move the (empty) TCP above ``xy`` at height ``z`` and stay."""
    yield from ex.move_to(down_pose([xy[0], xy[1], z], ex.tcp_yaw()))

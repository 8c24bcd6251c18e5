"""Motions that reach the far corners of the table, checked by forward kinematics (the Reference tasks).

The targets and cubes of the Reference tasks are sampled up to (0.2, ±0.2), 0.8 m from the robot's
base, where the screw planner's first-order path can end a centimetre or more from its goal,
crawl, or hit a joint limit. Every leg is therefore checked by forward kinematics, corrected,
or replaced by a joint-space glide to an inverse-kinematics solution (never a sampling planner,
so the same scene always gets the same motion). Poses truly out of reach raise
``PlanningFailed`` (the episode then needs a retry seed, as in the benchmark). The grasp and
placement strategies built on these legs are ``ReferenceTask._pick`` / ``_place``
(``envs/core/bases/reference.py``).
"""

from __future__ import annotations

import math

import numpy as np
import sapien

from envs.core import solvers as S
from envs.core.base_task import REST_QPOS
from envs.core.easing import smoothstep


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

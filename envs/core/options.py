"""Executor options: what each subgoal verb does, as a scripted motion.

An option maps (task, target object, executor) to a stream of actions. The same options run the
conditioning video inside ``reset`` and the scripted low-level policy, so the demonstration and
the policy act alike. Tasks add their own options by extending ``RoboMMETask.motion``.
"""

from __future__ import annotations

import numpy as np

from envs.core import primitives as P
from envs.core import solvers as S


def held_object(task):
    """The object currently in the gripper, among everything the task lets the robot pick."""
    for _, actor in task.candidates("pick"):
        if task.is_grasping(actor):
            return actor
    return None


def _xy(task, target) -> np.ndarray:
    if hasattr(target, "links_map"):  # articulation (button): its root pose
        return target.pose.p[0].cpu().numpy()[:2].astype(float)
    return task.pos(target)[:2]


def common_motion(task, option: str, target, ex: S.Executor, params: dict):
    if option == "pick":
        yield from S.pick(ex, target, quarter_turns=int(params.get("quarter_turns", 0)))
    elif option == "place":
        held = held_object(task)
        if held is None:
            return
        yield from S.place_at(ex, held, _xy(task, target))
    elif option == "press":
        cap = P.button_cap(target)
        yield from S.press(ex, cap.pose.p[0].cpu().numpy()[:2], P.cap_top_z())
    elif option == "move_over":
        held = held_object(task)
        if held is None:
            return
        yield from S.move_over(ex, held, _xy(task, target), z_obj=params.get("z", 0.06))
    elif option == "wait":
        yield from ex.hold(params.get("steps", 16))
    else:
        raise KeyError(f"{task.TASK}: no executor for option {option!r}")

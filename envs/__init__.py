"""The 16 RoboMME tasks on ManiSkill 3. Importing this package registers ``robomme/<Task>-v0``.

>>> import gymnasium as gym, envs
>>> env = gym.make("robomme/PickXtimes-v0")
>>> obs, info = env.reset(options={"episode": envs.episode_spec("PickXtimes", 0)})
"""

from __future__ import annotations

import importlib

import gymnasium as gym

from envs.episodes import ALL_TASKS, SUITES, EpisodeSpec, check_task, episode_spec

# task name -> "module:Class"; a task appears here once it is implemented
TASK_CLASSES: dict[str, str] = {
    "PickXtimes": "envs.tasks.pick_xtimes:PickXtimes",
}


def task_class(task: str):
    check_task(task)
    if task not in TASK_CLASSES:
        raise NotImplementedError(f"task {task!r} is not implemented yet (implemented: {', '.join(TASK_CLASSES)})")
    module, name = TASK_CLASSES[task].split(":")
    return getattr(importlib.import_module(module), name)


def make_env(task: str, max_steps: int = 1300, render_stride: int = 0, video_stride: int = 1, wrist: bool = False, **kwargs):
    """Build the benchmark env for ``task`` (a fresh SAPIEN scene, rebuilt on each reset)."""
    from envs.robomme_env import RoboMMEEnv

    inner = task_class(task)(**kwargs)
    return RoboMMEEnv(inner, max_steps=max_steps, render_stride=render_stride, video_stride=video_stride, wrist=wrist)


def gym_id(task: str) -> str:
    return f"robomme/{task}-v0"


for _task in ALL_TASKS:
    if gym_id(_task) not in gym.registry:
        gym.register(gym_id(_task), entry_point=make_env, kwargs={"task": _task}, disable_env_checker=True, order_enforce=False)

__all__ = ["ALL_TASKS", "SUITES", "EpisodeSpec", "episode_spec", "make_env", "task_class", "gym_id", "TASK_CLASSES"]

"""The 16 RoboMME tasks on ManiSkill 3. Importing this package registers ``robomme/<Task>-v0``.

>>> import gymnasium as gym, envs
>>> env = gym.make("robomme/PickXtimes-v0")
>>> obs, info = env.reset(options={"episode": envs.episode_spec("PickXtimes", 0)})
"""

from __future__ import annotations

import importlib

import gymnasium as gym

from envs.episodes import ALL_TASKS, SUITES, EpisodeSpec, check_task, episode_spec

from envs.cards import all_cards

TASK_CLASSES: dict[str, str] = {c.name: c.env_class for c in all_cards()}
"""Task -> ``"module:Class"`` of its env (read from the task cards)."""


def implemented_tasks() -> list[str]:
    """Tasks whose module exists in this checkout."""
    import importlib.util

    return [t for t, path in TASK_CLASSES.items() if importlib.util.find_spec(path.split(":")[0]) is not None]


def task_class(task: str):
    check_task(task)
    if task not in implemented_tasks():
        raise NotImplementedError(f"task {task!r} is not implemented yet (implemented: {', '.join(implemented_tasks())})")
    module, name = TASK_CLASSES[task].split(":")
    return getattr(importlib.import_module(module), name)


def make_env(task: str, max_steps: int | None = None, render_stride: int = 0, video_stride: int = 1, wrist: bool = False, **kwargs):
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

"""Real goals of real episodes without a simulator: the task's layout sampler and goal text only.

A task's ``sample_layout`` is a pure function of the episode seed and its ``goal_texts`` /
``goal_values`` read only the layout, so a task object built without a scene (``__new__``, no
SAPIEN) gives the exact template goal and rewording values of any episode in milliseconds. The
spec and rewording tests use it to check wording on every train episode, not on invented values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs import ALL_TASKS, episode_spec, task_class
from envs.core.rewording import fill, variant_for
from envs.ood import ood_tier, parse_difficulty


@dataclass(frozen=True)
class GoalCase:
    task: str
    episode: int
    template: str
    values: dict


def layout_only(task: str, episode: int, split: str = "train"):
    """The task object of ``episode`` with its layout sampled and no scene built."""
    cls = task_class(task)
    spec = episode_spec(task, episode, split)
    t = cls.__new__(cls)
    difficulty, tier = parse_difficulty(spec.difficulty)  # as RoboMMETask.reset does
    t.difficulty, t.ood = difficulty, (ood_tier(task, tier) if tier else None)
    t.layout = cls.sample_layout(t, np.random.default_rng(spec.env_seed), difficulty)
    return t


def goal_cases(episodes=range(20), split: str = "train", tasks=ALL_TASKS) -> list[GoalCase]:
    out = []
    for task in tasks:
        for ep in episodes:
            t = layout_only(task, ep, split)
            out.append(GoalCase(task, ep, t.goal_texts()[0], t.goal_values()))
    return out


def rewordings_of(case: GoalCase, pool: str) -> list[str]:
    """Every rewording of ``pool`` (``dev`` / ``held_out``) of the case's variant, filled in."""
    v = variant_for(case.task, case.values)
    return [fill(text, case.values) for text in getattr(v, pool)]

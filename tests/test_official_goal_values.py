"""The reader of goal values from template text agrees with every task's own ``goal_values()``.

Why this is the check: the benchmark's envs give their goal as text in the templates our tasks use,
and ``--goal-style reworded`` on them fills rewordings with the values read back from that text
(``envs/official/goal_values.py``). Our tasks know their values from their layouts; drawing layouts
(no simulation) for every task, difficulty and many seeds and reading each template wording back
must give those values, key for key.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import envs.tasks as task_modules
from envs.core.base_task import RoboMMETask
from envs.core.rewording import variant_for
from envs.core.sampling import SceneSamplingError
from envs.episodes import ALL_TASKS
from envs.official.goal_values import goal_values_from_text


def _task_classes() -> dict[str, type]:
    out = {}
    for m in pkgutil.iter_modules(task_modules.__path__):
        mod = importlib.import_module(f"{task_modules.__name__}.{m.name}")
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, RoboMMETask) and getattr(cls, "TASK", None) and cls.__module__ == mod.__name__:
                out[cls.TASK] = cls
    return out


CLASSES = _task_classes()


def _layouts(task: str, n: int = 12):
    """Task objects holding drawn layouts (never simulated: goal texts and values read the layout only)."""
    cls = CLASSES[task]
    for seed in range(n):
        for difficulty in ("easy", "medium", "hard"):
            t = cls.__new__(cls)
            t.ood, t.difficulty = None, difficulty
            try:
                t.layout = t.sample_layout(np.random.default_rng(seed), difficulty)
            except SceneSamplingError:
                continue
            yield t


def test_every_task_is_covered():
    assert sorted(CLASSES) == sorted(ALL_TASKS)


@pytest.mark.parametrize("task", ALL_TASKS)
def test_the_values_read_from_every_template_wording_are_the_tasks_own(task):
    checked = 0
    for t in _layouts(task):
        truth = t.goal_values()
        for text in t.goal_texts():
            read = goal_values_from_text(text)
            assert {k: read.get(k) for k in truth} == truth, text
            # and the rewording the values select is the one the task's own values select
            assert variant_for(task, read) == variant_for(task, truth), text
            checked += 1
    assert checked >= 25


def test_counts_ordinals_and_amounts_in_their_other_forms():
    v = goal_values_from_text("put two blue cubes and 1 red cube into the bin")
    assert v["amounts"] == "two blue cubes and one red cube" and v["colour"] == "blue" and v["colour2"] == "red"
    assert goal_values_from_text("repeat it twice")["n"] == "2"
    assert goal_values_from_text("do it for 3 times")["times"] == "three times"
    assert goal_values_from_text("stop it on its 4th visit")["nth"] == "fourth"
    assert "nth" not in goal_values_from_text("first press the button, then pick up the container hiding the red cube")
    assert goal_values_from_text("pick up the green cube and place it on the target")["repeats"] == "one"

"""The oracle ladder overrides the memory's answers with the env's truth, one part per rung.

Real env (VideoUnmask: the first live subgoal asks which container hides a cube), real memory
layer underneath. The memory package itself never sees the ladder (the privileged side stays in
``experiments/``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from envs import episode_spec, make_env
from experiments.loop.conditions import condition_from_name
from experiments.loop.memory_factory import build_memory
from experiments.audit.oracle_ladder import OracleLadder, ladder_rung
from memory.contract.frames import Frame

_POINT = re.compile(r"<\s*\d+\s*,\s*\d+\s*>")


@pytest.fixture(scope="module", params=["test", "ood"])
def scene(request):
    """The same rungs on an in-distribution episode and on an ood one (15 containers, cubes in new colours)."""
    env = make_env("VideoUnmask")
    obs, info = env.reset(options={"episode": episode_spec("VideoUnmask", 0, request.param)})
    task = env.unwrapped
    slot = task.history_slot()
    assert slot is not None, "VideoUnmask's first live subgoal should depend on the past"
    truth = task.grounded_subgoal()
    wrong = next(a for a in slot.alternatives if _POINT.sub("", a) == _POINT.sub("", truth) and a != truth
                 and task.ground_template(task.current_entry.template, *task.current_entry.ground) != a)
    frame = Frame(step=obs["clock"], rgb=task.render_front()["rgb"], joint_state=obs["joint_state"], action=None)
    yield {"env": env, "task": task, "goal": info["goal"], "truth": truth, "wrong": wrong, "frame": frame, "slot": slot}
    env.close()


def _ladder(scene, condition: str) -> OracleLadder:
    cond = condition_from_name(condition)
    ladder = OracleLadder(build_memory(cond), scene["task"], ladder_rung(cond.flags))
    ladder.reset(scene["goal"], [])  # no demonstration frames: the memory alone could not answer
    return ladder


def test_rungs_follow_the_condition_names():
    assert [ladder_rung(condition_from_name(c).flags) for c in
            ("memory", "memory-true-state", "memory-oracle-access", "memory-oracle-grounding")] == [0, 1, 2, 3]


def test_an_unknown_rung_is_named():
    with pytest.raises(ValueError, match="rung must be one of .* got 4"):
        OracleLadder(object(), object(), 4)


def test_oracle_access_answers_a_wrong_draw_with_the_truth_at_projected_centres(scene):
    task = scene["task"]
    rev = _ladder(scene, "memory-oracle-access").revise(scene["wrong"], scene["frame"])
    expected = task.ground_template(task.current_entry.template, *task.current_entry.ground)
    assert rev.text == expected and rev.rewritten


def test_oracle_grounding_answers_with_the_oracle_subgoal_itself(scene):
    ladder = _ladder(scene, "memory-oracle-grounding")
    rev = ladder.revise(scene["wrong"], scene["frame"])
    assert rev.text == scene["truth"]
    d = ladder.diagnostics()["ladder"]
    assert d["reads"] == 1 and d["slot_open"] == 1 and d["decisions"][0]["memory"] == scene["wrong"]


def test_true_state_reads_only_where_the_memory_itself_reads(scene):
    """Without demonstration frames the memory holds no binding; its access still decides to read
    ("the container that hides ..." is history-dependent) and rung 1 answers that read from the truth."""
    ladder = _ladder(scene, "memory-true-state")
    rev = ladder.revise(scene["wrong"], scene["frame"])
    d = ladder.diagnostics()["ladder"]
    # the memory abstained (no record) but its access fired, so the truth answers
    assert [t.reason.split(":")[0] for t in ladder.memory.traces] == ["no-record"]
    assert d["memory_fired"] == 1 and d["reads"] == 1
    task = scene["task"]
    assert rev.text == task.ground_template(task.current_entry.template, *task.current_entry.ground)
    # a proposal with nothing history-dependent is never touched at rung 1
    plain = "put it down"
    assert ladder.revise(plain, scene["frame"]).text == ladder.memory.revise(plain, scene["frame"]).text


def test_the_memory_package_never_imports_the_ladder_or_the_harness():
    root = Path(__file__).resolve().parents[1] / "memory"
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "experiments" for n in names), f"{path} imports {names}"

"""The subgoal-level env keeps gymnasium's contract (envs/spaces.py).

``SubgoalExecution`` over a real task passes ``gymnasium.utils.env_checker.check_env``: seeded
resets are deterministic, unseeded ones continue the env's generator, every observation lies in
the declared ``Dict`` space (an unrendered camera is a zero image with its ``*_rendered`` flag 0,
never ``None``), a ``Text`` action (random characters included: the robot holds still) steps
deterministically, and no two returned observations share a buffer. The memory stacks above it
inherit the same spaces. The fast tests check the conversion and the charset without a simulator.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from envs.spaces import (IMAGE_SHAPE, rendered, subgoal_action_space, subgoal_observation,
                         subgoal_observation_space)
from subgoals.frames import Frame

ROOT = Path(__file__).resolve().parents[1]


def _raw(front=None, wrist=None):
    return {"front_rgb": front, "wrist_rgb": wrist, "joint_state": np.linspace(-1, 1, 7).astype(np.float32),
            "gripper_state": np.zeros(2, np.float32), "step": 3, "clock": 40}


def test_an_unrendered_camera_is_a_zero_image_with_its_flag_down():
    space = subgoal_observation_space()
    img = np.full(IMAGE_SHAPE, 7, np.uint8)
    seen, blind = subgoal_observation(_raw(front=img)), subgoal_observation(_raw())
    assert seen in space and blind in space
    assert seen["front_rendered"] == 1 and rendered(seen) is not None and np.array_equal(rendered(seen), img)
    assert blind["front_rendered"] == 0 and rendered(blind) is None and not blind["front_rgb"].any()
    assert seen["wrist_rendered"] == 0 and rendered(seen, "wrist") is None
    assert rendered(_raw(front=img)) is img  # an internal observation: None already marks it
    assert not np.shares_memory(seen["front_rgb"], img), "a fresh array on every call"
    assert set(seen) == set(space.spaces)


def _subgoal_templates() -> list[str]:
    """Every one-line string constant of the tasks that holds a ``<>`` slot (the subgoal templates)."""
    out = []
    for path in sorted((ROOT / "envs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            v = getattr(node, "value", None)
            if isinstance(node, ast.Constant) and isinstance(v, str) and "<>" in v and "\n" not in v and "`" not in v:
                out.append(v)
    return out


def test_every_subgoal_template_grounded_is_an_action():
    space = subgoal_action_space()
    templates = _subgoal_templates()
    assert len(templates) > 20
    for t in templates:
        text = t.replace("<>", "<255, 255>")
        if "{" in text:  # a format string: its fields become words or numbers
            text = re.sub(r"\{[^}]*\}", "second", text)
        assert text in space, f"subgoal {text!r} is outside the action space"
    assert "" in space, "no proposal (hold still) is an action too"


def test_frames_compare_by_value():
    a = Frame(step=4, rgb=np.zeros((2, 2, 3), np.uint8), joint_state=np.ones(7, np.float32))
    b = Frame(step=4, rgb=np.zeros((2, 2, 3), np.uint8), joint_state=np.ones(7, np.float32))
    assert a == b and hash(a) == hash(b)
    assert a != Frame(step=4, rgb=None, joint_state=np.ones(7, np.float32))
    assert a != Frame(step=5, rgb=a.rgb, joint_state=a.joint_state)
    held = Frame(step=4, rgb=a.rgb, joint_state=a.joint_state, gripper=np.array([0.02, 0.02]))
    assert held != a and held == Frame(step=4, rgb=a.rgb, joint_state=a.joint_state, gripper=[0.02, 0.02])
    assert not held.gripper.flags.writeable and held.describe()["gripper"] == [2]


def test_video_frames_carry_the_fingers_only_when_every_frame_logs_them():
    from envs.robomme_env import DemoVideo
    from wrappers.memory_wrapper import demo_frames

    q, rgb = np.zeros(7, np.float32), np.zeros((2, 2, 3), np.uint8)
    video = DemoVideo(front=[rgb, rgb], joint_state=[q, q], clock=[0, 2], gripper=[np.array([0.04, 0.04])] * 2)
    frames = demo_frames({"video": video})
    assert [f.gripper.tolist() for f in frames] == [[0.04, 0.04]] * 2 and all(f.source == "video" for f in frames)
    video.gripper = video.gripper[:1]  # not logged for every frame: none at all
    assert all(f.gripper is None for f in demo_frames({"video": video}))


class _Stub(gym.Env):
    """A subgoal-level env without a simulator (for the wrappers' spaces)."""

    def __init__(self):
        self.action_space = subgoal_action_space()
        self.observation_space = subgoal_observation_space()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return subgoal_observation(_raw()), {"goal": "pick up the red cube"}

    def step(self, action):
        return subgoal_observation(_raw()), 0.0, False, False, {"frames": [Frame(step=41)]}


def test_memory_stacks_declare_the_subgoal_spaces():
    from wrappers.memory_wrapper import MemoryWrapper
    from wrappers.recent_frames import RecentFrames

    class _Memory:
        def reset(self, goal, demo):
            pass

        def observe(self, frame):
            assert type(frame) is Frame

        def revise(self, proposed, current):
            from types import SimpleNamespace

            assert current.rgb is None  # the stub renders nothing: the flag, not a black image
            return SimpleNamespace(text=proposed, rewritten=False, read=False, abstained=False)

    for top in (MemoryWrapper(_Stub()), MemoryWrapper(_Stub(), _Memory()), RecentFrames(_Stub(), _Memory(), 4)):
        assert top.action_space == subgoal_action_space()
        assert top.observation_space == subgoal_observation_space()
        obs, _ = top.reset(seed=0)
        assert obs in top.observation_space
        obs, *_ = top.step("pick up the red cube at <10, 20>")
        assert obs in top.observation_space


def _check(env) -> list[str]:
    """``check_env``'s warnings, less the one that says a wrapped env is checked (it is meant to be)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    return [str(w.message) for w in caught if "different from the unwrapped version" not in str(w.message)]


@pytest.fixture(scope="module")
def low():
    from envs import make_env

    env = make_env("StopCube")
    yield env
    env.close()


@pytest.mark.slow
def test_subgoal_execution_passes_the_env_checker(low):
    """StopCube under the scripted policy (~35 s: check_env resets the scene a dozen times)."""
    from policies.scripted import ScriptedPolicy
    from wrappers.subgoal_execution import SubgoalExecution

    env = SubgoalExecution(low, ScriptedPolicy(low), horizon=16, policy_seed=0)
    assert _check(env) == []
    obs, info = env.reset(seed=5)
    obs, _, _, _, info = env.step(info["subgoal"])
    assert obs in env.observation_space and obs["front_rendered"] == 1  # the query renders the view
    assert info["frames"] and all(type(f) is Frame for f in info["frames"])
    assert all(f.gripper is not None and f.gripper.shape == (2,) for f in info["frames"])  # the finger encoders


@pytest.mark.slow
def test_the_memory_stack_passes_the_env_checker(low):
    """The same env under a real memory layer (the memory is reset with every episode)."""
    from memory.layer import MemoryConfig, MemoryLayer
    from memory.tools.registry import default_tools
    from policies.scripted import ScriptedPolicy
    from wrappers.memory_wrapper import MemoryWrapper
    from wrappers.subgoal_execution import SubgoalExecution

    env = MemoryWrapper(SubgoalExecution(low, ScriptedPolicy(low), horizon=16, policy_seed=0),
                        MemoryLayer(MemoryConfig(), default_tools()))
    assert _check(env) == []

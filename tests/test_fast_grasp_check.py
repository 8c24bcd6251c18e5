"""The official backend's faster ``is_grasping`` gives ManiSkill's own answer at every step.

A real ManiSkill pick (PickCube-v1, the Panda, CPU physics) driven down onto the cube, closed and
lifted: at every step the wrapped check and the original agree for the cube (touched by neither
finger, one, then both) and for the table-side ground, and the episode reaches a real grasp, so
both branches of the short-circuit are exercised.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from envs.official.fast_grasp_check import install_fast_grasp_check


@pytest.fixture(scope="module")
def pick_env():
    import mani_skill.envs  # noqa: F401  (registers PickCube-v1)

    env = gym.make("PickCube-v1", obs_mode="state", control_mode="pd_ee_delta_pos")
    yield env
    env.close()


def _drive(env, steps: int = 90):
    """Yield after each step of a scripted pick: above the cube, down, close, lift."""
    u = env.unwrapped
    for t in range(steps):
        tcp = u.agent.tcp.pose.p[0].numpy()
        cube = u.cube.pose.p[0].numpy()
        if t < 25:
            target, grip = cube + np.array([0, 0, 0.08]), 1.0
        elif t < 45:
            target, grip = cube, 1.0
        elif t < 60:
            target, grip = tcp, -1.0
        else:
            target, grip = cube + np.array([0, 0, 0.15]), -1.0
        delta = np.clip((target - tcp) * 10.0, -1, 1)
        env.step(np.concatenate([delta, [grip]]).astype(np.float32))
        yield t


def test_the_fast_check_answers_as_maniskill_at_every_step_of_a_pick(pick_env):
    env = pick_env
    env.reset(seed=3)
    agent = env.unwrapped.agent
    original = agent.is_grasping
    assert install_fast_grasp_check(agent)
    assert install_fast_grasp_check(agent)  # twice: still one wrapper
    assert agent._fast_grasp_original == original
    answers = []
    for _ in _drive(env):
        for obj in (env.unwrapped.cube,):
            fast, slow = agent.is_grasping(obj), original(obj)
            assert fast.dtype == slow.dtype == torch.bool and fast.shape == slow.shape
            assert torch.equal(fast, slow)
            answers.append(bool(slow[0]))
    assert not answers[0] and any(answers), "the scripted pick must reach a real grasp"


def test_it_leaves_an_agent_without_fingers_alone():
    class NoFingers:
        scene = None

        def is_grasping(self, obj):
            return "original"

    a = NoFingers()
    assert not install_fast_grasp_check(a)
    assert a.is_grasping(None) == "original"

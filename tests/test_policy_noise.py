"""The scripted policy's execution noise on the real simulator: a failed grasp is recovered, a slip
loses the object, the draws come from the policy stream and every event is recorded."""

from __future__ import annotations

from functools import lru_cache

import pytest

from envs import make_env
from envs.episodes import episode_spec
from policies.noise import ScriptedNoise
from policies.scripted import ScriptedPolicy, grasp_point


@lru_cache(maxsize=2)
def _env(task: str):
    return make_env(task, video_stride=10**6)


def _play(task: str, episode: int, noise: ScriptedNoise, seed: int = 0):
    env = _env(task)
    obs, info = env.reset(options={"episode": episode_spec(task, episode, "train")})
    policy = ScriptedPolicy(env, noise=noise)
    policy.reset(seed)
    done = False
    while not done:
        for action in policy.infer({**obs, "subgoal": env.oracle_subgoal()}):
            obs, _, term, trunc, info = env.step(action)
            if term or trunc:
                done = True
                break
    return info["status"], env.steps, policy.noise_events


def test_a_failed_grasp_is_recovered_and_costs_time():
    clean_status, clean_steps, none = _play("PickXtimes", 0, ScriptedNoise())
    status, steps, events = _play("PickXtimes", 0, ScriptedNoise(p_fail_grasp=1.0))
    assert clean_status == status == "success" and none == []
    assert events and all(e["failed_grasp"] in ("high", "offset") for e in events)
    assert steps > clean_steps  # the failed attempt took time


def test_a_failed_grasp_on_a_container_closes_at_its_knob_and_recovers():
    env = _env("VideoUnmask")
    env.reset(options={"episode": episode_spec("VideoUnmask", 0, "train")})
    c = env.unwrapped.containers[0]
    assert grasp_point(env.unwrapped, c)[2] > env.unwrapped.pos(c)[2] + 0.05  # the knob, not the base
    status, _, events = _play("VideoUnmask", 0, ScriptedNoise(p_fail_grasp=1.0))
    assert status == "success" and events


def test_a_slip_loses_the_object():
    status, _, events = _play("PickXtimes", 0, ScriptedNoise(p_drop=1.0))
    assert status != "success"
    assert events and "drop_after_steps" in events[0]


def test_noise_draws_are_the_streams():
    a = _play("PickXtimes", 1, ScriptedNoise(p_fail_grasp=0.5), seed=1)
    b = _play("PickXtimes", 1, ScriptedNoise(p_fail_grasp=0.5), seed=1)
    assert a == b


def test_noise_bounds_are_named():
    with pytest.raises(ValueError, match="p_drop"):
        ScriptedNoise(p_drop=-0.1)
    with pytest.raises(ValueError, match="offset_xy"):
        ScriptedNoise(offset_xy=0.5)
    assert not ScriptedNoise().active and ScriptedNoise(p_drop=0.1).active


def _play_moving_the_cube_from_under_the_fingers(shift_m: float):
    """PickXtimes train 0 on oracle subgoals; as the first grasp reaches its cube, the cube is set
    ``shift_m`` aside, so the fingers close on nothing."""
    env = _env("PickXtimes")
    obs, info = env.reset(options={"episode": episode_spec("PickXtimes", 0, "train")})
    t = env.unwrapped
    policy = ScriptedPolicy(env)
    policy.reset(0)
    moved, done = False, False
    while not done:
        for action in policy.infer({**obs, "subgoal": env.oracle_subgoal()}):
            obs, _, term, trunc, info = env.step(action)
            if not moved and policy._retry is not None:
                cube = policy._retry
                p = t.pos(cube)
                if t.tcp()[2] - p[2] < 0.01:
                    t.set_xyz(cube, [p[0] + shift_m, p[1], p[2]])
                    moved = True
            if term or trunc:
                done = True
                break
    return moved, info["status"], policy.pick_retries


def test_a_grip_that_closed_on_nothing_is_tried_again():
    """The executor's own miss (no noise drawn): the fingers close on nothing while the pick's
    subgoal stands; the pick is started again on the cube where it now is, and the task completes."""
    moved, status, retries = _play_moving_the_cube_from_under_the_fingers(0.06)
    assert moved and retries and retries[0]["attempt"] == 2
    assert status == "success"

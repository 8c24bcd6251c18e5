"""The hierarchical loop: the disabled memory wrapper is a provable no-op, composers behave."""

import numpy as np
import pytest

from envs import episode_spec, make_env
from policies.composers import HistoryBlindComposer, OracleComposer
from policies.scripted import ScriptedPolicy
from wrappers.memory_wrapper import MemoryWrapper
from wrappers.subgoal_execution import SubgoalExecution


@pytest.fixture(scope="module")
def env():
    return make_env("PickXtimes")


def raw_rollout(env, spec):
    """The plain loop on the raw env: oracle subgoal every 16 steps, scripted chunk."""
    obs, info = env.reset(options={"episode": spec})
    pol = ScriptedPolicy(env)
    pol.reset(3)
    actions = []
    while True:
        for a in pol.infer({**obs, "subgoal": env.oracle_subgoal(), "goal": info["goal"]}):
            obs, _, term, trunc, info = env.step(a)
            actions.append(a)
            if term or trunc:
                return np.array(actions), info["status"]


def wrapped_rollout(env, spec, stack):
    pol = ScriptedPolicy(env)
    pol.reset(3)
    top = stack(SubgoalExecution(env, pol, horizon=16))
    composer = OracleComposer(env)
    obs, info = top.reset(options={"episode": spec})
    composer.reset(info["goal"], 3, [])
    actions = []
    while True:
        obs, _, term, trunc, info = top.step(composer.propose(obs, info))
        actions.extend(f.action for f in info["frames"])
        if term or trunc:
            return np.array(actions), info["status"]


def test_disabled_memory_layer_is_a_no_op(env):
    spec = episode_spec("PickXtimes", 1)
    raw_actions, raw_status = raw_rollout(env, spec)
    wrapped_actions, wrapped_status = wrapped_rollout(env, spec, lambda e: MemoryWrapper(e, memory=None))
    assert raw_status == wrapped_status == "success"
    assert raw_actions.shape == wrapped_actions.shape
    np.testing.assert_array_equal(raw_actions, wrapped_actions)


def test_subgoal_level_action_must_be_text(env):
    top = SubgoalExecution(env, ScriptedPolicy(env))
    top.reset(options={"episode": episode_spec("PickXtimes", 0)})
    with pytest.raises(TypeError, match="int"):
        top.step(3)


def test_history_blind_is_seeded_and_holds_its_draw(env):
    def draws(seed):
        pol = ScriptedPolicy(env)
        pol.reset(seed)
        top = SubgoalExecution(env, pol)
        comp = HistoryBlindComposer(env, p=1.0)
        obs, info = top.reset(options={"episode": episode_spec("PickXtimes", 3)})
        comp.reset(info["goal"], seed, [])
        proposals = []
        for _ in range(200):
            sg = comp.propose(obs, info)
            proposals.append(sg)
            obs, _, term, trunc, info = top.step(sg)
            if term or trunc:
                break
        return proposals, comp.draws, info["status"]

    a, b = draws(11), draws(11)
    assert a == b
    assert len(a[1]) >= 1 and all(d["n_options"] == 2 for d in a[1])


def test_history_blind_probability_is_validated(env):
    with pytest.raises(ValueError, match="1.5"):
        HistoryBlindComposer(env, p=1.5)

"""The planner policy server as a real process: the benchmark's own planner answers each subgoal
with a joint-space chunk, so memory -> subgoal -> server -> chunk -> the official joint_angle
controller runs end to end without weights. The protocol checks run everywhere; the episodes need
the official ``robomme`` package and are skipped without it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_server_fixture import make_obs, server_process  # noqa: E402

from envs.official.install import robomme_available  # noqa: E402
from policies.base import PolicyServerError  # noqa: E402
from policies.openpi_client import OpenPIPolicy  # noqa: E402
from policies.planner_server import episode_of, joints_of, subgoal_of  # noqa: E402

AVAILABLE, WHY = robomme_available()
needs_robomme = pytest.mark.skipif(not AVAILABLE, reason=f"the official robomme package is not importable ({WHY})")


def test_a_reset_without_the_episode_is_refused_naming_what_it_needs():
    with server_process(module="policies.planner_server") as (_, port):
        client = OpenPIPolicy(port=port, server_kind="benchmark")
        client.reset(0)
        with pytest.raises(PolicyServerError, match="needs the episode in the reset message"):
            client.infer(make_obs())
        client.close()


def test_requests_of_both_formats_give_the_subgoal_and_the_joints():
    openpi = {"observation/state": np.arange(8, dtype=np.float32), "grounded_subgoal": "press the button at <1, 2>"}
    challenge = {"joint_state_list": [np.zeros(7), np.ones(7)], "simple_subgoal": " press the button ", "task_goal": ["x"]}
    assert subgoal_of(openpi) == "press the button at <1, 2>" and subgoal_of(challenge) == "press the button"
    assert joints_of(openpi).tolist() == list(range(7)) and joints_of(challenge).tolist() == [1.0] * 7
    assert subgoal_of({"task_goal": ["x"]}) == "" and joints_of({}) is None
    with pytest.raises(ValueError, match="lacks env_seed"):
        episode_of({"reset": True, "episode": {"task": "PickXtimes", "split": "train", "episode_idx": 0}})


@needs_robomme
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_learned_policy_path_runs_on_the_official_envs_against_the_planner_server(tmp_path):
    """``--backend robomme --policy openpi``: the official env in joint_angle space, every chunk from
    the planner server (a real process with its own copy of the episode); PickXtimes train 0
    oracle and memory succeed as the multi_choice executor does (~4 min)."""
    from experiments import run
    from experiments.loop.results import read_rows

    with server_process("--chunk", "16", module="policies.planner_server", lifetime_s=1400,
                        startup_timeout_s=60) as (_, port):
        assert run.main(["--backend", "robomme", "--policy", "openpi", "--openpi-port", str(port),
                         "--openpi-server", "benchmark", "--tasks", "PickXtimes", "--split", "train", "--episodes", "0",
                         "--conditions", "oracle", "memory", "--wandb", "disabled", "--out", str(tmp_path)]) == 0
    rows = {r["condition"]: r for r in read_rows(tmp_path)}
    assert rows["oracle"]["status"] == "success" and rows["memory"]["status"] == "success", rows
    assert rows["oracle"]["steps"] < 600

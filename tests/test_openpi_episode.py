"""Harness episodes with ``--policy openpi``: what a benchmark server receives, end to end.

A real env, the harness's own ``run_unit``, a real websocket server (in-process, so the test can
read every request it decoded). The ``hold`` policy never moves the arm, so an episode ends by
timeout after ``max_steps``; what matters here is the traffic: one reset per episode, the
benchmark's request keys, the 256x256 hand-camera frame.
"""

from __future__ import annotations

import numpy as np
import pytest

from experiments.loop.config import ExperimentConfig
from experiments.loop.records import WorkUnit
from policies import policy_server

pytestmark = pytest.mark.timeout(300)

BENCHMARK_KEYS = {"observation/image", "observation/wrist_image", "observation/state", "prompt",
                  "grounded_subgoal", "simple_subgoal"}


def test_benchmark_server_gets_one_reset_per_episode_and_the_benchmark_request(monkeypatch, tmp_path):
    from experiments.loop.unit import run_unit

    seen: list[dict] = []

    def recording_hold(obs, horizon, action_dim, rng):
        seen.append(obs)
        return policy_server.hold_policy(obs, horizon, action_dim, rng)

    monkeypatch.setitem(policy_server.POLICIES, "hold", recording_hold)
    with policy_server.PolicyServer("hold", port=0, kind="benchmark") as server:
        cfg = ExperimentConfig.from_flat(policy="openpi", openpi_host="127.0.0.1", openpi_port=server.port,
                               tasks=("PickXtimes",), conditions=("oracle",), max_steps=32,
                               out=str(tmp_path), wandb="disabled")
        results = [run_unit(WorkUnit("PickXtimes", "test", episode, "oracle", 7), cfg) for episode in (0, 1)]
    assert [r.status for r in results] == ["timeout", "timeout"], [r.error for r in results]
    assert server.resets == 2  # one per episode, none for the queries in between
    assert len(seen) == 4  # 32 steps / 16 executed per chunk, two episodes
    for request in seen:
        assert set(request) == BENCHMARK_KEYS
        assert request["simple_subgoal"] == request["grounded_subgoal"] and "<" in request["grounded_subgoal"]
        wrist = request["observation/wrist_image"]
        assert wrist.shape == (256, 256, 3) and wrist.dtype == np.uint8
        assert wrist.mean() > 40 and wrist.std() > 15  # the hand camera's view, not a black frame
        assert request["observation/image"].shape == (256, 256, 3)
        assert request["observation/state"].shape == (8,)


def test_stick_robot_gets_a_7d_client():
    # the stick robot's actions are 7 joints: the client drops the reply's gripper column
    import envs
    from experiments.loop.unit import build_policy

    low = envs.make_env("RouteStick")
    try:
        policy, needs_images = build_policy(ExperimentConfig.from_flat(policy="openpi", openpi_server="benchmark"), low)
        assert needs_images and policy.policy.action_dim == 7 and policy.policy.server_kind == "benchmark"
    finally:
        low.close()

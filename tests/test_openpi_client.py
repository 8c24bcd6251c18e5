"""OpenPIPolicy against a real websocket policy server (policies.policy_server).

The main cases run the server as a separate process on a free 127.0.0.1 port, so
timeouts, crashes and unreachable ports are the real thing, not mocks. Every server
is bounded (--max-lifetime-s) and stopped by its fixture.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from policy_server_fixture import free_port, make_obs, server_process

from policies.base import ActionHorizon, PolicyConnectionError, PolicyError, PolicyServerError, PolicyTimeout
from policies.openpi_client import OpenPIPolicy, obs_to_openpi

pytestmark = pytest.mark.timeout(30)


# ---------------------------------------------------------------------------- mapping
def test_obs_mapping_matches_robomme_keys():
    obs = make_obs(width=0.031)
    obs["wrist_rgb"] = None
    req = obs_to_openpi(obs)
    assert set(req) == {"observation/image", "observation/wrist_image", "observation/state", "prompt",
                        "grounded_subgoal", "simple_subgoal"}
    assert req["observation/image"].shape == (256, 256, 3) and req["observation/image"].dtype == np.uint8
    assert not req["observation/wrist_image"].any()  # no wrist camera -> black frame, same shape
    assert req["observation/state"].shape == (8,) and req["observation/state"].dtype == np.float32
    np.testing.assert_allclose(req["observation/state"][:7], obs["joint_state"])
    assert req["observation/state"][7] == pytest.approx(0.031)
    assert req["prompt"] == "pick up the red cube twice"
    # the benchmark's eval client puts its subgoal in both keys
    assert req["grounded_subgoal"] == "pick up the red cube at <142, 97> for the first time"
    assert req["simple_subgoal"] == req["grounded_subgoal"]


@pytest.mark.parametrize("subgoal", ["", None, "  "])
def test_no_subgoal_omits_both_subgoal_keys(subgoal):
    obs = make_obs(subgoal=subgoal)
    req = obs_to_openpi(obs)
    assert set(req) == {"observation/image", "observation/wrist_image", "observation/state", "prompt"}


def test_obs_mapping_names_missing_keys():
    obs = make_obs()
    del obs["joint_state"]
    with pytest.raises(ValueError, match="joint_state"):
        obs_to_openpi(obs)


# ---------------------------------------------------------------------------- subprocess server
def test_infer_shape_determinism_and_timings():
    with server_process("--policy", "sine") as (_, port):
        policy = OpenPIPolicy("127.0.0.1", port, connect_timeout_s=5, recv_timeout_s=5)
        other = OpenPIPolicy("127.0.0.1", port, connect_timeout_s=5, recv_timeout_s=5)
        try:
            policy.reset(seed=7)
            obs = make_obs(step=16)
            a = policy.infer(obs)
            b = policy.infer(obs)
            c = other.infer(obs)  # a second connection gets the same answer
            assert a.shape == (20, 8) and a.dtype == np.float32
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)
            assert np.all(a[:, 7] == 1.0)
            # different state -> different chunk (the server really reads the request)
            assert not np.allclose(policy.infer(make_obs(joints=np.zeros(7), step=32)), a)

            assert policy.server_metadata["action_horizon"] == 20
            assert len(policy.timings) == 3
            t = policy.timings[0]
            assert t["seed"] == 7 and t["query"] == 1 and t["step"] == 16
            assert t["roundtrip_ms"] > 0 and t["infer_time_ms"] >= 0
            assert "infer_ms" in t["server_timing"] and "infer_ms" in t["policy_timing"]
            assert "prev_total_ms" in policy.timings[1]["server_timing"]

            executed = ActionHorizon(policy, horizon=16).infer(obs)
            np.testing.assert_array_equal(executed, a[:16])
            policy.reset(seed=8)
            assert policy.timings == []
        finally:
            policy.close()
            other.close()


def test_receive_timeout_closes_connection_and_drops_stale_reply():
    # Only the first query is slow: if the client kept the connection, the late reply
    # to query 1 would be read as the answer to query 2.
    with server_process("--policy", "hold", "--delay-s", "1.5", "--delay-queries", "1") as (_, port):
        policy = OpenPIPolicy("127.0.0.1", port, connect_timeout_s=5, recv_timeout_s=0.4)
        try:
            old = np.full(7, 0.1, dtype=np.float32)
            new = np.full(7, -0.2, dtype=np.float32)
            t0 = time.monotonic()
            with pytest.raises(PolicyTimeout, match=rf"127\.0\.0\.1:{port}.*0\.4 s") as err:
                policy.infer(make_obs(joints=old, step=0))
            assert time.monotonic() - t0 < 1.4  # bounded by the client, not by the server
            assert isinstance(err.value, PolicyError)
            assert not policy.connected

            chunk = policy.infer(make_obs(joints=new, step=16))  # reconnects
            np.testing.assert_allclose(chunk[:, :7], np.tile(new, (20, 1)))
            assert policy.timings[-1]["server_timing"]["query_index"] == 2
        finally:
            policy.close()


def test_server_crash_mid_episode_is_server_error():
    with server_process("--policy", "hold", "--crash-after", "2") as (proc, port):
        policy = OpenPIPolicy("127.0.0.1", port, connect_timeout_s=2, recv_timeout_s=5,
                              connect_attempts=1, retry_wait_s=0.05)
        try:
            policy.reset(seed=0)
            policy.infer(make_obs(step=0))
            policy.infer(make_obs(step=16))
            with pytest.raises(PolicyServerError, match=rf"127\.0\.0\.1:{port}.*query 3"):
                policy.infer(make_obs(step=32))
            assert proc.wait(timeout=5) == 3
            assert not policy.connected
            # the server is gone now: the next query cannot even connect
            with pytest.raises(PolicyConnectionError, match=str(port)):
                policy.infer(make_obs(step=48))
        finally:
            policy.close()


def test_unreachable_port_is_connection_error_naming_port():
    port = free_port()
    policy = OpenPIPolicy("127.0.0.1", port, connect_timeout_s=1, connect_attempts=2, retry_wait_s=0.05)
    t0 = time.monotonic()
    with pytest.raises(PolicyConnectionError, match=rf"127\.0\.0\.1:{port}") as err:
        policy.infer(make_obs())
    assert "2 attempt" in str(err.value)
    assert time.monotonic() - t0 < 5


# ---------------------------------------------------------------------------- in-process server
def test_bad_chunk_shape_names_the_shape():
    from policies.policy_server import PolicyServer

    with PolicyServer("hold", port=0, action_dim=7) as server:  # 7-D replies to an 8-D client
        policy = OpenPIPolicy("127.0.0.1", server.port, connect_timeout_s=2, recv_timeout_s=2)
        try:
            with pytest.raises(PolicyServerError, match=r"\(20, 7\)"):
                policy.infer(make_obs())
        finally:
            policy.close()


def test_stick_client_drops_gripper_column():
    from policies.policy_server import PolicyServer

    with PolicyServer("hold", port=0, action_dim=8) as server:
        policy = OpenPIPolicy("127.0.0.1", server.port, action_dim=7, connect_timeout_s=2, recv_timeout_s=2)
        try:
            obs = make_obs(width=0.0)
            obs["wrist_rgb"] = None
            chunk = policy.infer(obs)
            assert chunk.shape == (20, 7)
            np.testing.assert_allclose(chunk[0], obs["joint_state"])
        finally:
            policy.close()


def test_server_exception_text_becomes_server_error(monkeypatch):
    from policies import policy_server

    def broken(obs, horizon, action_dim, rng):
        raise RuntimeError("model exploded")

    monkeypatch.setitem(policy_server.POLICIES, "hold", broken)
    with policy_server.PolicyServer("hold", port=0) as server:
        policy = OpenPIPolicy("127.0.0.1", server.port, connect_timeout_s=2, recv_timeout_s=2)
        try:
            with pytest.raises(PolicyServerError, match="model exploded"):
                policy.infer(make_obs())
            assert not policy.connected
        finally:
            policy.close()


def test_healthz():
    import urllib.request

    from policies.policy_server import PolicyServer

    with PolicyServer("hold", port=0) as server:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/healthz", timeout=2) as resp:
            assert resp.status == 200 and resp.read().strip() == b"OK"


def test_action_horizon_validates_and_delegates():
    class Fixed(ActionHorizon.__mro__[1]):  # a minimal Policy
        def __init__(self):
            self.seeds = []

        def reset(self, seed):
            self.seeds.append(seed)

        def infer(self, obs):
            return np.arange(40, dtype=np.float32).reshape(5, 8)

    inner = Fixed()
    wrapped = ActionHorizon(ActionHorizon(inner, horizon=4), horizon=2)
    wrapped.reset(3)
    assert inner.seeds == [3]
    assert wrapped.infer({}).shape == (2, 8)
    assert ActionHorizon(inner, horizon=16).infer({}).shape == (5, 8)
    assert wrapped.seeds == [3]  # attribute lookups fall through to the inner policy
    with pytest.raises(ValueError, match="horizon"):
        ActionHorizon(inner, horizon=0)

"""The episode-start reset message against real server processes of both kinds.

A benchmark server (``--kind benchmark``, RoboMME's MME-VLA protocol) re-seeds its sampling on
``{"reset": True}``; a plain openpi server (``--kind openpi``) takes any message for an observation,
so a reset sent to it fails. The ``sample`` policy draws fresh noise on every query, like π0.5's
flow matching: the same observation gives different chunks unless the server is re-seeded.
"""

from __future__ import annotations

import numpy as np
import pytest
from openpi_client import msgpack_numpy
from openpi_client.websocket_client_policy import WebsocketClientPolicy
from policy_server_fixture import make_obs, server_process

from policies.base import PolicyServerError
from policies.openpi_client import OpenPIPolicy
from policies.serving_protocol import RESET_MESSAGE, check_server_kind, sends_reset

pytestmark = pytest.mark.timeout(30)


def _client(port: int, kind: str) -> OpenPIPolicy:
    return OpenPIPolicy("127.0.0.1", port, connect_timeout_s=5, recv_timeout_s=5, server_kind=kind)


def _two_episodes(policy: OpenPIPolicy, obs: dict) -> list[list[np.ndarray]]:
    """Episode seeds 0 and 1, two queries of the same observation in each."""
    chunks = []
    for seed in (0, 1):
        policy.reset(seed)
        chunks.append([policy.infer(obs), policy.infer(obs)])
    return chunks


def test_benchmark_server_same_observation_same_chunk_in_every_episode():
    obs = make_obs(step=16)
    with server_process("--policy", "sample", "--kind", "benchmark", "--seed", "42") as (_, port):
        policy = _client(port, "auto")  # told by the metadata
        fresh = _client(port, "auto")
        try:
            (a1, a2), (b1, b2) = _two_episodes(policy, obs)
            assert policy.server_metadata["accepts_reset"] is True and policy.sends_reset
            assert policy.resets_sent == 2 and policy.reset_timing["seed"] == 1
            assert policy.reset_timing["reset_time_ms"] >= 0
            assert not np.allclose(a1, a2)  # the server really samples: a second query differs
            np.testing.assert_array_equal(a1, b1)  # ... and a reset starts the draws over
            np.testing.assert_array_equal(a2, b2)
            # a new connection (the benchmark makes one per episode) is re-seeded the same way
            fresh.reset(5)
            np.testing.assert_array_equal(fresh.infer(obs), a1)
        finally:
            policy.close()
            fresh.close()


def test_without_the_reset_the_same_observation_gives_another_chunk():
    # what the client did before it sent the reset: the second episode continues the draws
    obs = make_obs(step=16)
    with server_process("--policy", "sample", "--kind", "benchmark", "--seed", "42") as (_, port):
        policy = _client(port, "openpi")  # the flag wins over the metadata
        try:
            (a1, _), (b1, _) = _two_episodes(policy, obs)
            assert policy.resets_sent == 0 and not policy.sends_reset
            assert not np.allclose(a1, b1)
        finally:
            policy.close()


def test_benchmark_server_without_metadata_needs_the_flag():
    # the benchmark's own server sends {} as metadata: only the flag can tell the client
    obs = make_obs(step=16)
    with server_process("--policy", "sample", "--kind", "benchmark", "--bare-metadata") as (_, port):
        auto, flagged = _client(port, "auto"), _client(port, "benchmark")
        try:
            auto.reset(0)
            auto.infer(obs)
            assert auto.server_metadata == {} and auto.resets_sent == 0
            (a1, _), (b1, _) = _two_episodes(flagged, obs)
            assert flagged.resets_sent == 2
            np.testing.assert_array_equal(a1, b1)
        finally:
            auto.close()
            flagged.close()


def test_plain_openpi_server_works_and_never_receives_the_reset():
    obs = make_obs(step=16)
    with server_process("--policy", "sample", "--kind", "openpi") as (_, port):
        policy = _client(port, "auto")
        try:
            chunks = _two_episodes(policy, obs)
            assert all(c.shape == (20, 8) for episode in chunks for c in episode)
            assert "accepts_reset" not in policy.server_metadata and policy.resets_sent == 0
            # every message the server got was an observation: 4 queries, no reset among them
            assert policy.timings[-1]["server_timing"]["query_index"] == 4
        finally:
            policy.close()


def test_reset_sent_to_a_plain_openpi_server_fails_naming_the_kind():
    # why a client must know the kind: openpi takes the reset for an observation and fails
    with server_process("--policy", "hold", "--kind", "openpi") as (_, port):
        policy = _client(port, "benchmark")
        try:
            policy.reset(3)
            with pytest.raises(PolicyServerError, match=r"failed on the reset message.*'benchmark'(.|\n)*observation/state"):
                policy.infer(make_obs())
            assert not policy.connected
        finally:
            policy.close()


@pytest.mark.parametrize("kind", ["openpi", "benchmark"])
def test_openpi_client_package_talks_to_both_kinds(kind):
    """openpi-client's own WebsocketClientPolicy, unchanged; on a benchmark server, the reset is
    sent the way the benchmark's MMEVLAWebsocketClientPolicy.reset() does: pack, send, read one reply."""
    obs = make_obs(step=16)
    with server_process("--policy", "sample", "--kind", kind, "--seed", "7") as (_, port):
        client = WebsocketClientPolicy("127.0.0.1", port)
        try:
            request = {"observation/image": obs["front_rgb"], "observation/wrist_image": obs["wrist_rgb"],
                       "observation/state": np.zeros(8, np.float32), "prompt": "pick up the red cube twice"}
            first = client.infer(request)["actions"]
            assert first.shape == (20, 8)
            if kind == "benchmark":
                client._ws.send(client._packer.pack(RESET_MESSAGE))
                reply = msgpack_numpy.unpackb(client._ws.recv())
                assert reply["reset_finished"] is True
                np.testing.assert_array_equal(client.infer(request)["actions"], first)
            else:
                assert not np.allclose(client.infer(request)["actions"], first)
        finally:
            client._ws.close()


def test_server_kind_rules():
    assert sends_reset("benchmark", {}) and sends_reset("benchmark", None)
    assert not sends_reset("openpi", {"accepts_reset": True})
    assert sends_reset("auto", {"accepts_reset": True})
    assert not sends_reset("auto", {"accepts_reset": "yes"}) and not sends_reset("auto", None)
    with pytest.raises(ValueError, match="'mme'"):
        check_server_kind("mme")
    with pytest.raises(ValueError, match="'mme'"):
        OpenPIPolicy(server_kind="mme")

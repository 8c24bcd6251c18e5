"""A small, real websocket policy server that speaks openpi's wire protocol, as either kind.

Protocol (openpi-client 0.1.2): the client opens a websocket; the server first sends
one binary msgpack-numpy message with its metadata; then, for every binary message
(an observation dict) it receives, it sends back one binary message with at least
``actions`` (T, D). Like openpi's server, every reply also carries ``server_timing``
and ``policy_timing``; RoboMME's server adds ``infer_time_ms``, so this one does too.
If the policy raises, the traceback is sent as a *text* message and the connection is
closed with code 1011 (internal error), which is what openpi does as well.

Two kinds (``--kind``; ``policies/serving_protocol.py``):

* ``openpi`` (default): plain openpi. Every message is an observation, so a
  ``{"reset": True}`` message fails like it does on openpi's own server (traceback, 1011).
* ``benchmark``: RoboMME's MME-VLA server. ``{"reset": True}`` re-seeds the sampling
  generator to ``--seed`` and is answered ``{"reset_finished": True, "reset_time_ms": ...}``;
  the metadata says ``accepts_reset: True`` unless ``--bare-metadata`` (then it sends ``{}``,
  as the benchmark's own server does without ``policy_metadata``).

Both request formats are answered: openpi's (``observation/state`` ...) and the RoboMME challenge
interface's raw lists (``joint_state_list`` ...; ``policies/challenge_client.py``).

Served policies need no model:

* ``hold``: every action holds the current 7 joints and the current gripper
  (open when the first finger width in ``observation/state`` is >= 0.02).
* ``sine``: the current joints plus a small fixed sine pattern over the chunk,
  gripper open.
* ``sample``: ``sine`` plus Gaussian noise from the server's generator, like π0.5's
  flow-matching noise: the same observation gives a different chunk on every query,
  and the same sequence again after a reset on a benchmark server. The generator
  belongs to the server (shared by its connections), as the model's does.

Failure injection for tests: ``--delay-s`` sleeps before replying (optionally only on
the queries listed in ``--delay-queries``, counted from 1 over the life of the
process), and ``--crash-after N`` kills the process (``os._exit``) when query N+1
arrives, like a server that dies mid-episode. ``--max-lifetime-s`` makes the process
exit by itself, so a forgotten server never outlives its test for long.

Usage::

    python -m policies.policy_server --port 8000 --policy hold
    python -m policies.policy_server --port 0 --policy sine   # picks a free port
    python -m policies.policy_server --port 0 --policy sample --kind benchmark --seed 42

The first stdout line is ``policy_server listening on ws://HOST:PORT``. ``GET /healthz``
answers ``OK``.
"""

from __future__ import annotations

import argparse
import http
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from openpi_client import msgpack_numpy
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from policies.serving_protocol import ACCEPTS_RESET_KEY, is_reset_message, reset_reply

log = logging.getLogger("policies.policy_server")

STATE_KEY = "observation/state"


# --------------------------------------------------------------------------- policies
def _state_of(obs: dict) -> np.ndarray:
    """7 joints + first finger width: ``observation/state`` (openpi), or the last entries of the
    challenge interface's ``joint_state_list`` / ``gripper_state_list``."""
    if STATE_KEY not in obs and obs.get("joint_state_list"):
        grip = obs.get("gripper_state_list") or [np.full(2, 0.04, np.float32)]
        return np.concatenate([np.asarray(obs["joint_state_list"][-1], np.float32).reshape(-1)[:7],
                               np.asarray(grip[-1], np.float32).reshape(-1)[:1]])
    if STATE_KEY not in obs:
        raise KeyError(f"observation has no {STATE_KEY!r}; keys: {sorted(obs)}")
    state = np.asarray(obs[STATE_KEY], dtype=np.float32).reshape(-1)
    if state.shape[0] < 7:
        raise ValueError(f"{STATE_KEY} must have at least 7 entries, got shape {state.shape}")
    return state


def hold_policy(obs: dict, horizon: int, action_dim: int, rng: np.random.Generator) -> np.ndarray:
    state = _state_of(obs)
    chunk = np.zeros((horizon, action_dim), dtype=np.float32)
    chunk[:, :7] = state[:7]
    if action_dim > 7:
        width = float(state[7]) if state.shape[0] > 7 else 0.04
        chunk[:, 7] = 1.0 if width >= 0.02 else -1.0
    return chunk


def sine_policy(obs: dict, horizon: int, action_dim: int, rng: np.random.Generator) -> np.ndarray:
    state = _state_of(obs)
    k = np.arange(1, horizon + 1, dtype=np.float32)[:, None]
    j = np.arange(7, dtype=np.float32)[None, :]
    chunk = np.zeros((horizon, action_dim), dtype=np.float32)
    chunk[:, :7] = state[:7][None, :] + 0.05 * np.sin(0.3 * k + 0.7 * j)
    if action_dim > 7:
        chunk[:, 7] = 1.0
    return chunk


def sample_policy(obs: dict, horizon: int, action_dim: int, rng: np.random.Generator) -> np.ndarray:
    chunk = sine_policy(obs, horizon, action_dim, rng)
    chunk[:, :7] += 0.02 * rng.standard_normal((horizon, 7)).astype(np.float32)
    return chunk


PolicyFn = Callable[[dict, int, int, np.random.Generator], np.ndarray]
"""``(observation, horizon, action_dim, the server's generator) -> (horizon, action_dim) chunk``."""

POLICIES: dict[str, PolicyFn] = {"hold": hold_policy, "sine": sine_policy, "sample": sample_policy}
KINDS = ("openpi", "benchmark")  # what a server is; "auto" is only a client's way of finding out


# --------------------------------------------------------------------------- server
def _fail(ws: ServerConnection, what: str) -> None:
    """Log the current exception, send its traceback as a text message and close with 1011 (openpi's way)."""
    text = traceback.format_exc()
    log.error("%s:\n%s", what, text)
    try:
        ws.send(text)
        ws.close(code=1011, reason="internal error")
    except ConnectionClosed:
        pass


def serve_until_stopped(server, name: str, max_lifetime_s: float | None = None) -> int:
    """Print ``<name> listening on <url>`` (what the tests and users wait for) and serve until
    interrupted, or until ``max_lifetime_s`` have passed (the process then exits by itself)."""
    if max_lifetime_s is not None:
        timer = threading.Timer(max_lifetime_s, lambda: os._exit(0))
        timer.daemon = True
        timer.start()
    print(f"{name} listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.shutdown()
    return 0


class PolicyServer:
    """Serves one policy function over websocket; one thread per connection.

    ``kind`` is ``openpi`` or ``benchmark`` (module docstring); ``resets`` counts the reset
    messages a benchmark server answered, ``seed`` is what each of them re-seeds to.
    """

    def __init__(
        self,
        policy: str = "hold",
        host: str = "127.0.0.1",
        port: int = 0,
        horizon: int = 20,
        action_dim: int = 8,
        delay_s: float = 0.0,
        delay_queries: Sequence[int] | None = None,
        crash_after: int | None = None,
        metadata: dict | None = None,
        kind: str = "openpi",
        seed: int = 0,
        bare_metadata: bool = False,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; choose one of {sorted(POLICIES)}")
        if action_dim not in (7, 8):
            raise ValueError(f"action_dim must be 7 or 8, got {action_dim}")
        if kind not in KINDS:
            raise ValueError(f"unknown server kind {kind!r}; choose one of {', '.join(KINDS)}")
        self.kind = kind
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)
        self.resets = 0
        self.policy_name = policy
        self._policy = POLICIES[policy]
        self.host = host
        self.horizon = int(horizon)
        self.action_dim = int(action_dim)
        self.delay_s = float(delay_s)
        self.delay_queries = set(delay_queries) if delay_queries else None
        self.crash_after = crash_after
        self.metadata = {} if bare_metadata else {
            "policy": policy,
            "action_horizon": self.horizon,
            "action_dim": self.action_dim,
            **({ACCEPTS_RESET_KEY: True} if kind == "benchmark" else {}),
            **(metadata or {}),
        }
        self._queries = 0
        self._lock = threading.Lock()
        self._server = serve(
            self._handle,
            host,
            port,
            compression=None,
            max_size=None,
            process_request=self._health_check,
        )
        self.port = self._server.socket.getsockname()[1]

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    # -- http
    @staticmethod
    def _health_check(connection: ServerConnection, request: Any) -> Any:
        if request.path == "/healthz":
            return connection.respond(http.HTTPStatus.OK, "OK\n")
        return None

    # -- websocket
    def _next_query_index(self) -> int:
        with self._lock:
            self._queries += 1
            return self._queries

    def _reset(self, message: dict | None = None) -> dict:
        """The benchmark server's reset: the sampling generator starts over from ``seed``
        (``message``, the decoded reset message, is for subclasses that read more of it)."""
        t0 = time.monotonic()
        with self._lock:
            self._rng = np.random.default_rng(self.seed)
            self.resets += 1
        return reset_reply((time.monotonic() - t0) * 1000.0)

    def _infer(self, obs: dict) -> np.ndarray:
        with self._lock:  # one generator for all connections, drawn in query order
            return self._policy(obs, self.horizon, self.action_dim, self._rng)

    def _reply_extra(self) -> dict:
        """Keys a subclass adds to every reply (after ``_infer`` of the same connection)."""
        return {}

    def _handle(self, ws: ServerConnection) -> None:
        ws.send(msgpack_numpy.packb(self.metadata))
        packer = msgpack_numpy.Packer()
        prev_total_ms: float | None = None
        while True:
            t_start = time.monotonic()
            try:
                message = ws.recv()
            except ConnectionClosed:
                return
            if self.kind == "benchmark" and not isinstance(message, str):
                try:
                    decoded = msgpack_numpy.unpackb(message)
                except Exception:
                    decoded = None  # undecodable: fails below like any bad observation
                if is_reset_message(decoded):
                    try:
                        reply = self._reset(decoded)
                    except Exception:
                        _fail(ws, "reset failed")
                        return
                    try:
                        ws.send(packer.pack(reply))
                    except ConnectionClosed:
                        return
                    continue
            index = self._next_query_index()
            if self.crash_after is not None and index > self.crash_after:
                log.error("simulated crash on query %d (--crash-after %d)", index, self.crash_after)
                sys.stdout.flush()
                os._exit(3)
            if self.delay_s > 0 and (self.delay_queries is None or index in self.delay_queries):
                time.sleep(self.delay_s)
            try:
                if isinstance(message, str):
                    raise TypeError("expected a binary msgpack message, got text")
                obs = msgpack_numpy.unpackb(message)
                t_infer = time.monotonic()
                actions = self._infer(obs)
                infer_ms = (time.monotonic() - t_infer) * 1000.0
            except Exception:
                _fail(ws, f"query {index} failed")
                return
            reply = {
                "actions": actions,
                "infer_time_ms": infer_ms,
                "policy_timing": {"infer_ms": infer_ms},
                "server_timing": {"infer_ms": infer_ms, "query_index": index},
            }
            if prev_total_ms is not None:
                reply["server_timing"]["prev_total_ms"] = prev_total_ms
            reply.update(self._reply_extra())
            try:
                ws.send(packer.pack(reply))
            except ConnectionClosed:
                # The client gave up (e.g. its receive timeout fired): drop the reply.
                log.info("client left before reply to query %d", index)
                return
            prev_total_ms = (time.monotonic() - t_start) * 1000.0

    # -- lifecycle
    def serve_forever(self) -> None:
        self._server.serve_forever()

    def start_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="policy-server", daemon=True)
        thread.start()
        return thread

    def shutdown(self) -> None:
        self._server.shutdown()

    def __enter__(self) -> "PolicyServer":
        self.start_in_thread()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


# --------------------------------------------------------------------------- CLI
def _parse_int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from exc


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m policies.policy_server", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1, local only)")
    p.add_argument("--port", type=int, default=8000, help="TCP port; 0 picks a free one (printed on stdout)")
    p.add_argument("--policy", choices=sorted(POLICIES), default="hold")
    p.add_argument("--horizon", type=int, default=20, help="actions per chunk (RoboMME pi0.5: 20)")
    p.add_argument("--action-dim", type=int, choices=(7, 8), default=8)
    p.add_argument("--delay-s", type=float, default=0.0, help="sleep before each reply (test timeouts)")
    p.add_argument(
        "--delay-queries", type=_parse_int_list, default=None, help="only delay these query numbers (1-based, e.g. 1,3)"
    )
    p.add_argument("--crash-after", type=int, default=None, help="exit abruptly when query N+1 arrives")
    p.add_argument("--max-lifetime-s", type=float, default=None, help="exit after this many seconds")
    p.add_argument("--kind", choices=KINDS, default="openpi",
                   help="openpi: no reset message (a reset fails, as on openpi's server); benchmark: accepts "
                        "{'reset': True} and re-seeds (RoboMME's MME-VLA server)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling generator (policy 'sample')")
    p.add_argument("--bare-metadata", action="store_true",
                   help="send {} as metadata, like the benchmark's server (the client then needs to be told the kind)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = PolicyServer(
        policy=args.policy,
        host=args.host,
        port=args.port,
        horizon=args.horizon,
        action_dim=args.action_dim,
        delay_s=args.delay_s,
        delay_queries=args.delay_queries,
        crash_after=args.crash_after,
        kind=args.kind,
        seed=args.seed,
        bare_metadata=args.bare_metadata,
    )
    log.info("kind %s, policy %s, metadata %s", server.kind, server.policy_name, server.metadata)
    return serve_until_stopped(server, "policy_server", args.max_lifetime_s)


if __name__ == "__main__":
    sys.exit(main())

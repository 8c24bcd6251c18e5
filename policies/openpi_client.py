"""π0.5 served by an openpi websocket policy server, with timeouts.

Wire protocol (openpi-client 0.1.2): websocket, msgpack-numpy frames
(``openpi_client.msgpack_numpy``). The server sends one metadata message right after
the handshake, then answers every observation dict with one reply dict holding
``actions`` (and, for openpi servers, ``server_timing``/``policy_timing``; RoboMME's
server adds ``infer_time_ms``). A *text* reply is the server's traceback.

Why not ``openpi_client.WebsocketClientPolicy``: it has no timeouts (its ``recv``
blocks forever), so a hung server hangs the whole evaluation. Here the connect, the
metadata read and every reply are bounded; on a receive timeout the connection is
*closed* before :class:`~policies.base.PolicyTimeout` is raised, so a reply that
arrives late can never be read as the chunk for the next query (a stale chunk would
silently execute actions computed for an older observation).

Observation mapping, as the benchmark's eval client (``examples/robomme/eval.py``) builds it:

    observation/image        front_rgb (256, 256, 3) uint8 (the model resizes to 224)
    observation/wrist_image  wrist_rgb (256, 256, 3): the hand camera of both robots
                             (``envs/core/hand_camera.py``); zeros only if a robot had none
    observation/state        (8,) float32: 7 joints + first finger width
    prompt                   the task goal
    grounded_subgoal         the subgoal text, e.g. "pick up the red cube at <142, 97>"
    simple_subgoal           the same text: the benchmark puts its predictor's subgoal in both keys
                             (each checkpoint reads the one it was trained on)

With no subgoal (an empty or missing ``subgoal``) both subgoal keys are omitted, as the benchmark
omits them when it has none, rather than sent empty.

Episode start (``server_kind``, see ``policies/serving_protocol.py``): a benchmark server gets
``{"reset": True}`` before the episode's first observation and must answer
``{"reset_finished": True}``; it re-seeds its sampling, so the same observation gives the same
chunk in every episode. A plain openpi server never gets it (it would take it for an observation
and fail). The message is sent on the episode's first query rather than inside :meth:`reset`,
so that a server that is down is an error of the episode (like any failed query), and nothing
the server samples in between is lost: no query comes between the two.

The reply's ``actions`` are (20, 8) absolute joint targets; RoboMME executes the first
16 (wrap this policy in ``ActionHorizon(policy, 16)``). For the stick robot
(``action_dim=7``) an 8-column reply is accepted and its gripper column dropped.

Seeding: the flow-matching noise RNG lives on the server. A benchmark server re-seeds it on the
reset message, to the seed it was started with; the episode's ``reset(seed)`` is recorded in
:attr:`timings` but cannot choose the server's seed, and a plain openpi server cannot be re-seeded
at all (restart it per arm when matched noise matters).
"""

from __future__ import annotations

import inspect
import logging
import time
from typing import Any

import numpy as np
from openpi_client import msgpack_numpy
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.sync.client import ClientConnection, connect

from policies.base import (
    Policy,
    PolicyConnectionError,
    PolicyServerError,
    PolicyTimeout,
    validate_chunk,
)
from policies.serving_protocol import RESET_MESSAGE, check_reset_reply, check_server_kind, sends_reset

log = logging.getLogger(__name__)

# websockets >= 16 wants `legacy=True` to return a plain connection from connect()
# (and warns otherwise); older releases do not know the keyword.
_CONNECT_EXTRA = {"legacy": True} if "legacy" in inspect.signature(connect).parameters else {}

__all__ = ["OpenPIPolicy", "obs_to_openpi"]


def obs_to_openpi(obs: dict) -> dict:
    """Map our low-level observation dict to the benchmark's π0.5 request (module docstring)."""
    missing = [k for k in ("front_rgb", "joint_state", "gripper_state") if obs.get(k) is None]
    if missing:
        raise ValueError(f"observation is missing {missing}; keys present: {sorted(obs)}")
    front = np.ascontiguousarray(obs["front_rgb"], dtype=np.uint8)
    if front.ndim != 3 or front.shape[-1] != 3:
        raise ValueError(f"front_rgb must be (H, W, 3) uint8, got shape {front.shape}")
    wrist = obs.get("wrist_rgb")
    wrist = np.zeros_like(front) if wrist is None else np.ascontiguousarray(wrist, dtype=np.uint8)
    joints = np.asarray(obs["joint_state"], dtype=np.float32).reshape(-1)
    fingers = np.asarray(obs["gripper_state"], dtype=np.float32).reshape(-1)
    if joints.shape[0] != 7:
        raise ValueError(f"joint_state must have 7 entries, got shape {joints.shape}")
    first_finger = fingers[:1] if fingers.size else np.zeros(1, np.float32)
    state = np.concatenate([joints, first_finger]).astype(np.float32)
    request = {
        "observation/image": front,
        "observation/wrist_image": wrist,
        "observation/state": state,
        "prompt": str(obs.get("goal") or ""),
    }
    subgoal = str(obs.get("subgoal") or "").strip()
    if subgoal:
        request["grounded_subgoal"] = subgoal
        request["simple_subgoal"] = subgoal
    return request


class OpenPIPolicy(Policy):
    """Client of an openpi websocket policy server (π0.5 GroundSG for RoboMME).

    Args:
        host, port: the server; ``host`` may also be a full ``ws://`` URL.
        action_dim: 8 for the gripper robot, 7 for the stick robot.
        connect_timeout_s: bound on the TCP connect + websocket handshake + metadata.
        recv_timeout_s: bound on each reply (π0.5 on a GPU answers in ~0.1 s).
        connect_attempts: how many times to try connecting before giving up.
        retry_wait_s: pause between connect attempts (doubles each time).
        api_key: sent as ``Authorization: Api-Key ...`` like openpi-client does.
        server_kind: ``openpi`` (plain openpi: no reset message), ``benchmark`` (RoboMME's MME-VLA
            server: the reset message at each episode start) or ``auto`` (benchmark only if its
            metadata says ``accepts_reset: True``); see ``policies/serving_protocol.py``.

    Attributes:
        timings: one dict per query: ``seed``, ``query``, ``step``, ``roundtrip_ms``
            (client wall clock, send to decoded reply), ``infer_time_ms``,
            ``server_timing`` and ``policy_timing`` (as sent by the server, or None).
            Cleared by :meth:`reset`.
        server_metadata: the metadata dict the server sent on the last connect.
        resets_sent: reset messages sent (and answered) over this client's life.
        reset_timing: the last reset's ``roundtrip_ms`` and the server's ``reset_time_ms``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int | None = 8000,
        *,
        action_dim: int = 8,
        connect_timeout_s: float = 10.0,
        recv_timeout_s: float = 30.0,
        connect_attempts: int = 3,
        retry_wait_s: float = 1.0,
        api_key: str | None = None,
        server_kind: str = "auto",
    ) -> None:
        self.server_kind = check_server_kind(server_kind)
        if action_dim not in (7, 8):
            raise ValueError(f"OpenPIPolicy: action_dim must be 7 or 8, got {action_dim}")
        if connect_attempts < 1:
            raise ValueError(f"OpenPIPolicy: connect_attempts must be >= 1, got {connect_attempts}")
        self.uri = host if host.startswith(("ws://", "wss://")) else f"ws://{host}"
        if port is not None and not host.startswith(("ws://", "wss://")):
            self.uri += f":{int(port)}"
        self.host, self.port = host, port
        self.action_dim = action_dim
        self.connect_timeout_s = float(connect_timeout_s)
        self.recv_timeout_s = float(recv_timeout_s)
        self.connect_attempts = int(connect_attempts)
        self.retry_wait_s = float(retry_wait_s)
        self._headers = {"Authorization": f"Api-Key {api_key}"} if api_key else None
        self._ws: ClientConnection | None = None
        self._packer = msgpack_numpy.Packer()
        self.server_metadata: dict | None = None
        self.timings: list[dict[str, Any]] = []
        self.seed: int | None = None
        self._queries = 0
        self._reset_pending = False
        self.episode_context: dict | None = None
        """Sent with the reset message (``{"reset": True, "episode": {...}}``) when set: the episode's
        identity (task, split, index, env seed), for a server that simulates it (the planner server,
        ``policies/planner_server.py``). The benchmark's server reads only ``reset``."""
        self.reset_timeout_s = max(self.recv_timeout_s, 600.0)
        """Bound on the reset reply: a simulating server builds the episode's env and plays its video."""
        self.resets_sent = 0
        self.reset_timing: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"OpenPIPolicy({self.uri!r}, action_dim={self.action_dim}, server_kind={self.server_kind!r})"

    @property
    def sends_reset(self) -> bool:
        """Whether the server gets the reset message (known once connected, for ``auto``)."""
        return sends_reset(self.server_kind, self.server_metadata)

    # ------------------------------------------------------------------ connection
    @property
    def connected(self) -> bool:
        return self._ws is not None

    def connect(self) -> dict:
        """Open the websocket (bounded retries) and read the server's metadata."""
        if self._ws is not None:
            return self.server_metadata or {}
        last_error: BaseException | None = None
        wait = self.retry_wait_s
        for attempt in range(1, self.connect_attempts + 1):
            try:
                ws = connect(
                    self.uri,
                    open_timeout=self.connect_timeout_s,
                    close_timeout=1.0,
                    compression=None,
                    max_size=None,
                    proxy=None,
                    additional_headers=self._headers,
                    # pings are pointless for request/reply and could kill a slow inference
                    ping_interval=None,
                    **_CONNECT_EXTRA,
                )
            except InvalidURI as exc:
                raise PolicyConnectionError(f"openpi server {self.uri}: invalid URI: {exc}") from exc
            except (OSError, TimeoutError, InvalidHandshake) as exc:
                last_error, wait = exc, self._retry_after(attempt, wait, "connect attempt %d/%d failed", exc)
                continue
            try:
                first = ws.recv(timeout=self.connect_timeout_s)
            except (TimeoutError, ConnectionClosed, OSError) as exc:
                ws.close()
                last_error, wait = exc, self._retry_after(attempt, wait, "no metadata on attempt %d/%d", exc)
                continue
            if isinstance(first, str):
                ws.close()
                raise PolicyServerError(f"openpi server {self.uri} sent an error instead of metadata:\n{first}")
            self._ws = ws
            self.server_metadata = msgpack_numpy.unpackb(first)
            log.info("connected to openpi server %s, metadata %s", self.uri, self.server_metadata)
            return self.server_metadata
        raise PolicyConnectionError(
            f"cannot reach openpi policy server at {self.uri} (port {self.port}) after "
            f"{self.connect_attempts} attempt(s): {last_error!r}"
        )

    def _retry_after(self, attempt: int, wait: float, what: str, exc: BaseException) -> float:
        """Log a failed connect attempt, sleep ``wait`` unless it was the last; the next, doubled wait."""
        log.warning(f"openpi server %s: {what}: %r", self.uri, attempt, self.connect_attempts, exc)
        if attempt < self.connect_attempts:
            time.sleep(wait)
            wait *= 2
        return wait

    def close(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                ws.close()
            except Exception:  # closing a dead socket must never mask the real error
                log.debug("error while closing %s", self.uri, exc_info=True)

    # ------------------------------------------------------------------ policy API
    def reset(self, seed: int) -> None:
        # The connection is kept open across episodes; a benchmark server gets the reset
        # message before this episode's first observation (module docstring).
        self.seed = int(seed)
        self.timings = []
        self._queries = 0
        self._reset_pending = True

    def _roundtrip(self, message: dict, *, late: str, during: str, failed: str,
                   timeout_s: float | None = None) -> tuple[Any, float]:
        """Send ``message``, wait (bounded) for the reply; returns it decoded and the roundtrip in ms.

        Any failure closes the connection first (a late reply must die with it) and raises:
        :class:`PolicyTimeout` naming ``late`` (what got no reply), :class:`PolicyServerError` for a
        closed connection (``during``), an error text from the server (``failed``: the message's
        opening, the server's text follows) or an undecodable reply.
        """
        assert self._ws is not None
        t0 = time.monotonic()
        try:
            self._ws.send(self._packer.pack(message))
            raw = self._ws.recv(timeout=self.recv_timeout_s if timeout_s is None else timeout_s)
        except TimeoutError as exc:
            self.close()
            waited = self.recv_timeout_s if timeout_s is None else timeout_s
            raise PolicyTimeout(
                f"openpi server {self.uri} sent no reply to {late} within {waited:g} s; connection closed"
            ) from exc
        except (ConnectionClosed, OSError) as exc:
            self.close()
            raise PolicyServerError(f"openpi server {self.uri} closed the connection {during}: {exc!r}") from exc
        roundtrip_ms = (time.monotonic() - t0) * 1000.0
        if isinstance(raw, str):
            self.close()
            raise PolicyServerError(f"openpi server {self.uri} {failed}:\n{raw}")
        try:
            return msgpack_numpy.unpackb(raw), roundtrip_ms
        except Exception as exc:
            self.close()
            raise PolicyServerError(f"openpi server {self.uri} sent an undecodable reply: {exc!r}") from exc

    def _send_reset(self) -> None:
        """Send ``{"reset": True}`` and wait (bounded) for ``{"reset_finished": True}``."""
        message = dict(RESET_MESSAGE, **({"episode": dict(self.episode_context)} if self.episode_context else {}))
        reply, roundtrip_ms = self._roundtrip(
            message,
            timeout_s=self.reset_timeout_s if self.episode_context else None,
            late=f"the reset message (episode seed {self.seed})",
            during="on the reset message",
            failed=("failed on the reset message (is it a plain openpi server? then use "
                    f"server kind 'openpi', not {self.server_kind!r})"),
        )
        try:
            reply = check_reset_reply(reply, f"openpi server {self.uri}")
        except Exception as exc:
            self.close()
            raise PolicyServerError(str(exc)) from exc
        self.resets_sent += 1
        self.reset_timing = {"seed": self.seed, "roundtrip_ms": roundtrip_ms,
                             "reset_time_ms": _as_float(reply.get("reset_time_ms"))}

    def infer(self, obs: dict) -> np.ndarray:
        request = obs_to_openpi(obs)
        self.connect()
        if self._reset_pending:
            if self.sends_reset:
                self._send_reset()
            self._reset_pending = False
        self._queries += 1
        where = f"query {self._queries}, step {obs.get('step')}"
        reply, roundtrip_ms = self._roundtrip(request, late=where, during=f"during {where}",
                                              failed="reported an error")
        if not isinstance(reply, dict) or "actions" not in reply:
            keys = sorted(reply) if isinstance(reply, dict) else type(reply).__name__
            raise PolicyServerError(f"openpi server {self.uri}: reply has no 'actions' (got {keys})")
        actions = np.asarray(reply["actions"])
        if self.action_dim == 7 and actions.ndim == 2 and actions.shape[1] == 8:
            actions = actions[:, :7]
        chunk = validate_chunk(actions, self.action_dim, where=f"openpi server {self.uri}")
        self.timings.append(
            {
                "seed": self.seed,
                "query": self._queries,
                "step": obs.get("step"),
                "roundtrip_ms": roundtrip_ms,
                "infer_time_ms": _as_float(reply.get("infer_time_ms")),
                "server_timing": _plain(reply.get("server_timing")),
                "policy_timing": _plain(reply.get("policy_timing")),
            }
        )
        return chunk


def _as_float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _plain(value: Any) -> Any:
    """Make a timing dict JSON-friendly (numpy scalars become Python numbers)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value

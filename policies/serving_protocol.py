"""The two kinds of websocket policy server π0.5 is reached through, and the reset message.

Both speak openpi's wire protocol (msgpack-numpy frames; metadata first, then one reply per
observation dict). They differ in one message:

* a **plain openpi server** (``openpi.serving.websocket_policy_server``) has no reset: every
  binary message is an observation, so ``{"reset": True}`` is fed to the model, fails, and the
  server answers with a traceback and closes the connection. A client must never send it.
* a **benchmark server** (RoboMME's MME-VLA server, ``mme_vla_suite.serving``) answers
  ``{"reset": True}`` with ``{"reset_finished": True, "reset_time_ms": ...}`` after re-seeding its
  sampling generator (and clearing its memory buffers). The benchmark's eval client
  (``MMEVLAWebsocketClientPolicy.reset()``) sends it at every episode start, so the same
  observation gives the same chunk in every episode.

Nothing on the wire tells the two apart: the MME-VLA server sends whatever ``policy_metadata`` its
training config names (usually nothing). So the client is told, by a flag
(:data:`SERVER_KINDS`: ``openpi`` / ``benchmark``), or, with ``auto``, by the metadata key
:data:`ACCEPTS_RESET_KEY` that this project's test server (``policies.policy_server``) sends; a
server that does not say so is taken to be plain openpi, the kind a stray reset would break.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "ACCEPTS_RESET_KEY",
    "RESET_MESSAGE",
    "SERVER_KINDS",
    "ServerKind",
    "check_reset_reply",
    "check_server_kind",
    "is_reset_message",
    "reset_reply",
    "sends_reset",
]

ServerKind = Literal["auto", "openpi", "benchmark"]
SERVER_KINDS: tuple[str, ...] = ("auto", "openpi", "benchmark")

RESET_MESSAGE: dict[str, bool] = {"reset": True}
"""What the benchmark's client sends at every episode start."""

ACCEPTS_RESET_KEY = "accepts_reset"
"""Metadata key (value ``True``) by which a server says it accepts :data:`RESET_MESSAGE`."""


def check_server_kind(kind: str) -> str:
    if kind not in SERVER_KINDS:
        raise ValueError(f"unknown policy server kind {kind!r} (choose one of: {', '.join(SERVER_KINDS)})")
    return kind


def sends_reset(kind: str, metadata: dict | None) -> bool:
    """Whether a client of a ``kind`` server that sent ``metadata`` sends the reset message.

    The flag wins over the metadata: ``openpi`` never sends it, ``benchmark`` always does (the
    benchmark's own server advertises nothing); ``auto`` only when the metadata says
    ``accepts_reset: True``.
    """
    check_server_kind(kind)
    if kind == "auto":
        return isinstance(metadata, dict) and metadata.get(ACCEPTS_RESET_KEY) is True
    return kind == "benchmark"


def is_reset_message(message: Any) -> bool:
    """The benchmark server's test (``obs.get("reset", False)``), for a decoded message."""
    return isinstance(message, dict) and bool(message.get("reset", False))


def reset_reply(reset_time_ms: float) -> dict[str, Any]:
    """The benchmark server's answer to a reset."""
    return {"reset_finished": True, "reset_time_ms": float(reset_time_ms)}


def check_reset_reply(reply: Any, where: str) -> dict[str, Any]:
    """``reply`` if it is the benchmark's ``{"reset_finished": True, ...}``; else a ValueError naming it."""
    if not isinstance(reply, dict) or reply.get("reset_finished") is not True:
        shown = {k: reply[k] for k in list(reply)[:6]} if isinstance(reply, dict) else type(reply).__name__
        raise ValueError(f"{where}: expected {{'reset_finished': True}} in reply to the reset message, got {shown!r}")
    return reply

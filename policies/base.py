"""The two interfaces every predictor and controller in this project implements.

A *composer* sits on top: every H env steps it looks at the goal and the current
view and proposes a grounded subgoal ("pick up the red cube at <142, 97>").
A *policy* sits below: given a low-level observation (which carries that subgoal)
it returns an action chunk of absolute joint targets.

Low-level observation (a plain dict, the contract between env wrappers and policies):

    front_rgb      (256, 256, 3) uint8       front camera
    wrist_rgb      (256, 256, 3) uint8|None  wrist camera (None for the stick robot)
    joint_state    (7,) float32              arm joint positions
    gripper_state  (2,) float32              finger widths, 0..0.04 (zeros for the stick)
    goal           str                       the task goal
    subgoal        str                       grounded subgoal text
    step           int                       env step index

Action chunk: ``(T, D)`` float32 absolute joint targets; D = 8 (7 joints + gripper,
+1 open / -1 closed) for the gripper robot and D = 7 for the stick robot.

Policies compose as decorators: :class:`ActionHorizon` wraps any policy and is a
policy itself, the same way openpi's action-chunk broker is a ``BasePolicy``.

Errors from a policy are *infrastructure* errors (a server that is down, slow or
crashed), never task failures. They all derive from :class:`PolicyError`; the
episode runner records them as status ``error`` so they are never counted as a
``fail`` of the method under test.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

__all__ = [
    "ActionHorizon",
    "Composer",
    "Policy",
    "PolicyConnectionError",
    "PolicyError",
    "PolicyServerError",
    "PolicyTimeout",
    "validate_chunk",
]


# --------------------------------------------------------------------------- errors
class PolicyError(RuntimeError):
    """A policy could not produce an action chunk for infrastructure reasons.

    The message always says where (host:port or model path) and what happened.
    """


class PolicyTimeout(PolicyError):
    """The policy did not answer within its time budget."""


class PolicyConnectionError(PolicyError):
    """The policy server could not be reached at all."""


class PolicyServerError(PolicyError):
    """The policy server answered badly: it crashed, closed the connection, sent an
    error text or an action chunk of the wrong shape."""


# --------------------------------------------------------------------------- policy
class Policy(abc.ABC):
    """Maps a low-level observation dict to an action chunk ``(T, D)`` float32."""

    @abc.abstractmethod
    def reset(self, seed: int) -> None:
        """Start a new episode; ``seed`` fixes any sampling the policy does."""

    @abc.abstractmethod
    def infer(self, obs: dict) -> np.ndarray:
        """Return an action chunk of absolute joint targets for ``obs``."""

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release sockets, processes or models. Safe to call more than once."""

    def __enter__(self) -> "Policy":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def validate_chunk(chunk: Any, action_dim: int, where: str, min_horizon: int = 1) -> np.ndarray:
    """Return ``chunk`` as a finite ``(T, action_dim)`` float32 array or raise
    :class:`PolicyServerError` naming ``where`` and the bad shape / values."""
    try:
        arr = np.asarray(chunk, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise PolicyServerError(f"{where}: action chunk is not numeric ({type(chunk).__name__}): {exc}") from exc
    if arr.ndim != 2 or arr.shape[1] != action_dim or arr.shape[0] < min_horizon:
        raise PolicyServerError(
            f"{where}: bad action chunk shape {tuple(arr.shape)}, expected (T>={min_horizon}, {action_dim})"
        )
    if not np.all(np.isfinite(arr)):
        raise PolicyServerError(f"{where}: action chunk of shape {tuple(arr.shape)} contains NaN or inf")
    return arr


class ActionHorizon(Policy):
    """Decorator policy: keeps only the first ``horizon`` actions of the inner chunk.

    RoboMME's π0.5 predicts 20 actions and the evaluator executes the first 16
    before querying again; ``ActionHorizon(OpenPIPolicy(...), horizon=16)`` is that
    executor's view of the model. A chunk shorter than ``horizon`` is returned
    whole (the caller simply re-queries sooner).
    """

    def __init__(self, policy: Policy, horizon: int = 16) -> None:
        if int(horizon) < 1:
            raise ValueError(f"ActionHorizon: horizon must be >= 1, got {horizon!r}")
        self.policy = policy
        self.horizon = int(horizon)

    def reset(self, seed: int) -> None:
        self.policy.reset(seed)

    def infer(self, obs: dict) -> np.ndarray:
        chunk = np.asarray(self.policy.infer(obs), dtype=np.float32)
        if chunk.ndim != 2:
            name = type(self.policy).__name__
            raise PolicyServerError(f"ActionHorizon: inner policy {name} returned shape {chunk.shape}, expected (T, D)")
        return chunk[: self.horizon].copy()

    def close(self) -> None:
        self.policy.close()

    def __getattr__(self, name: str) -> Any:
        # Let callers reach the wrapped policy's extras (timings, server_metadata, ...).
        # Only called for attributes missing on the decorator itself.
        if name == "policy":
            raise AttributeError(name)
        return getattr(self.policy, name)

    def __repr__(self) -> str:
        return f"ActionHorizon({self.policy!r}, horizon={self.horizon})"


# --------------------------------------------------------------------------- composer
class Composer(abc.ABC):
    """Proposes the next grounded subgoal from the goal and the current view."""

    @abc.abstractmethod
    def reset(self, goal: str, seed: int, demo_frames: list[np.ndarray]) -> None:
        """Start a new episode with its goal text and conditioning-video frames."""

    @abc.abstractmethod
    def propose(self, obs: dict, info: dict) -> str | None:
        """Return a grounded subgoal, or None when the composer has no proposal."""

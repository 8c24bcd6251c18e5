"""Per-episode times of a subgoal-level env, shared by both backends.

Ours (``wrappers.subgoal_execution.SubgoalExecution``) and the official one
(``envs.official.env.OfficialSubgoalEnv``) report the same ``timings`` to the harness: the fixed
keys they accumulate themselves plus one entry per extra timer (a callable returning a growing
number of seconds, e.g. the memory layer's clock), measured as its growth since the episode's
reset. It lives in ``envs`` because both sides import it and ``envs`` may not import ``wrappers``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["TIMING_KEYS", "read_timings", "start_timings"]

TIMING_KEYS = ("policy_s", "env_s", "render_s", "reset_s", "renders")
"""What the env accumulates itself: seconds in the policy, the env, rendering and reset; renders."""

Timers = Mapping[str, Callable[[], float]]


def start_timings(timers: Timers) -> tuple[dict[str, float], dict[str, float]]:
    """A reset's fresh accumulators (every key at 0) and the timers' readings at that moment."""
    return dict.fromkeys(TIMING_KEYS, 0.0), {name: float(clock()) for name, clock in timers.items()}


def read_timings(accumulated: Mapping[str, float], timers: Timers, start: Mapping[str, float]) -> dict[str, float]:
    """This episode's times: the accumulators and each timer's growth since ``start``; a fresh dict."""
    out = dict(accumulated)
    for name, clock in timers.items():
        out[name] = float(clock()) - start.get(name, 0.0)
    return out

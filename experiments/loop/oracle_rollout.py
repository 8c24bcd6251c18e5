"""Oracle subgoals through the scripted policy: the ceiling every task must reach.

Used by the manifest builder, the task tests and ``scripts/check_oracle.py``. Deliberately the
thinnest loop (no wrappers): query the env's grounded subgoal every ``horizon`` steps and
execute the scripted policy's chunk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from envs import make_env
from envs.episodes import EpisodeSpec


@dataclass
class OracleOutcome:
    spec: EpisodeSpec
    status: str
    steps: int
    wall_s: float
    solver_failures: list[str]
    last_subgoal: str
    fail_reason: str | None
    error: str | None
    reset_failed: bool = False
    """True when the scene itself could not be built or demonstrated (no step was played)."""


def run_oracle(env, spec: EpisodeSpec, horizon: int = 16, seed: int = 0, retry: bool = True) -> OracleOutcome:
    """Play ``spec`` with oracle subgoals. ``retry=False`` plays exactly ``spec.env_seed`` (the
    manifest builder's search); otherwise ``reset`` moves past an unusable scene as in a run."""
    from policies.scripted import ScriptedPolicy

    t0 = time.perf_counter()
    try:
        obs, info = env.reset(options={"episode": spec, "retry": retry})
    except Exception as exc:  # a demonstration that cannot complete is an error of the episode
        return OracleOutcome(spec, "error", 0, time.perf_counter() - t0, [], "", None, f"{type(exc).__name__}: {exc}",
                             reset_failed=True)
    spec = info.get("episode") or spec
    policy = ScriptedPolicy(env, horizon=horizon)
    policy.reset(seed)
    done = False
    while not done:
        chunk = policy.infer({**obs, "subgoal": env.oracle_subgoal(), "goal": info["goal"]})
        for action in chunk:
            obs, _, term, trunc, info = env.step(action)
            if term or trunc:
                done = True
                break
    task = env.unwrapped
    return OracleOutcome(spec, info["status"], env.steps, time.perf_counter() - t0, policy.failures,
                         info["subgoal"], task.checker.fail_reason, info.get("error"))


def oracle_success_rate(task: str, episodes, split: str = "test", env=None) -> list[OracleOutcome]:
    from envs.episodes import episode_spec

    env = env or make_env(task)
    return [run_oracle(env, episode_spec(task, i, split)) for i in episodes]

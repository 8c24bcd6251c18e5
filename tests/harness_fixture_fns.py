"""Small, real unit functions for testing the experiment harness without the simulator.

Each has the signature of ``experiments.loop.unit.run_unit``; the outcome is a pure function of the
unit, so two runs of the same config must write the same rows. Used in-process, in spawned
worker processes, in Ray workers and through the hidden ``--unit-fn tests.harness_fixture_fns:NAME``
option of ``python -m experiments.run``.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import time

from envs.episodes import episode_spec
from experiments.loop.records import EpisodeResult, WorkUnit


def _h(unit: WorkUnit) -> int:
    return int.from_bytes(hashlib.sha256(repr(unit.key).encode()).digest()[:8], "big")


def det_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """Deterministic outcome from a hash of the unit's key; memory conditions report read counts."""
    h = _h(unit)
    spec = episode_spec(unit.task, unit.episode, unit.split)
    status = "timeout" if h % 7 == 0 else ("success" if h % 3 else "fail")
    memory = {}
    if unit.condition.startswith("memory"):
        reads = h % 5
        memory = {"reads": reads, "abstentions": (h >> 3) % 2, "reads_correct": max(0, reads - 1), "reads_wrong": min(1, reads)}
    return EpisodeResult(
        task=unit.task,
        split=unit.split,
        episode=unit.episode,
        env_seed=spec.env_seed,
        seed=unit.seed,
        condition=unit.condition,
        difficulty=spec.difficulty,
        status=status,
        success=status == "success",
        steps=100 + h % 500,
        wall_s=0.01,
        n_subgoals=1 + h % 4,
        memory=memory,
    )


def slow_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """``det_unit`` after 0.3 s, so a run can be killed part-way."""
    time.sleep(0.3)
    return det_unit(unit, cfg)


def raising_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """Raises on episode 1, otherwise ``det_unit``."""
    if unit.episode == 1:
        raise ValueError(f"boom on {unit.task} episode {unit.episode}")
    return det_unit(unit, cfg)


def killing_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """Kills its own worker process (SIGKILL) on episode 2; never kills the test process itself."""
    if unit.episode == 2:
        if multiprocessing.parent_process() is None:
            raise RuntimeError("killing_unit refuses to kill the main process")
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return det_unit(unit, cfg)


def wrong_key_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """Returns a row for another episode (a bug the harness must catch)."""
    return det_unit(WorkUnit(unit.task, unit.split, unit.episode + 1, unit.condition, unit.seed), cfg)

"""Random streams from the episode's identity, never from the run seed alone.

Every random choice an episode makes (the history-blind composer's draws, the scripted policy's
execution noise, a reworded goal) comes from its own named stream, derived with
``numpy.random.SeedSequence`` from ``(run seed, task, split, episode, stream name)``. So:

* two episodes of one seed draw differently (a seed is not one draw sequence replayed in every
  episode, which made episodes of a seed dependent);
* the same episode and seed give the same stream in every condition: ``memory`` and ``no-memory``
  see the same proposals, which is what makes them paired;
* adding a stream later does not change the draws of the existing ones.

>>> a = episode_streams(7, "PickXtimes", "test", 0)
>>> b = episode_streams(7, "PickXtimes", "test", 1)
>>> a["composer"] != b["composer"] and a == episode_streams(7, "PickXtimes", "test", 0)
True
"""

from __future__ import annotations

import zlib

import numpy as np

STREAM_NAMES: tuple[str, ...] = ("composer", "policy", "goal")
"""The named streams of an episode; each result row records them as ``streams: {name: int}``."""


def _word(text: str) -> int:
    """A stable 32-bit number for a name (Python's ``hash`` is salted per process)."""
    return zlib.crc32(text.encode("utf-8"))


def stream_seed(run_seed: int, task: str, split: str, episode: int, name: str) -> int:
    """The 63-bit seed of stream ``name`` of one episode under run seed ``run_seed``."""
    if name not in STREAM_NAMES:
        raise ValueError(f"unknown random stream {name!r} (known: {', '.join(STREAM_NAMES)})")
    if not isinstance(run_seed, (int, np.integer)) or run_seed < 0:
        raise ValueError(f"run seed must be a non-negative int, got {run_seed!r}")
    entropy = [int(run_seed), _word(task), _word(split), int(episode), _word(name)]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def episode_streams(run_seed: int, task: str, split: str, episode: int) -> dict[str, int]:
    """Every named stream of one episode: ``{"composer": ..., "policy": ..., "goal": ...}``."""
    return {name: stream_seed(run_seed, task, split, episode, name) for name in STREAM_NAMES}

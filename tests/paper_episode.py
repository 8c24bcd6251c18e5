"""One memory episode through the harness under the ``paper`` preset: the preset the campaigns run,
whose scripted executor misses some grasps and lets some carried objects slip. Tests that replay a
development episode where that noise mattered share it."""

from __future__ import annotations


def paper_memory_episode(task: str, split: str, episode: int, out, seed: int = 7):
    """Run ``task`` ``episode`` of ``split`` as the memory condition under ``seed`` (7 unless given), ``paper`` preset, with
    results under ``out``; returns the episode's result (``experiments.loop.records.EpisodeResult``)."""
    from experiments.loop.config import parse_config
    from experiments.loop.records import WorkUnit
    from experiments.loop.unit import run_unit

    cfg = parse_config(["--preset", "paper", "--tasks", task, "--split", split, "--out", str(out)])
    return run_unit(WorkUnit(task, split, episode, "memory", seed), cfg)

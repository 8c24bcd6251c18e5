"""The whole-episode check the memory tests share: the history-blind arm fails, the same arm with
memory succeeds (scripted policy, seed 7, test split). Each test file adds what the memory must
show on its task family; this runs the two episodes and checks the part common to all."""

from __future__ import annotations

from envs import episode_spec


def blind_fails_memory_succeeds(task: str, episode: int) -> dict:
    """Run ``task`` ``episode`` as no-memory and as memory; assert the first fails and the second
    succeeds; return both outcomes by condition name."""
    from experiments.loop.config import ExperimentConfig
    from experiments.loop.episode import run_episode
    from experiments.loop.records import WorkUnit
    from experiments.loop.unit import build_parts

    cfg = ExperimentConfig.from_flat(out=f"/tmp/robomem_blind_vs_memory_{task}", wandb="disabled")
    outcomes = {}
    for cond in ("no-memory", "memory"):
        parts = build_parts(WorkUnit(task=task, split="test", episode=episode, condition=cond, seed=7), cfg)
        outcomes[cond] = run_episode(episode_spec(task, episode), parts)
    assert outcomes["no-memory"].status != "success", (task, episode, outcomes["no-memory"].subgoals)
    assert outcomes["memory"].status == "success", (task, episode, outcomes["memory"].subgoals)
    return outcomes

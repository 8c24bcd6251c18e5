"""``--backend robomme``: the same units, conditions, memory and rows on the official RoboMME envs.

``build_official_parts`` is ``experiments.loop.unit.build_parts`` for the official backend: the
subgoal-level env is :class:`envs.official.env.OfficialSubgoalEnv` (the benchmark's multi_choice
planner executes every subgoal, so there is no ``SubgoalExecution`` and no low-level policy; an
executor profile perturbs the planner's motions instead: policies/official_faults.py), the
memory layer, composers, streams and the render schedule's strides are exactly ours.
"""

from __future__ import annotations

from functools import lru_cache

from experiments.loop.conditions import condition_from_name
from experiments.loop.episode import EpisodeParts
from experiments.loop.records import WorkUnit
from experiments.loop.stack import wrap_top
from experiments.loop.streams import episode_streams


@lru_cache(maxsize=4)
def _official_env(task: str, split: str, max_steps: int, render_lod: str):
    from envs.official.env import OfficialSubgoalEnv

    return OfficialSubgoalEnv(task, split=split, max_steps=max_steps, render_lod=render_lod)


def official_spec(unit: WorkUnit):
    from envs.official.episodes import official_episode_spec

    return official_episode_spec(unit.task, unit.episode, unit.split)


@lru_cache(maxsize=4)
def _official_joint_env(task: str, split: str, max_steps: int, render_lod: str):
    from envs.official.joint_env import OfficialJointEnv

    return OfficialJointEnv(task, split=split, max_steps=max_steps, render_lod=render_lod)


def _official_memory(unit: WorkUnit, cond, cfg):
    """The memory (or recent-N window) of an official episode, told the benchmark's executor; ``None``
    for a memoryless condition. The oracle ladder has no equivalent here (config refuses it first)."""
    if not (cond.memory or cond.recent_window is not None):
        return None
    from experiments.loop.memory_factory import build_memory, executor_tool_settings

    if cond.flags.uses_true_state:
        raise ValueError(f"condition {unit.condition!r} reads our envs' privileged state (the oracle ladder); "
                         "it has no official-backend equivalent yet")
    return build_memory(cond, cfg.perception, cfg.specifier, executor_tool_settings("robomme", cfg.policy.kind))


def _official_faults(unit: WorkUnit, cfg, policy_seed: int):
    """``--executor-profile``'s failures of the benchmark planner's motions in this episode, drawn
    from its policy stream (policies/official_faults.py); None for ``clean``. The row reads the profile's
    name and the failures from it, as from our scripted policy."""
    if cfg.policy.executor_profile == "clean":
        return None
    from policies.official_faults import OfficialFaults
    from policies.executor_profile import load_profile

    faults = OfficialFaults(load_profile(cfg.policy.executor_profile), unit.task)
    faults.reset(policy_seed)
    return faults


def build_official_parts(unit: WorkUnit, cfg, video_path=None) -> EpisodeParts:
    """The parts of one official episode; with ``video_path``, the episode is recorded there (mp4,
    the conditioning video then the front camera every ``--render-stride`` steps, annotated).

    ``--policy scripted``: the benchmark's ``multi_choice`` planner executes each subgoal.
    ``--policy openpi``: the official env runs in the ``joint_angle`` action space and a policy
    server answers each subgoal with a chunk (a π0.5 server, or ``policies/planner_server.py``);
    the reset message names the episode, for a server that simulates it.
    """
    if cfg.policy.kind != "scripted":
        return _learned_policy_parts(unit, cfg, video_path)
    from experiments.loop.render_schedule import render_schedule
    from experiments.loop.composer_factory import build_composer

    cond = condition_from_name(unit.condition)
    env = _official_env(unit.task, unit.split, cfg.env.max_steps, cfg.render.render_lod)
    streams = episode_streams(unit.seed, unit.task, unit.split, unit.episode)
    memory = _official_memory(unit, cond, cfg)
    sched = render_schedule(cfg, memory=memory, composer=cfg.composer_for(cond), policy_images=False,
                            record=video_path is not None)
    # the official wrappers render every frame anyway; the schedule decides which ones the memory is shown
    env.frame_stride, env.video_stride = sched.front_stride, sched.env_video_stride
    env.render_only_consumed = cfg.render.official_render_gate
    env.timers = {"memory_s": memory.time_s} if hasattr(memory, "time_s") else {}
    env.faults = _official_faults(unit, cfg, streams["policy"])
    top = wrap_top(env, memory, cond, video_path)
    composer = build_composer(cfg.composer_for(cond), cfg.composer, env)
    return EpisodeParts(env=top, composer=composer, memory=memory, condition=unit.condition, seed=unit.seed,
                        backend="robomme", goal_style=cfg.env.goal_style,
                        streams=streams, policy=env.faults, extra={"bridges": list(env.bridges.applied)})


def _learned_policy_parts(unit: WorkUnit, cfg, video_path=None) -> EpisodeParts:
    """Memory -> subgoal -> policy server -> chunk -> the official ``joint_angle`` controller."""
    from dataclasses import asdict

    from experiments.loop.composer_factory import build_composer
    from experiments.loop.render_schedule import render_schedule
    from experiments.loop.policy_factory import build_policy
    from wrappers.subgoal_execution import SubgoalExecution

    cond = condition_from_name(unit.condition)
    low = _official_joint_env(unit.task, unit.split, cfg.env.max_steps, cfg.render.render_lod)
    policy, needs_images = build_policy(cfg, low)
    streams = episode_streams(unit.seed, unit.task, unit.split, unit.episode)
    client = getattr(policy, "policy", policy)  # ActionHorizon wraps the client
    if hasattr(client, "episode_context"):
        client.episode_context = asdict(official_spec(unit))
    policy.reset(streams["policy"])
    memory = _official_memory(unit, cond, cfg)
    sched = render_schedule(cfg, memory=memory, composer=cfg.composer_for(cond), policy_images=needs_images,
                            record=video_path is not None)
    low.video_stride = sched.env_video_stride  # the official wrappers render every step: nothing to skip yet
    env = SubgoalExecution(low, policy, horizon=cfg.env.horizon, **sched.wrapper_kwargs(),
                           timers={"memory_s": memory.time_s} if hasattr(memory, "time_s") else None)
    env = wrap_top(env, memory, cond, video_path)
    composer = build_composer(cfg.composer_for(cond), cfg.composer, low)
    return EpisodeParts(env=env, composer=composer, memory=memory, condition=unit.condition, seed=unit.seed,
                        backend="robomme", goal_style=cfg.env.goal_style,
                        streams=streams, policy=policy, extra={"bridges": list(low.bridges.applied)})

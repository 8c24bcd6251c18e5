"""From a work unit ``(task, split, episode, condition, seed)`` to one result row.

Builds the env stack for the unit's condition and plays the episode with ``run_episode``. Envs
are cached per task inside a worker process (building a SAPIEN scene and compiling shaders costs
seconds); the scene itself is rebuilt by every reset, so nothing leaks from one episode into the
next.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from envs import make_env
from envs.episodes import episode_spec
from experiments.loop.composer_factory import build_composer
from experiments.loop.conditions import condition_from_name
from experiments.loop.episode import EpisodeParts, run_episode
from experiments.loop.records import EpisodeResult, WorkUnit
from experiments.loop.results import video_path
from experiments.loop.stack import wrap_top
from experiments.loop.policy_factory import build_policy  # noqa: F401 (re-exported: its old home)
from experiments.loop.streams import episode_streams


@lru_cache(maxsize=4)
def _low_env(task: str, max_steps: int, wrist: bool, render_lod: str = "simplified"):
    return make_env(task, max_steps=max_steps, wrist=wrist, render_lod=render_lod)


def build_parts(unit: WorkUnit, cfg, video_path=None) -> EpisodeParts:
    from wrappers.subgoal_execution import SubgoalExecution

    cond = condition_from_name(unit.condition)
    low = _low_env(unit.task, cfg.env.max_steps, cfg.policy.kind != "scripted", cfg.render.render_lod)
    low.challenge_feed = cfg.policy.kind == "challenge"  # the cached env feeds every step's lists only for it
    policy, needs_images = build_policy(cfg, low)
    streams = episode_streams(unit.seed, unit.task, unit.split, unit.episode)
    policy.reset(streams["policy"])
    uses_memory = cond.memory or cond.recent_window is not None
    memory = None
    if uses_memory:
        from experiments.loop.memory_factory import build_memory, executor_tool_settings

        memory = build_memory(cond, cfg.perception, cfg.specifier, executor_tool_settings("robomem", cfg.policy.kind))
        if cond.flags.uses_true_state:
            from experiments.audit.oracle_ladder import OracleLadder, ladder_rung

            memory = OracleLadder(memory, low.unwrapped, ladder_rung(cond.flags))
    # render only what a consumer reads (experiments/loop/render_schedule.py); the demonstration's
    # frames and the wrist camera are set per episode on the cached env, so nothing leaks
    from experiments.loop.render_schedule import render_schedule

    sched = render_schedule(cfg, memory=memory, composer=cfg.composer_for(cond), policy_images=needs_images,
                            record=video_path is not None)
    low.video_stride, low.wrist = sched.env_video_stride, False  # the wrapper renders the wrist when the policy reads it
    env = SubgoalExecution(low, policy, horizon=cfg.env.horizon, **sched.wrapper_kwargs(),
                           timers={"memory_s": memory.time_s} if hasattr(memory, "time_s") else None)
    env = wrap_top(env, memory, cond, video_path)
    composer = build_composer(cfg.composer_for(cond), cfg.composer, low)
    return EpisodeParts(env=env, composer=composer, memory=memory, condition=unit.condition, seed=unit.seed,
                        streams=streams, policy=policy, goal_style=cfg.env.goal_style)


def run_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """Play one unit. With ``--video``, the first ``--max-videos`` episodes of every
    (task, condition, seed) are recorded to ``<out>/videos/<condition>/s<seed>/<task>_ep<i>_<outcome>.mp4``."""
    record = cfg.render.video and unit.episode < cfg.render.max_videos
    out = cfg.execution.out
    tmp = Path(out) / "videos" / f".{unit.task}_{unit.episode}_{unit.condition}_{unit.seed}.mp4" if record else None
    if cfg.env.backend == "robomme":
        from experiments.loop.official_backend import build_official_parts, official_spec

        spec, parts = official_spec(unit), build_official_parts(unit, cfg, tmp)
    else:
        spec, parts = episode_spec(unit.task, unit.episode, unit.split), build_parts(unit, cfg, tmp)
    result = run_episode(spec, parts)
    if tmp is not None:
        parts.env.close_video()
        if tmp.exists():
            final = video_path(out, unit.task, unit.episode, unit.condition, unit.seed, result.success)
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp.replace(final)
    return result

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
from experiments.conditions import condition_from_name
from experiments.episode import EpisodeParts, run_episode
from experiments.records import EpisodeResult, WorkUnit
from experiments.results import video_path
from experiments.streams import episode_streams


@lru_cache(maxsize=4)
def _low_env(task: str, max_steps: int, wrist: bool, render_lod: str = "simplified"):
    return make_env(task, max_steps=max_steps, wrist=wrist, render_lod=render_lod)


def build_policy(cfg, low):
    if cfg.policy == "scripted":
        from policies.scripted import ScriptedPolicy

        return ScriptedPolicy(low, horizon=cfg.horizon, noise=cfg.policy_noise), False
    if cfg.policy == "openpi":
        from policies.base import ActionHorizon
        from policies.openpi_client import OpenPIPolicy

        # the stick robot takes 7-D actions: the client drops the 8-column reply's gripper column
        inner = OpenPIPolicy(host=cfg.openpi_host, port=cfg.openpi_port, action_dim=int(low.action_space.shape[0]),
                             connect_timeout_s=cfg.openpi_connect_timeout_s, recv_timeout_s=cfg.openpi_recv_timeout_s,
                             server_kind=getattr(cfg, "openpi_server", "auto"))
        return ActionHorizon(inner, cfg.horizon), True
    if cfg.policy == "lerobot":
        from policies.base import ActionHorizon
        from policies.lerobot_policy import LeRobotPI05Policy

        path = getattr(cfg, "lerobot_path", None)
        if not path:
            raise ValueError("--policy lerobot needs --lerobot-path (a local PI05 checkpoint directory)")
        return ActionHorizon(LeRobotPI05Policy(path), cfg.horizon), True
    raise ValueError(f"unknown policy {cfg.policy!r}")


def build_composer(kind: str, cfg, env):
    from policies.composers import HistoryBlindComposer, OracleComposer

    if kind == "oracle":
        return OracleComposer(env)
    if kind == "history-blind":
        return HistoryBlindComposer(env, p=cfg.history_blind_p)
    if kind == "vlm":
        from policies.vlm import VLMComposer

        if cfg.vlm_endpoint:
            return VLMComposer.from_url(cfg.vlm_endpoint, cfg.vlm_model)
        return VLMComposer.from_local(cfg.vlm_model)
    raise ValueError(f"unknown composer {kind!r}")


def build_parts(unit: WorkUnit, cfg, video_path=None) -> EpisodeParts:
    from wrappers.subgoal_execution import SubgoalExecution

    cond = condition_from_name(unit.condition)
    low = _low_env(unit.task, cfg.max_steps, cfg.policy != "scripted", cfg.render_lod)
    policy, needs_images = build_policy(cfg, low)
    streams = episode_streams(unit.seed, unit.task, unit.split, unit.episode)
    policy.reset(streams["policy"])
    uses_memory = cond.memory or cond.recent_window is not None
    memory = None
    if uses_memory:
        from experiments.memory_factory import build_memory

        memory = build_memory(cond, getattr(cfg, "perception", None), cfg)
        if cond.flags.uses_true_state:
            from experiments.oracle_ladder import OracleLadder, ladder_rung

            memory = OracleLadder(memory, low.unwrapped, ladder_rung(cond.flags))
    # render only what a consumer reads (experiments/render_schedule.py); the demonstration's
    # frames and the wrist camera are set per episode on the cached env, so nothing leaks
    from experiments.render_schedule import render_schedule

    sched = render_schedule(cfg, memory=memory, composer=cfg.composer_for(cond), policy_images=needs_images,
                            record=video_path is not None)
    low.video_stride, low.wrist = sched.env_video_stride, False  # the wrapper renders the wrist when the policy reads it
    env = SubgoalExecution(low, policy, horizon=cfg.horizon, **sched.wrapper_kwargs(),
                           timers={"memory_s": memory.time_s} if hasattr(memory, "time_s") else None)
    if uses_memory:
        from wrappers.memory_wrapper import MemoryWrapper
        from wrappers.recent_frames import RecentFrames

        env = MemoryWrapper(env, memory) if cond.recent_window is None else RecentFrames(env, memory, cond.recent_window)
    if video_path is not None:
        from wrappers.record_episode import RecordEpisode

        env = RecordEpisode(env, video_path)
    composer = build_composer(cfg.composer_for(cond), cfg, low)
    return EpisodeParts(env=env, composer=composer, memory=memory, condition=unit.condition, seed=unit.seed,
                        streams=streams, policy=policy, goal_style=getattr(cfg, "goal_style", "template"))


def run_unit(unit: WorkUnit, cfg) -> EpisodeResult:
    """Play one unit. With ``cfg.video``, the first ``cfg.max_videos`` episodes of every
    (task, condition, seed) are recorded to ``<out>/videos/<condition>/s<seed>/<task>_ep<i>_<outcome>.mp4``."""
    if getattr(cfg, "backend", "robomem") == "robomme":
        from experiments.official_backend import build_official_parts, official_spec

        return run_episode(official_spec(unit), build_official_parts(unit, cfg))
    spec = episode_spec(unit.task, unit.episode, unit.split)
    record = bool(getattr(cfg, "video", False)) and unit.episode < cfg.max_videos
    tmp = Path(cfg.out) / "videos" / f".{unit.task}_{unit.episode}_{unit.condition}_{unit.seed}.mp4" if record else None
    parts = build_parts(unit, cfg, tmp)
    result = run_episode(spec, parts)
    if tmp is not None:
        parts.env.close_video()
        if tmp.exists():
            final = video_path(cfg.out, unit.task, unit.episode, unit.condition, unit.seed, result.success)
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp.replace(final)
    return result

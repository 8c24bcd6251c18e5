"""The render schedule: who gets which frames, and that rendering less changes no outcome.

* The schedule itself (no simulator): the finest stride any active tool needs, capped by
  ``--render-stride``; nothing periodic for the oracle and no-memory conditions; the wrist camera
  only for image policies; the conditioning video only for its readers.
* Rendering never changes the simulation: the same episode with every 5th frame (and each query view) rendered and with
  none rendered takes the same actions and reaches the same states.
* Through the harness (``run_unit``): oracle and no-memory rows are identical at render stride 1
  and 4; a memory episode reports ``memory_s``, per-tool times and exactly the frames it rendered;
  (slow) PickXtimes memory episodes 0-1 have the same outcome at render stride 2 and 4.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import episode_spec
from experiments.loop.config import ExperimentConfig
from experiments.loop.memory_factory import build_memory
from experiments.loop.conditions import condition_from_name
from experiments.loop.records import WorkUnit
from experiments.loop.render_schedule import NO_VIDEO, RenderNeed, render_schedule, tool_need
from memory.contract.frames import Frame
from memory.tools.base import Tool
from policies.composers import OracleComposer
from policies.scripted import ScriptedPolicy
from wrappers.subgoal_execution import SubgoalExecution


def cfg(**kw) -> ExperimentConfig:
    return ExperimentConfig.from_flat(tasks=("PickXtimes",), wandb="disabled", **kw)


def memory_for(name: str = "memory"):
    return build_memory(condition_from_name(name))


class _Tool(Tool):
    def __init__(self, name, **attrs):
        self.name = name
        for k, v in attrs.items():
            setattr(self, k, v)

    def observe(self, frame: Frame, store) -> None:
        pass


# --------------------------------------------------------------------------- the schedule
def test_no_memory_conditions_render_nothing_periodic():
    for stride in (1, 4, 16):
        for composer in ("oracle", "history-blind"):
            s = render_schedule(cfg(render_stride=stride), memory=None, composer=composer)
            assert (s.front_stride, s.early_stride, s.query, s.policy_front, s.policy_wrist, s.video) == (0, 0, False, False, False, False)
            assert s.video_stride == NO_VIDEO


def test_memory_gets_the_finest_tool_stride_capped_by_the_config():
    layer = memory_for()
    assert {t.name for t in layer.tools} >= {"colour_blobs", "scene_layout", "repetition_counter"}
    assert tool_need(next(t for t in layer.tools if t.name == "scene_layout")).until == 8
    assert render_schedule(cfg(render_stride=4), memory=layer).front_stride == 4
    assert render_schedule(cfg(render_stride=2), memory=layer).front_stride == 2
    assert render_schedule(cfg(render_stride=1), memory=layer).front_stride == 1
    # a coarser config does not starve the tools: the counter needs every 4th step
    s = render_schedule(cfg(render_stride=16), memory=layer)
    assert s.front_stride == 4 and s.early_stride == 0  # the layout's early frames are covered
    assert s.query and s.video and not s.policy_front


def test_declared_attributes_win_and_early_windows():
    c = cfg(render_stride=4)
    fine = _Tool("flash", render=RenderNeed(stride=1))
    assert tool_need(fine) == RenderNeed(stride=1)
    assert render_schedule(c, tools=[fine, _Tool("other")]).front_stride == 1
    layout_only = render_schedule(c, tools=[_Tool("layout", render=RenderNeed(stride=4, until=8, video=False))])
    assert (layout_only.front_stride, layout_only.early_stride, layout_only.early_until) == (0, 4, 8)
    assert layout_only.query and not layout_only.video
    none = render_schedule(c, tools=[_Tool("quiet", render=RenderNeed(stride=None, video=False))])
    assert (none.front_stride, none.early_stride, none.video) == (0, 0, False)
    assert tool_need(_Tool("unknown")) == RenderNeed(stride=4)  # the default
    with pytest.raises(ValueError, match="stride"):
        RenderNeed(stride=0)
    # a memory without tools (memory/contract/interface.py) declares the same fields as attributes
    class _OwnMemory:
        render_stride, render_video = 2, False

    assert tool_need(_OwnMemory()) == RenderNeed(stride=2, video=False)
    s = render_schedule(c, memory=_OwnMemory())
    assert (s.front_stride, s.video, s.query) == (2, False, True)


def test_tools_register_themselves_in_loop_order():
    from memory.tools.base import REGISTERED_TOOLS, register_tool
    from memory.tools.registry import default_tools, registered_tools

    orders = [o for o, _, _ in registered_tools()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    names = [t.name for t in default_tools()]
    assert names[:2] == ["colour_blobs", "scene_layout"] and len(names) == len(set(names)) == len(orders)
    with pytest.raises(ValueError, match="two tools registered at order 10"):
        register_tool(order=10)(_Tool)
    with pytest.raises(TypeError, match="decorates Tool subclasses"):
        register_tool(order=99999)(int)
    assert all(cls is not _Tool for _, cls, _ in REGISTERED_TOOLS)


def test_video_rendered_at_the_finest_stride_a_reader_declares():
    c = cfg(render_stride=4)
    coarse, finer = _Tool("places", render=RenderNeed(stride=None, video_stride=4)), _Tool("cover", render=RenderNeed(video_stride=2))
    s = render_schedule(c, tools=[coarse])
    assert (s.video, s.video_every, s.video_stride) == (True, 4, 4)
    assert render_schedule(c, tools=[coarse, finer]).video_stride == 2
    # one reader that declares nothing gets every frame, whoever else reads coarser
    assert render_schedule(c, tools=[coarse, _Tool("route")]).video_stride == 1
    # a tool that reads no video does not pull the stride down
    assert render_schedule(c, tools=[coarse, _Tool("live", render=RenderNeed(video=False))]).video_stride == 4
    # the recorder and the VLM composer watch every frame
    assert render_schedule(c, tools=[coarse], record=True).video_stride == 1
    assert render_schedule(c, tools=[coarse], composer="vlm").video_stride == 1
    assert render_schedule(c, tools=[coarse]).to_dict()["video_every"] == 4
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="video_stride"):
            RenderNeed(video_stride=bad)


def test_video_stride_follows_the_tools_a_goal_enables():
    c = cfg(render_stride=4)
    route, places = _Tool("route"), _Tool("places", render=RenderNeed(stride=None, video_stride=2))

    class _Memory:  # a memory that says which of its tools a goal switches on
        config = None
        tools = (route, places)

        def tools_for(self, goal):
            return [t for t in self.tools if t.name in goal.split()]

    s = render_schedule(c, memory=_Memory())
    assert s.video_stride == 1  # without the goal: the finest reader
    assert s.video_stride_for("places") == 2 and s.video_stride_for("route places") == 1
    assert s.video_stride_for("nothing") == NO_VIDEO  # no enabled reader: the video's physics only
    assert s.env_video_stride == s.video_stride_for
    rec = render_schedule(c, memory=_Memory(), record=True)
    assert rec.video_stride_for("nothing") == 1  # the recorder still watches
    # explicit tools, or a memory that cannot say: the fixed stride
    assert render_schedule(c, tools=[route, places]).env_video_stride == 1


def test_env_asks_the_stride_once_the_goal_is_known():
    from envs import episode_spec, make_env

    asked = []
    env = make_env("VideoRepick", video_stride=lambda goal: asked.append(goal) or 4)
    try:
        _, info = env.reset(options={"episode": episode_spec("VideoRepick", 0, "train")})
        assert asked == [info["goal"]]
        clocks = list(info["video"].clock)
        assert clocks and all(c % 4 == 0 for c in clocks)
        env.video_stride = lambda goal: 0
        with pytest.raises(ValueError, match="video_stride gave 0"):
            env.reset(options={"episode": episode_spec("VideoRepick", 0, "train")})
    finally:
        env.close()


def test_recorder_vlm_and_image_policies():
    c = cfg(render_stride=4)
    rec = render_schedule(c, memory=None, composer="oracle", record=True)
    assert (rec.front_stride, rec.video, rec.query) == (4, True, False)
    vlm = render_schedule(c, memory=None, composer="vlm")
    assert (vlm.front_stride, vlm.query, vlm.video) == (0, True, True)
    pi = render_schedule(c, memory=None, composer="history-blind", policy_images=True)
    assert (pi.policy_front, pi.policy_wrist, pi.front_stride, pi.video) == (True, True, 0, False)
    no_wrist = render_schedule(c, memory=None, policy_images=True, policy_wrist=False)
    assert no_wrist.policy_front and not no_wrist.policy_wrist
    kw = pi.wrapper_kwargs()
    assert kw["policy_needs_images"] and kw["policy_needs_wrist"] and kw["frame_stride"] == 0


def test_disabled_memory_and_no_video_ablation():
    from memory.layer import MemoryConfig, MemoryLayer
    from memory.tools.registry import default_tools

    off = MemoryLayer(MemoryConfig(enabled=False), default_tools())
    s = render_schedule(cfg(), memory=off)
    assert (s.front_stride, s.query, s.video) == (0, False, False)
    novid = MemoryLayer(MemoryConfig(use_video=False), default_tools())
    s = render_schedule(cfg(), memory=novid)
    assert s.front_stride == 4 and s.query and not s.video


# --------------------------------------------------------------------------- the simulator
@pytest.fixture(scope="module")
def short_env():
    from experiments.loop.unit import _low_env

    return _low_env("PickXtimes", 64, False)  # the env the harness tests below reuse (built once)


def _rollout(env, **kw):
    pol = ScriptedPolicy(env)
    pol.reset(3)
    top = SubgoalExecution(env, pol, horizon=16, **kw)
    composer = OracleComposer(env)
    obs, info = top.reset(options={"episode": episode_spec("PickXtimes", 0)})
    composer.reset(info["goal"], 3, [])
    frames, texts = [], []
    while True:
        text = composer.propose(obs, info)
        texts.append(text)
        obs, _, term, trunc, info = top.step(text)
        frames.extend(info["frames"])
        if term or trunc:
            return frames, texts, info, top.timings


def test_rendering_does_not_change_the_simulation(short_env):
    bare, t0, i0, tim0 = _rollout(short_env, frame_stride=0, render_query=False)
    seen, t1, i1, tim1 = _rollout(short_env, frame_stride=5, render_query=True, early_stride=1, early_until=2)
    assert (i0["status"], i0["steps"]) == (i1["status"], i1["steps"]) == ("timeout", 64)
    assert t0 == t1
    np.testing.assert_array_equal(np.stack([f.action for f in bare]), np.stack([f.action for f in seen]))
    np.testing.assert_array_equal(np.stack([f.joint_state for f in bare]), np.stack([f.joint_state for f in seen]))
    assert all(f.rgb is None for f in bare) and tim0["renders"] == 0 and tim0["render_s"] == 0.0
    # frames exactly where the schedule says: clock % 5 == 0, live steps 1-2, and each query's view
    # (PickXtimes has no conditioning video: the clock is the live step; the last frame ends the episode)
    rendered = [f.step for f in seen if f.rgb is not None]
    expected = [f.step for i, f in enumerate(seen[:-1]) if f.step % 5 == 0 or f.step <= 2 or (i + 1) % 16 == 0]
    assert [f.step for f in seen] == list(range(1, 65))
    assert rendered == expected
    assert tim1["renders"] == len(rendered) and tim1["render_s"] > 0
    assert set(tim1) >= {"policy_s", "env_s", "render_s", "reset_s", "renders"}


# --------------------------------------------------------------------------- the harness
def _row(r):
    return (r.status, r.steps, r.n_subgoals, r.subgoals)


def _run(unit, **kw):
    from experiments.loop.unit import run_unit

    return run_unit(unit, cfg(**kw))


def test_oracle_and_no_memory_rows_do_not_depend_on_render_stride(tmp_path):
    for condition in ("oracle", "no-memory"):
        u = WorkUnit("PickXtimes", "test", 0, condition, 7)
        a = _run(u, render_stride=1, out=tmp_path)
        b = _run(u, render_stride=4, out=tmp_path)
        assert a.status in ("success", "fail") and _row(a) == _row(b)
        assert a.timings["renders"] == b.timings["renders"] == 0


def test_memory_timings_and_rendered_frames(tmp_path):
    u = WorkUnit("PickXtimes", "test", 0, "memory", 7)
    r = _run(u, render_stride=4, max_steps=64, out=tmp_path)
    assert r.status == "timeout" and r.steps == 64
    t = r.timings
    assert t["memory_s"] > 0 and t["render_s"] > 0 and t["env_s"] > 0
    # every 4th step is rendered (the chunk ends fall on them: no extra query render); not the last
    assert t["renders"] == 64 // 4 - 1
    tools = r.memory["tool_time_s"]
    assert set(tools) >= {"colour_blobs", "scene_layout", "repetition_counter"}
    assert set(tools["colour_blobs"]) == {"reset_s", "observe_s", "gate_s", "reground_s"}
    assert tools["colour_blobs"]["observe_s"] > 0
    assert sum(r.memory["time_s"].values()) == pytest.approx(t["memory_s"], abs=1e-3)
    # the memory's own CPU (its thread, inside the same entry points) is measured, and cannot
    # exceed the wall clock of those entry points by more than the clocks' resolution
    assert 0 < r.memory["cpu_s"] <= t["memory_s"] + 0.05


@pytest.mark.slow
def test_memory_outcomes_same_at_render_stride_2_and_4(tmp_path):
    for episode in (0, 1):
        u = WorkUnit("PickXtimes", "test", episode, "memory", 7)
        a = _run(u, render_stride=2, out=tmp_path)
        b = _run(u, render_stride=4, out=tmp_path)
        assert a.status == b.status == "success"
        assert _row(a) == _row(b)
        for k in ("reads", "rewrites", "abstentions", "decisions", "matches_oracle"):
            assert a.memory[k] == b.memory[k], k
        assert a.timings["renders"] > 1.8 * b.timings["renders"]

"""The Permanence suite (VideoUnmask, ButtonUnmask, VideoUnmaskSwap, ButtonUnmaskSwap).

Checks the shared container timeline (reveal, cover, swaps), the video handed back by reset,
that the view at decision time does not give the answer away (pixel tests), the subgoal
predicates, history slots and ground truth, seeded determinism and bad input.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import episode_spec, make_env, task_class
from envs.core.animation.container_swaps import BULGE, REVEAL_END, SWAP_START, SWAP_STEPS, lane_pose, rest_poses_after, smoothstep
from envs.core.layouts.scene import Placed
from experiments.loop.oracle_rollout import run_oracle

TASKS = ["VideoUnmask", "ButtonUnmask", "VideoUnmaskSwap", "ButtonUnmaskSwap"]
_ENVS: dict = {}


def env_for(task: str, max_steps: int = 1300, video_stride: int = 1):
    """One env per task for the whole module (building one costs seconds); settings per test."""
    if task not in _ENVS:
        _ENVS[task] = make_env(task)
    env = _ENVS[task]
    env.max_steps, env.video_stride = max_steps, video_stride
    return env


def _layout(task: str, seed: int, difficulty: str):
    cls = task_class(task)
    return cls.sample_layout(cls.__new__(cls), np.random.default_rng(seed), difficulty)


def _cube_pixels(rgb: np.ndarray) -> int:
    r, g, b = (rgb[..., k].astype(int) for k in range(3))
    red = (r > 150) & (g < 50) & (b < 50)
    green = (g > 150) & (r < 100) & (b < 100)
    blue = (b > 120) & (r < 60) & (g < 60)
    return int((red | green | blue).sum())


def _hold(env):
    return np.append(env.unwrapped.qpos()[:7], 1.0).astype(np.float32)


def _advance_to_decision(env, obs, info):
    """Run the oracle until the first container pick is current and grounded (scene at rest)."""
    from policies.scripted import ScriptedPolicy

    t = env.unwrapped
    pol = ScriptedPolicy(env)
    pol.reset(0)
    while not (t.current_entry.option == "pick" and t.clock >= t.settle_clock):
        for a in pol.infer({**obs, "subgoal": env.oracle_subgoal(), "goal": info["goal"]}):
            obs, _, term, trunc, info = env.step(a)
            assert not (term or trunc), info["status"]
            if t.current_entry.option == "pick" and t.clock >= t.settle_clock:
                break
    return obs, info


def _assert_view_hides_the_answer(env, rgb=None):
    """At decision time the cubes are out of sight and the containers are interchangeable."""
    t = env.unwrapped
    view = t.render_front(segmentation=True)
    rgb = view["rgb"] if rgb is None else rgb
    np.testing.assert_array_equal(rgb, view["rgb"])
    for cube in t.hidden_cubes:
        assert (view["segmentation"] == t.seg_id(cube)).sum() == 0, "a hidden cube is in view"
    assert _cube_pixels(rgb) == 0
    visible = [c for c in t.containers if (view["segmentation"] == t.seg_id(c)).sum() > 50]
    assert len(visible) >= 2
    # exchanging any two containers (pose for pose) changes no pixel: they look exactly alike
    a, b = t.containers[0], t.containers[-1]
    pa, pb = a.pose, b.pose
    a.set_pose(pb), b.set_pose(pa)
    np.testing.assert_array_equal(t.render_front()["rgb"], rgb)
    # and so does moving the cubes around under them: the view says nothing of where they are
    cubes = t.hidden_cubes
    poses = [c.pose for c in cubes]
    for c, p in zip(cubes, poses[1:] + poses[:1]):
        c.set_pose(p)
    np.testing.assert_array_equal(t.render_front()["rgb"], rgb)
    a.set_pose(pa), b.set_pose(pb)
    for c, p in zip(cubes, poses):
        c.set_pose(p)


# ---------------------------------------------------------------------- pure pieces
def test_swap_lanes_bulge_to_opposite_sides_and_end_exchanged():
    pa, pb = (0.0, 0.0, 0.1), (0.2, 0.0, 0.5)
    assert lane_pose(pa, pb, 0.0) == pytest.approx(pa)
    assert lane_pose(pa, pb, 1.0) == pytest.approx((0.2, 0.0, 0.5))
    xa, ya, _ = lane_pose(pa, pb, 0.5)
    xb, yb, _ = lane_pose(pb, pa, 0.5)
    assert xa == pytest.approx(0.1) and xb == pytest.approx(0.1)
    # each bulges 0.07 off the line, to opposite sides of it (two lanes)
    assert abs(ya) == pytest.approx(BULGE) and ya == pytest.approx(-yb)
    assert smoothstep(0.25) == pytest.approx(0.15625) and smoothstep(0.5) == 0.5


def test_rest_poses_after_swaps_permute_the_slots():
    cs = [Placed("container", 0.0, 0.0, 0.1), Placed("container", 0.2, 0.0, 1.4), Placed("container", 0.0, 0.3, 0.0)]
    rest = rest_poses_after(cs, ((0, 1), (1, 2)))
    assert [p[:2] for p in rest[1]] == [(0.2, 0.0), (0.0, 0.0), (0.0, 0.3)]
    assert [p[:2] for p in rest[2]] == [(0.2, 0.0), (0.0, 0.3), (0.0, 0.0)]
    # the yaw of a mover turns by less than 45 degrees and ends square with the partner's
    d = rest[1][0][2] - 0.1
    assert abs(d) <= np.pi / 4 and (rest[1][0][2] - 1.4) % (np.pi / 2) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_swap_plan_follows_the_rules(seed):
    L = _layout("VideoUnmaskSwap", 1000 + seed, "hard")
    xy = [np.array([c.x, c.y]) for c in L.containers]
    movers = []
    for s, (a, b) in enumerate(L.swaps):
        assert a != b
        if s < 2:
            assert a < 3 and a not in movers  # a cube container, then another one
        else:
            assert a not in movers
        d = [np.linalg.norm(xy[j] - xy[a]) if j != a else np.inf for j in range(len(xy))]
        assert b == int(np.argmin(d))  # the nearest container when the swap starts
        xy[a], xy[b] = xy[b], xy[a]
        movers.append(a)


@pytest.mark.parametrize("task", TASKS)
def test_layout_is_a_pure_function_of_the_seed_and_follows_the_difficulty(task):
    expected = {
        "VideoUnmask": ({"easy": 3, "medium": 5}, {"easy": {1}, "medium": {1}, "hard": {2}}, None),
        "ButtonUnmask": ({"easy": 3, "medium": 5}, {"easy": {1}, "medium": {1}, "hard": {2}}, None),
        "VideoUnmaskSwap": ({"easy": 3, "medium": 4, "hard": 4}, {"easy": {1, 2}, "medium": {1}, "hard": {2}},
                            {"easy": {1, 2}, "medium": {1, 2}, "hard": {2, 3}}),
        "ButtonUnmaskSwap": ({"easy": 3, "medium": 4, "hard": 4}, {"easy": {1, 2}, "medium": {1}, "hard": {2}},
                             {"easy": {1, 2}, "medium": {1, 2}, "hard": {2, 3}}),
    }[task]
    counts, picks, swaps = expected
    for seed in range(6):
        for diff in ("easy", "medium", "hard"):
            L = _layout(task, seed, diff)
            assert L == _layout(task, seed, diff)
            if diff in counts:
                assert len(L.containers) == counts[diff]
            else:
                assert 3 <= len(L.containers) <= 15
            assert sorted(L.cube_colours) == ["blue", "green", "red"]
            assert len(L.pick_colours) in picks[diff] and len(set(L.pick_colours)) == len(L.pick_colours)
            assert len(L.swaps) in (swaps[diff] if swaps else {0})
            assert len(L.buttons) == {"VideoUnmask": 0, "ButtonUnmask": 1}.get(task, 0 if task.startswith("Video") else 2)
    assert _layout(task, 1, "easy") != _layout(task, 2, "easy")


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("task", TASKS)
def test_unknown_difficulty_is_named(task):
    env = env_for(task)
    with pytest.raises(ValueError, match="'extreme'"):
        env.reset(seed=1, options={"difficulty": "extreme"})


# ---------------------------------------------------------------------- video tasks
def test_video_frames_follow_the_clock_and_cost_no_budget():
    env = env_for("VideoUnmask", max_steps=3)
    obs, info = env.reset(options={"episode": episode_spec("VideoUnmask", 0)})
    v = info["video"]
    assert v.clock == list(range(1, 65)) and len(v.front) == len(v.joint_state) == 64
    assert info["clock"] == 64 and info["steps"] == 0 and env.steps == 0 and info["status"] == "ongoing"
    # the cubes are in view up to step 31, covered from step 32 on
    shown = [_cube_pixels(f) > 60 for f in v.front]
    assert shown == [c < REVEAL_END for c in v.clock]
    np.testing.assert_array_equal(v.front[-1], obs["front_rgb"])  # the last video frame is the current view
    np.testing.assert_allclose(v.joint_state[0], v.joint_state[-1], atol=1e-3)  # the robot held still
    _assert_view_hides_the_answer(env, obs["front_rgb"])
    for _ in range(3):
        obs, _, term, trunc, info = env.step(_hold(env))
    assert trunc and info["status"] == "timeout" and info["steps"] == 3 and info["clock"] == 67


def test_video_swap_frames_and_decision_view():
    spec = episode_spec("VideoUnmaskSwap", 0)
    env = env_for("VideoUnmaskSwap", video_stride=25)
    obs, info = env.reset(options={"episode": spec})
    t = env.unwrapped
    n = SWAP_START + SWAP_STEPS * len(t.layout.swaps)
    assert t.clock == n and info["steps"] == 0
    assert info["video"].clock == list(range(25, n + 1, 25))
    truth = t.truth()
    assert truth["swaps_done"] == len(t.layout.swaps)
    assert truth["covered_by"] == truth["hides"]  # every cube is back under its moved container
    _assert_view_hides_the_answer(env, obs["front_rgb"])


# ---------------------------------------------------------------------- the live timeline
def test_reveal_cover_and_swap_timeline_live():
    env = env_for("ButtonUnmaskSwap")
    spec = episode_spec("ButtonUnmaskSwap", 3)  # hard: 2-3 swaps
    env.reset(options={"episode": spec})
    t = env.unwrapped
    L = t.layout
    assert all(t.is_parked(c) for c in t.containers)
    hold = _hold(env)
    seen_mid = False
    while t.clock < t.settle_clock + 2:
        env.step(hold)
        c = t.clock
        truth = t.truth()
        if c < REVEAL_END:
            assert all(t.is_parked(x) for x in t.containers)
            assert all(v is None for v in truth["covered_by"].values())
            assert all(t.pos(cube)[2] < 0.02 for cube in t.hidden_cubes)  # cubes on the table, in view
        elif c < SWAP_START:
            assert truth["covered_by"] == truth["hides"]
            for i, x in enumerate(L.containers):
                np.testing.assert_allclose(t.pos(t.containers[i])[:2], [x.x, x.y], atol=2e-3)
        elif c < t.settle_clock:
            assert all(t.is_parked(cube) for cube in t.hidden_cubes)
            s = (c - SWAP_START) // SWAP_STEPS
            if (c - SWAP_START) % SWAP_STEPS == SWAP_STEPS // 2:
                a, b = L.swaps[s]
                pa, pb = t.pos(t.containers[a])[:2], t.pos(t.containers[b])[:2]
                assert np.linalg.norm(pa - pb) == pytest.approx(2 * BULGE, abs=2e-3)  # two lanes
                seen_mid = True
        else:
            assert truth["covered_by"] == truth["hides"]
            rest = rest_poses_after(L.containers, L.swaps)[-1]
            for i in range(len(L.containers)):
                np.testing.assert_allclose(t.pos(t.containers[i])[:2], rest[i][:2], atol=2e-3)
    assert seen_mid and truth["swaps_done"] == len(L.swaps)
    assert sorted(truth["slot_of_container"]) == list(range(len(L.containers)))


# ---------------------------------------------------------------------- decisions, slots, failure
def test_button_unmask_decision_view_slot_and_wrong_container():
    from policies.scripted import ScriptedPolicy

    env = env_for("ButtonUnmask")
    obs, info = env.reset(options={"episode": episode_spec("ButtonUnmask", 2)})
    t = env.unwrapped
    assert t.history_slot() is None  # pressing the button does not depend on the past
    obs, info = _advance_to_decision(env, obs, info)
    _assert_view_hides_the_answer(env)
    entry = t.current_entry
    target = t.containers[entry.params["container"]]
    slot = t.history_slot()
    assert slot.name == "which container" and len(slot.alternatives) == len(t.containers)
    pol = ScriptedPolicy(env)
    pol.reset(0)
    resolved = [pol.resolve(text)[1] for text in slot.alternatives]
    assert sum(r is target for r in resolved) == 1 and len({id(r) for r in resolved}) == len(t.containers)
    grounded = env.oracle_subgoal()
    assert grounded.startswith("pick up the container at <") and pol.resolve(grounded)[1] is target
    # acting on a look-alike that hides nothing (or another cube) is a failure
    wrong = next(text for text, r in zip(slot.alternatives, resolved) if r is not target)
    status = "ongoing"
    for _ in range(40):
        for a in pol.infer({**obs, "subgoal": wrong, "goal": info["goal"]}):
            obs, _, term, trunc, info = env.step(a)
            status = info["status"]
            if term or trunc:
                break
        if status != "ongoing":
            break
    assert status == "fail" and "pick up the container" in t.checker.fail_reason


def test_button_unmask_swap_either_button_order():
    env = env_for("ButtonUnmaskSwap")
    obs, info = env.reset(options={"episode": episode_spec("ButtonUnmaskSwap", 0)})
    t = env.unwrapped
    from policies.scripted import ScriptedPolicy

    pol = ScriptedPolicy(env)
    pol.reset(0)
    # press the left-hand button first although the subgoal list grounds the first press on the other
    cap = t.buttons[1]
    text = f"press the first button at {t.point_of(cap)}"
    while t.checker.index == 0:
        for a in pol.infer({**obs, "subgoal": text, "goal": info["goal"]}):
            obs, _, term, trunc, info = env.step(a)
    assert t.first_pressed == 1 and info["status"] == "ongoing"
    # the second press is now grounded on the other button
    assert t.current_entry.target is t.buttons[0]
    second = env.oracle_subgoal()
    assert second.startswith("press the second button at <") and pol.resolve(second)[1] is t.buttons[0]


# ---------------------------------------------------------------------- determinism and the oracle
def test_same_spec_same_scene_and_outcome():
    env = env_for("ButtonUnmask")
    spec = episode_spec("ButtonUnmask", 0)

    def poses():
        t = env.unwrapped
        return np.concatenate([t.pos(a) for a in [*t.containers, *t.hidden_cubes]] + [t.pos_of(t.button)])

    env.reset(options={"episode": spec})
    first, layout = poses(), env.unwrapped.layout
    out1 = run_oracle(env, spec)
    env.reset(options={"episode": spec})
    np.testing.assert_array_equal(first, poses())
    assert env.unwrapped.layout == layout
    out2 = run_oracle(env, spec)
    assert out1.status == "success"
    assert (out1.status, out1.steps, out1.last_subgoal) == (out2.status, out2.steps, out2.last_subgoal)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_oracle_solves_first_episodes(task):
    env = env_for(task, video_stride=16)
    outs = [run_oracle(env, episode_spec(task, i)) for i in range(4)]
    assert [o.status for o in outs] == ["success"] * 4, [(o.status, o.fail_reason, o.solver_failures) for o in outs]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["ButtonUnmaskSwap", "VideoUnmask"])
def test_decision_view_hides_the_answer_on_more_episodes(task):
    env = env_for(task, video_stride=64)
    for i in range(4):
        obs, info = env.reset(options={"episode": episode_spec(task, i)})
        if task.startswith("Button"):
            obs, info = _advance_to_decision(env, obs, info)
        _assert_view_hides_the_answer(env)

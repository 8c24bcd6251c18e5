"""Tests of the Imitation suite: PatternLock, RouteStick, MoveCube, InsertPeg.

The default suite keeps to layout sampling and a few short episodes of the stick tasks (their
videos are short); anything that replays a gripper demonstration more than once is marked slow.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from envs import make_env
from envs.core.layouts.paths import COMPASS, STEP_OF, compass_word, dfs_path, grid_neighbours, random_walk
from envs.episodes import episode_spec
from experiments.loop.oracle_rollout import run_oracle

IMITATION = ("PatternLock", "RouteStick", "MoveCube", "InsertPeg")


def _cls(task):
    from envs import task_class

    return task_class(task)


def _layout(task, episode):
    spec = episode_spec(task, episode)
    cls = _cls(task)
    # a task object that was never reset (no scene): its sampler reads the class defaults, in distribution
    return cls.sample_layout(cls.__new__(cls), np.random.default_rng(spec.env_seed), spec.difficulty)


# ---------------------------------------------------------------------- samplers (cheap)
@pytest.mark.parametrize("task", IMITATION)
def test_layout_is_a_pure_function_of_the_seed(task):
    for ep in range(4):
        assert _layout(task, ep) == _layout(task, ep)
    assert len({repr(_layout(task, ep)) for ep in range(8)}) == 8


def test_pattern_paths_are_simple_8_connected_and_in_range():
    from envs.tasks.pattern_lock import LENGTHS, SIZES

    rng = np.random.default_rng(0)
    for difficulty, n in SIZES.items():
        for _ in range(50):
            path = dfs_path(rng, n, LENGTHS[difficulty])
            lo, hi = LENGTHS[difficulty]
            assert lo <= len(path) <= hi
            assert len(set(path)) == len(path)
            for a, b in zip(path[:-1], path[1:]):
                assert max(abs(a[0] - b[0]), abs(a[1] - b[1])) == 1
                assert all(0 <= v < n for v in b)


def test_compass_words():
    assert compass_word((1, 0)) == "forward"
    assert compass_word((0, 1)) == "left"
    assert compass_word((-1, -1)) == "backward-right"
    assert compass_word((0.1, -0.09)) == "forward-right"
    assert {COMPASS[k] for k in COMPASS} == set(STEP_OF)


def test_random_walk_backtracks_only_at_the_ends_unless_hard():
    rng = np.random.default_rng(1)
    for _ in range(200):
        w = random_walk(rng, 5, 7, backtrack=False)
        assert all(abs(a - b) == 1 for a, b in zip(w[:-1], w[1:]))
        for a, b, c in zip(w[:-2], w[1:-1], w[2:]):
            if a == c:
                assert b in (0, 4)
    walks = [random_walk(rng, 5, 7, backtrack=True) for _ in range(200)]
    assert any(a == c and b not in (0, 4) for w in walks for a, b, c in zip(w[:-2], w[1:-1], w[2:]))


def test_route_stick_walk_lengths_and_senses():
    from envs.tasks.route_stick import STEPS

    for ep in range(12):
        L = _layout("RouteStick", ep)
        lo, hi = STEPS[episode_spec("RouteStick", ep).difficulty]
        assert lo <= len(L.walk) - 1 <= hi
        assert len(L.senses) == len(L.walk) - 1
        assert abs(L.angle) <= np.pi / 6


def test_move_cube_configurations():
    for ep in range(12):
        L = _layout("MoveCube", ep)
        assert L.manner in ("peg_push", "gripper_push", "grasp_putdown")
        for c, half in ((L.first, 0.15), (L.second, 0.10)):
            assert abs(c.goal.x) <= half and abs(c.goal.y) <= half
            assert np.hypot(c.cube.x - c.goal.x, c.cube.y - c.goal.y) >= 0.08
            assert 0.15 <= abs(c.peg.y) <= 0.25 and abs(c.peg.yaw) <= np.pi / 4


def test_insert_peg_layout():
    for ep in range(12):
        L = _layout("InsertPeg", ep)
        assert L.end in ("head", "tail") and L.side in ("left", "right")
        assert abs(L.box_yaw - np.pi / 2) <= np.pi / 9 + 1e-9
        for i, a in enumerate(L.pegs):
            assert abs(a.x) <= 0.2 and abs(a.y) <= 0.3 and abs(a.yaw) <= np.pi / 4
            for b in L.pegs[i + 1:]:
                assert np.hypot(a.x - b.x, a.y - b.y) >= 0.075


def test_unknown_difficulty_is_named():
    env = make_env("PatternLock")
    with pytest.raises(ValueError, match="extreme"):
        env.reset(seed=1, options={"difficulty": "extreme"})


# ---------------------------------------------------------------------- PatternLock episodes
@pytest.fixture(scope="module")
def pattern_env():
    return make_env("PatternLock")


def test_pattern_lock_video_frames_are_the_recorded_phase(pattern_env):
    env = pattern_env
    spec = episode_spec("PatternLock", 0)
    obs, info = env.reset(options={"episode": spec})
    t = env.unwrapped
    video = info["video"]
    n_edges = len(t.layout.path) - 1
    # entries: hidden approach, the edges (recorded), hidden return
    done = t.checker.completed_at
    assert len(done) == n_edges + 2
    assert video.clock == list(range(done[0] + 1, done[n_edges] + 1))
    assert len(video.front) == len(video.clock) == len(video.joint_state)
    assert env.steps == 0 and t.clock == done[-1]
    assert all(f.shape == (256, 256, 3) for f in video.front)
    # the stick starts over the first dot, and no video step counts against the budget
    assert t.touching() == t.path_nodes[0]
    _, _, _, _, info = env.step(t.qpos()[:7])
    assert env.steps == 1 and info["status"] == "ongoing"
    assert obs["front_rgb"].shape == (256, 256, 3)


def test_pattern_lock_decision_view_hides_the_pattern(pattern_env):
    env = pattern_env
    obs, info = env.reset(options={"episode": episode_spec("PatternLock", 3)})
    t = env.unwrapped
    start = t.nodes_xy[t.path_nodes[0]]
    # no red flash anywhere but the start dot, no trail anywhere but over it
    assert t.flash.lit() in ([], [t.path_nodes[0]])
    for born, s in zip(t.trail.born, t.trail.spheres):
        if born >= 0:
            assert np.linalg.norm(t.pos(s)[:2] - start) < 0.02
    img = obs["front_rgb"].astype(int)
    red = (img[..., 0] > 150) & (img[..., 1] < 70) & (img[..., 2] < 70)
    sy, sx = t.project([*start, 0.01])
    ys, xs = np.nonzero(red)
    assert np.all(np.hypot(ys - sy, xs - sx) < 12), "a red dot other than the start is visible"


def test_pattern_lock_slot_and_truth(pattern_env):
    env = pattern_env
    env.reset(options={"episode": episode_spec("PatternLock", 2)})
    t = env.unwrapped
    slot = t.history_slot()
    assert slot is not None and env.oracle_subgoal() in slot.alternatives
    here = t.layout.path[0]
    assert len(slot.alternatives) == len(grid_neighbours(here, t.layout.n)) >= 3
    truth = t.truth()
    assert truth["path"] == [list(c) for c in t.layout.path] and truth["edge"] == 0


def test_pattern_lock_wrong_direction_fails(pattern_env):
    env = pattern_env
    env.reset(options={"episode": episode_spec("PatternLock", 1)})
    t = env.unwrapped
    slot = t.history_slot()
    wrong = next(a for a in slot.alternatives if a != env.oracle_subgoal())
    from policies.scripted import ScriptedPolicy

    pol = ScriptedPolicy(env)
    pol.reset(0)
    obs, info = None, {}
    for _ in range(10):
        for a in pol.infer({"subgoal": wrong}):
            obs, _, term, trunc, info = env.step(a)
            if term or trunc:
                break
        if info.get("status") != "ongoing":
            break
    assert info["status"] == "fail"


def test_pattern_lock_determinism_and_oracle(pattern_env):
    env = pattern_env
    spec = episode_spec("PatternLock", 0)
    outs, poses = [], []
    for _ in range(2):
        out = run_oracle(env, spec)
        outs.append((out.status, out.steps))
        poses.append(np.round(env.unwrapped.tcp(), 5).tolist())
    assert outs[0] == outs[1] and outs[0][0] == "success"
    assert poses[0] == poses[1]


# ---------------------------------------------------------------------- RouteStick
@pytest.fixture(scope="module")
def route_env():
    env = make_env("RouteStick")
    obs, info = env.reset(options={"episode": episode_spec("RouteStick", 0)})
    return env, obs, info


def test_route_stick_video_and_slot(route_env):
    env, obs, info = route_env
    t = env.unwrapped
    assert len(info["video"]) > 0 and env.steps == 0
    slot = t.history_slot()
    assert env.oracle_subgoal() in slot.alternatives
    here = t.layout.walk[0]
    assert len(slot.alternatives) == (2 if here in (0, 4) else 4)
    assert t.touching() == here  # the stick starts over the start target
    # the scene is static: the sticks stand where the layout put them, nothing marks the route
    for k, ob in enumerate(t.obstacles):
        assert np.allclose(t.pos(ob)[:2], t.slot_xy(2 * k + 1), atol=1e-5)
    assert t.truth()["moves"] == [list(m) for m in t.moves]


def test_route_stick_circling_sign(route_env):
    env, _, _ = route_env
    t = env.unwrapped
    a, b = t.nodes_xy[t.layout.walk[0]], t.nodes_xy[t.layout.walk[1]]
    d = (b - a) / np.linalg.norm(b - a)
    left = np.array([-d[1], d[0]])
    s = np.linspace(0, 1, 20)[:, None]
    t.trace = list(a + s * (b - a) + 0.08 * np.sin(np.pi * s) * left)
    assert t.circling_sign(0) > 0  # passing on the left of travel = clockwise
    t.trace = list(a + s * (b - a) - 0.08 * np.sin(np.pi * s) * left)
    assert t.circling_sign(0) < 0
    t.trace = list(a + s * (b - a))
    assert t.circling_sign(0) == 0.0  # straight through the stick: neither sense


# ---------------------------------------------------------------------- MoveCube / InsertPeg
def _move_cube_with(manner):
    """A MoveCube env whose manner is forced: the same configurations, another manner."""
    from envs.tasks.move_cube import MoveCube

    class Forced(MoveCube):
        def sample_layout(self, rng, difficulty):
            return dataclasses.replace(super().sample_layout(rng, difficulty), manner=manner)

    from envs.robomme_env import RoboMMEEnv

    return RoboMMEEnv(Forced())


def test_move_cube_manner_slot_takes_the_peg_by_either_link():
    """MoveCube ood 55 (development range): the memory's pick of the demonstrated tool went to the
    peg's other link, and the audit scored the manner wrong though it was the peg push the video
    showed (every read of five ood episodes "wrong", four of them solved). The two links are one
    colour, and on the ood split's any-yaw pegs the tail is not always the end nearer the robot: the
    slot's decision is the manner, the peg by either link; the cube stays another choice."""
    env = _move_cube_with("peg_push")
    env.reset(options={"episode": episode_spec("MoveCube", 0)})
    t = env.unwrapped
    slot = t.history_slot()
    assert slot is not None and slot.choice_of is not None
    assert slot.choice_of(t.peg_head) == slot.choice_of(t.peg_tail) != slot.choice_of(t.cube)
    env.close()


@pytest.mark.slow
def test_move_cube_decision_view_does_not_show_the_manner():
    spec = episode_spec("MoveCube", 0)
    views = []
    for manner in ("grasp_putdown", "gripper_push"):
        env = _move_cube_with(manner)
        obs, info = env.reset(options={"episode": spec})
        t = env.unwrapped
        assert t.config == 2 and env.steps == 0 and len(info["video"]) > 0
        assert env.oracle_subgoal() in t.history_slot().alternatives
        views.append(obs["front_rgb"].astype(int))
    diff = np.abs(views[0] - views[1]).max(axis=-1)
    assert (diff > 40).mean() < 0.002, "the two manners leave different scenes behind"


@pytest.mark.slow
@pytest.mark.parametrize("task", ["MoveCube", "InsertPeg", "RouteStick"])
def test_determinism_and_oracle(task):
    env = make_env(task)
    spec = episode_spec(task, 0)
    outs = []
    for _ in range(2):
        o = run_oracle(env, spec)
        outs.append((o.status, o.steps, np.round(env.unwrapped.tcp(), 4).tolist()))
    assert outs[0] == outs[1] and outs[0][0] == "success"


@pytest.mark.slow
def test_insert_peg_pegs_look_alike_at_decision_time():
    env = make_env("InsertPeg")
    obs, info = env.reset(options={"episode": episode_spec("InsertPeg", 0)})
    t = env.unwrapped
    for peg, pp in zip(t.pegs, t.layout.pegs):  # back where they started
        head = t.pos(peg.links_map[f"{peg.name}_head"])
        assert np.allclose(head[:2], [pp.x + 0.025 * np.cos(pp.yaw), pp.y + 0.025 * np.sin(pp.yaw)], atol=2e-3)
    seg = t.render_front(segmentation=True)
    colours = []
    for head, _tail in t.ends:
        m = seg["segmentation"] == t.seg_id(head)
        assert m.sum() > 3
        colours.append(seg["rgb"][m].mean(axis=0))
    assert np.ptp(np.array(colours), axis=0).max() < 40
    slot = t.history_slot()
    assert env.oracle_subgoal() in slot.alternatives and len(slot.alternatives) == 6
    assert t.truth()["end"] == t.layout.end


@pytest.mark.slow  # about 90 s of planning and physics on an idle 2-core machine
def test_a_failed_demonstration_stops_soon_after_the_solver_fails():
    """InsertPeg test episode 4 at retry offset 0: the far end is out of reach, the demonstration's
    solver fails, and reset raises naming the entry after a short grace, not at the 3000-step cap."""
    from envs.episodes import EpisodeSpec, base_seed, difficulty_for
    from envs.robomme_env import DEMO_FAILURE_GRACE

    env = make_env("InsertPeg", video_stride=0)
    spec = EpisodeSpec("InsertPeg", "test", 4, base_seed("InsertPeg", "test", 4), difficulty_for(4))
    with pytest.raises(RuntimeError, match="did not complete 'pick up the peg by grasping the far end'"):
        env.reset(options={"episode": spec})
    assert env.unwrapped.clock < 1000 < env.demo_step_cap and DEMO_FAILURE_GRACE == 50
    env.close()

"""The Reference suite: PickHighlight, VideoRepick, VideoPlaceButton, VideoPlaceOrder.

What is checked, per task: the seeded scene is a pure function of the episode; a bad difficulty
is refused by name; the conditioning video is exactly the recorded (non-hidden) steps and costs
no policy step; the view at decision time does not give the answer away (the highlight is gone,
the re-picked cube looks like its siblings, the targets look alike); the history slot offers
every look-alike; the oracle solves the task. The long runs are marked ``slow``.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import make_env
from envs.core.animation.swaps import SWAP_BULGE, lane_point
from envs.core.bases.reference import HIDDEN_RESET_STEPS
from envs.core.easing import smoothstep
from envs.episodes import EpisodeSpec, episode_spec
from policies.scripted import ScriptedPolicy

pytestmark = pytest.mark.timeout(300)

NO_VIDEO = 10**6  # video_stride that records no frame: the physics is the same, rendering is skipped
TASKS = ("PickHighlight", "VideoRepick", "VideoPlaceButton", "VideoPlaceOrder")


@pytest.fixture(scope="module")
def envs_by_task():
    made = {}

    def get(task: str, **kw):
        key = (task, tuple(sorted(kw.items())))
        if key not in made:
            made[key] = make_env(task, video_stride=kw.pop("video_stride", NO_VIDEO), **kw)
        return made[key]

    yield get
    for env in made.values():
        env.close()


def run_until(env, info, obs, stop, policy=None, max_steps=1300):
    """Drive the oracle subgoals through the scripted policy until ``stop(task)`` holds."""
    task = env.unwrapped
    if policy is None:
        policy = ScriptedPolicy(env)
        policy.reset(0)
    while not stop(task):
        chunk = policy.infer({**obs, "subgoal": env.oracle_subgoal(), "goal": info["goal"]})
        for a in chunk:
            obs, _, term, trunc, info = env.step(a)
            if stop(task) or term or trunc:
                return obs, info
        if env.steps >= max_steps:
            break
    return obs, info


def poses(task) -> np.ndarray:
    objs = list(task.cubes) + list(getattr(task, "targets", []))
    return np.stack([np.hstack([o.pose.p[0].numpy(), o.pose.q[0].numpy()]) for o in objs])


def current_option(task):
    e = task.current_entry
    return None if e is None else e.option


def mean_colour(rgb, seg, actor) -> np.ndarray:
    mask = seg == actor.per_scene_id[0].item()
    assert mask.sum() > 5, "object not visible"
    return rgb[mask].reshape(-1, 3).astype(float).mean(0)


# ---------------------------------------------------------------------- shared pieces
def test_lane_points_bulge_to_opposite_sides_and_end_exactly():
    a, b = np.array([0.0, 0.0]), np.array([0.2, 0.0])
    assert np.allclose(lane_point(a, b, 0.0), a) and np.allclose(lane_point(a, b, 1.0), b)
    mid_ab, mid_ba = lane_point(a, b, 0.5), lane_point(b, a, 0.5)
    assert mid_ab[1] == pytest.approx(SWAP_BULGE) and mid_ba[1] == pytest.approx(-SWAP_BULGE)
    assert smoothstep(0) == 0 and smoothstep(1) == 1 and smoothstep(0.5) == pytest.approx(0.5)


@pytest.mark.parametrize("task", TASKS)
def test_layout_is_a_pure_function_of_the_seed(task):
    import importlib

    from envs import TASK_CLASSES

    mod, name = TASK_CLASSES[task].split(":")
    obj = object.__new__(getattr(importlib.import_module(mod), name))
    for diff in ("easy", "medium", "hard"):
        a = obj.sample_layout(np.random.default_rng(7), diff)
        b = obj.sample_layout(np.random.default_rng(7), diff)
        assert a == b


@pytest.mark.parametrize("task", TASKS)
def test_unknown_difficulty_is_refused_by_name(envs_by_task, task):
    env = envs_by_task(task)
    spec = episode_spec(task, 0)
    with pytest.raises(ValueError, match="extreme"):
        env.reset(options={"episode": spec, "difficulty": "extreme"})


# ---------------------------------------------------------------------- PickHighlight
def test_pick_highlight_is_deterministic_and_solved(envs_by_task):
    env = envs_by_task("PickHighlight")
    spec = episode_spec("PickHighlight", 1)  # easy: one highlighted cube
    outcomes = []
    for _ in range(2):
        obs, info = env.reset(options={"episode": spec})
        start = poses(env.unwrapped)
        obs, info = run_until(env, info, obs, lambda t: False)
        outcomes.append((start, poses(env.unwrapped), info["status"], env.steps))
    (s0, e0, st0, n0), (s1, e1, st1, n1) = outcomes
    assert np.array_equal(s0, s1) and np.array_equal(e0, e1) and (st0, n0) == (st1, n1)
    assert st0 == "success"


def test_pick_highlight_view_hides_the_answer_at_decision_time(envs_by_task):
    env = envs_by_task("PickHighlight")
    obs, info = env.reset(options={"episode": episode_spec("PickHighlight", 3)})  # hard: 3 highlighted
    task = env.unwrapped
    disc_ids = {d.per_scene_id[0].item() for d in task.highlights.discs}
    assert not disc_ids & set(np.unique(task.render_front(True)["segmentation"]))  # not before step 10
    # positive control: inside the window the discs are in view
    policy = ScriptedPolicy(env)
    policy.reset(0)
    obs, info = run_until(env, info, obs, lambda t: t.clock >= 20, policy)
    assert disc_ids <= set(np.unique(task.render_front(True)["segmentation"]))
    # the first pick subgoal: the discs are gone, and stay gone for every later pick
    seen = 0
    while seen < len(task.layout.highlighted):
        k = seen + 1
        obs, info = run_until(env, info, obs, lambda t: current_option(t) == "pick" and t.current_entry.params["k"] == k, policy)
        frame = task.render_front(True)
        assert not disc_ids & set(np.unique(frame["segmentation"])), f"highlight visible at pick {k}"
        assert not task.highlights.visible
        slot = task.history_slot()
        assert slot is not None and slot.name == "which cube"
        assert len(slot.alternatives) == len(task.cubes)
        right = task.current_entry.target
        assert task.ground_template(task.current_entry.template, right) in slot.alternatives
        assert task.truth()["current_cube"] in task.layout.highlighted
        seen += 1
        obs, info = run_until(env, info, obs, lambda t: current_option(t) != "pick", policy)
    assert info["status"] == "success"


# ---------------------------------------------------------------------- VideoRepick
def test_video_frames_are_the_recorded_steps_and_cost_no_budget(envs_by_task):
    stride = 4  # every 4th step is rendered (to keep the test short); the rule is the same at 1
    env = envs_by_task("VideoRepick", video_stride=stride, max_steps=5)
    spec = episode_spec("VideoRepick", 3)  # hard: pick, put down, hidden reset (no swaps)
    obs, info = env.reset(options={"episode": spec})
    task, video = env.unwrapped, info["video"]
    hidden = HIDDEN_RESET_STEPS
    shown = range(1, task.clock - hidden + 1)  # the hidden arm reset is the last 30 steps
    assert video.clock == [c for c in shown if c % stride == 0]  # every recorded step, in order
    assert len(video.front) == len(video.clock) == len(video.joint_state)
    assert all(f.shape == (256, 256, 3) and f.dtype == np.uint8 for f in video.front)
    assert env.steps == 0 and info["steps"] == 0 and info["status"] == "ongoing"
    assert not np.array_equal(video.front[0], video.front[len(video) // 2])  # the arm moved
    # the policy's budget starts now
    hold = np.hstack([task.qpos()[:7], 1.0]).astype(np.float32)
    for _ in range(5):
        obs, _, term, trunc, info = env.step(hold)
    assert env.steps == 5 and trunc and info["status"] == "timeout"


def test_video_repick_is_deterministic_and_hides_the_cube(envs_by_task):
    env = envs_by_task("VideoRepick")
    spec = episode_spec("VideoRepick", 2)  # medium: three same-coloured cubes, two or three swaps
    runs = []
    for _ in range(2):
        obs, info = env.reset(options={"episode": spec})
        runs.append((poses(env.unwrapped), env.unwrapped.clock, list(env.unwrapped.swapper.log)))
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1:] == runs[1][1:]
    task = env.unwrapped
    truth = task.truth()
    assert truth["swaps"][0][0] == truth["demonstrated_cube"]  # swap 1 moves the demonstrated cube
    assert len(truth["swaps"]) == len(task.layout.swap_firsts) >= 2
    # the decision: every cube is the same colour and shade; nothing else marks the right one
    frame = task.render_front(True)
    means = np.stack([mean_colour(frame["rgb"], frame["segmentation"], c) for c in task.cubes])
    assert np.abs(means - means.mean(0)).max() < 30, means
    assert len({c.label for c in task.layout.cubes}) == 1
    slot = task.history_slot()
    assert slot.name == "which cube" and len(slot.alternatives) == 3
    assert task.ground_template(task.current_entry.template, task.cube) in slot.alternatives
    # the pick count is asked between picks; while the cube is up, a pick is under way and not asked about
    assert [q.kind for q in task.probe_questions()] == ["count", "binding"]
    here = task.pos(task.cube).copy()
    task.set_xyz(task.cube, here + [0, 0, 0.08])
    assert task.probe_questions() == []
    task.set_xyz(task.cube, here)


# ---------------------------------------------------------------------- VideoPlaceButton / Order
@pytest.mark.parametrize("task_name,episode", [("VideoPlaceButton", 3), ("VideoPlaceOrder", 2)])
def test_targets_look_alike_at_decision_time(envs_by_task, task_name, episode):
    env = envs_by_task(task_name)
    spec = episode_spec(task_name, episode)
    obs, info = env.reset(options={"episode": spec})
    task = env.unwrapped
    first = (poses(task), task.clock)
    env.reset(options={"episode": spec})
    assert np.array_equal(first[0], poses(task)) and first[1] == task.clock
    # after the video the cube sits on bare table, on the hidden spot, off every target
    cube = task.pos(task.cube)[:2]
    assert np.linalg.norm(cube - [task.layout.spot.x, task.layout.spot.y]) < 0.05
    assert all(np.linalg.norm(cube - task.pos(t)[:2]) > 0.06 for t in task.targets)
    if task.layout.swap is not None:  # hard: the swap ran in the video, the targets traded places
        a, b = task.layout.swap
        assert np.allclose(task.pos(task.targets[a])[:2], [task.layout.targets[b].x, task.layout.targets[b].y], atol=1e-4)
    obs, info = run_until(env, info, obs, lambda t: current_option(t) == "place")
    frame = task.render_front(True)
    means = np.stack([mean_colour(frame["rgb"], frame["segmentation"], t) for t in task.targets])
    assert np.abs(means - means.mean(0)).max() < 30, means
    slot = task.history_slot()
    assert slot.name == "which target" and len(slot.alternatives) == len(task.targets)
    right = task.targets[task.truth()["correct_target"]]
    assert task.current_entry.target is right
    assert task.ground_template(task.current_entry.template, right) in slot.alternatives
    assert "correct" in task.current_entry.template


def test_place_order_truth_follows_the_visits(envs_by_task):
    env = envs_by_task("VideoPlaceOrder")
    env.reset(options={"episode": episode_spec("VideoPlaceOrder", 0)})
    task = env.unwrapped
    t = task.truth()
    assert t["correct_target"] == t["visit_order"][t["answer_index"] - 1]
    assert 1 <= t["press_after"] <= len(t["visit_order"]) and 2 <= len(t["visit_order"]) <= 4


# ---------------------------------------------------------------------- the oracle (long)
@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_oracle_solves_an_episode_of_each_difficulty(envs_by_task, task):
    from experiments.loop.oracle_rollout import run_oracle

    env = envs_by_task(task)
    # easy, medium, hard (test episodes 3 and 4 of the place tasks need a retry seed: a cube in
    # a corner the arm cannot reach; see scripts/check_oracle.py over 0:20)
    outcomes = [run_oracle(env, episode_spec(task, i)) for i in (0, 2, 7)]
    assert [o.status for o in outcomes] == ["success"] * 3, [(o.status, o.fail_reason, o.error) for o in outcomes]


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS[1:])
def test_video_task_oracle_outcome_is_deterministic(envs_by_task, task):
    from experiments.loop.oracle_rollout import run_oracle

    env = envs_by_task(task)
    spec = EpisodeSpec(task, "test", 3, episode_spec(task, 3).env_seed, "hard")
    a, b = run_oracle(env, spec), run_oracle(env, spec)
    assert (a.status, a.steps) == (b.status, b.steps)


def test_target_recall_probes_ask_for_the_goal_target_and_the_number_of_places():
    """Shared by VideoPlaceButton and VideoPlaceOrder (``TargetRecallTask.probe_questions``)."""
    task = "VideoPlaceOrder"
    env = make_env(task, video_stride=0)
    env.reset(options={"episode": episode_spec(task, 0)})
    t = env.unwrapped
    binding, count = t.probe_questions()
    assert binding.kind == "binding" and binding.answer == binding.candidates[t.correct_target]
    assert count.kind == "count" and count.answer == len(t.truth()["visit_order"])
    env.close()

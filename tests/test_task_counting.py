"""The Counting tasks SwingXtimes, BinFill and StopCube: sampling, determinism, the oracle,
history slots, failures, and that the current view does not give the count away.

The default suite runs a handful of short episodes (a module-scoped env per task); the 20-episode
oracle check is marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import make_env
from envs.core import solvers as S
from envs.episodes import base_seed, episode_spec
from envs.tasks.bin_fill import COUNT_TABLE, BinFill
from envs.tasks.stop_cube import DECISION_LEAD, MAX_PASSES, StopCube
from envs.tasks.swing_xtimes import FLASH_STEPS, SwingXtimes
from policies.scripted import ScriptedPolicy
from subgoals.grammar import strip_points

pytestmark = pytest.mark.timeout(300)

DIFFICULTIES = ("easy", "medium", "hard")


# ---------------------------------------------------------------------- helpers
@pytest.fixture(scope="module")
def envs_by_task():
    made: dict[str, object] = {}

    def get(task: str):
        if task not in made:
            made[task] = make_env(task)
        return made[task]

    yield get
    for env in made.values():
        env.close()


def layout_of(cls, seed: int, difficulty: str):
    """Call the pure sampler without building a scene."""
    return cls.sample_layout(object.__new__(cls), np.random.default_rng(seed), difficulty)


def poses(task) -> dict[str, list[float]]:
    out = {}
    for name, actor in task.scene.actors.items():
        out[name] = np.round(actor.pose.raw_pose[0].cpu().numpy().astype(float), 6).tolist()
    return out


def rollout(env, spec, on_step=None, on_subgoal=None, horizon: int = 16):
    """The oracle loop of experiments.loop.oracle_rollout, with hooks: ``on_subgoal(task, oracle_text)`` at
    each subgoal change, ``on_step(task)`` after every step."""
    obs, info = env.reset(options={"episode": spec})
    task = env.unwrapped
    policy = ScriptedPolicy(env, horizon=horizon)
    policy.reset(0)
    seen = None
    while True:
        text = env.oracle_subgoal()
        if on_subgoal is not None and task.checker.index != seen:
            seen = task.checker.index
            on_subgoal(task, text)
        for action in policy.infer({**obs, "subgoal": text, "goal": info["goal"]}):
            obs, _, term, trunc, info = env.step(action)
            if on_step is not None:
                on_step(task)
            if term or trunc:
                return info


def seg_pixels(task, actor) -> int:
    seg = task.render_front(segmentation=True)["segmentation"]
    return int((seg == task.seg_id(actor)).sum())


# ---------------------------------------------------------------------- sampling (pure, fast)
@pytest.mark.parametrize("cls", [SwingXtimes, BinFill, StopCube])
def test_layout_is_a_pure_function_of_seed_and_difficulty(cls):
    for i in range(8):
        seed = base_seed(cls.TASK, "test", i)
        for d in DIFFICULTIES:
            assert layout_of(cls, seed, d) == layout_of(cls, seed, d)
    assert layout_of(cls, 1, "hard") != layout_of(cls, 2, "hard")


def test_swing_layout_facts():
    for i in range(50):
        for d in DIFFICULTIES:
            L = layout_of(SwingXtimes, base_seed("SwingXtimes", "test", i), d)
            assert L.right.y < L.left.y
            assert abs(L.right.x + 0.1) <= 0.1 and abs(L.right.y + 0.2) <= 0.1
            assert abs(L.left.x + 0.1) <= 0.1 and abs(L.left.y - 0.2) <= 0.1
            assert len(L.cubes) == (1 if d == "easy" else 3)
            assert L.repeats in {"easy": (1, 2, 3), "medium": (1, 2), "hard": (3,)}[d]


def test_binfill_count_table():
    for i in range(50):
        for d in DIFFICULTIES:
            L = layout_of(BinFill, base_seed("BinFill", "test", i), d)
            n_present, spawn, colours, deposit = COUNT_TABLE[d]
            spawned = {c: sum(1 for p in L.cubes if p.label == c) for c in {p.label for p in L.cubes}}
            targets = dict(L.targets)
            assert len(spawned) == n_present
            assert spawn[0] <= len(L.cubes) <= spawn[1]
            assert colours[0] <= len(targets) <= colours[1] and all(n >= 1 for n in targets.values())
            assert deposit[0] <= sum(targets.values()) <= deposit[1]
            assert all(spawned[c] >= max(targets.get(c, 0), 1) for c in spawned)
            for c in spawned:  # appearance indices within a colour are 0..n-1 in spawn order
                idx = [k for p, k in zip(L.cubes, L.index_in_colour) if p.label == c]
                assert idx == list(range(spawned[c]))
            assert -0.05 - 1e-9 <= L.bin.x <= 0.15 + 1e-9 and abs(L.bin.y) <= 0.2 and abs(L.bin.yaw) <= np.pi / 9


def test_stopcube_timeline_facts():
    for i in range(50):
        L = layout_of(StopCube, base_seed("StopCube", "test", i), "easy")
        assert L.pass_steps in (60, 80, 120) and 2 <= L.stop_time <= 5
        assert abs(L.target.x) <= 0.1 and abs(L.target.y) <= 0.1 and abs(L.angle) <= np.pi / 6
        for j, t in enumerate(L.arrivals, start=1):
            assert t == L.pass_steps * (j - 0.5) and abs(L.offset(t)) < 1e-9
        assert abs(L.offset(0)) == pytest.approx(0.3) and abs(L.offset(10 * L.pass_steps)) == pytest.approx(0.3)
        th = L.thresholds()
        assert th[-1] == L.pass_steps * L.stop_time - L.pass_steps // 2 - DECISION_LEAD
        assert list(th) == sorted(set(th))
        before = L.arrivals[: L.stop_time - 1]
        assert {t - DECISION_LEAD for t in before if t > DECISION_LEAD} <= set(th)
        for m in range(100, th[-1], 100):  # the hundred-marks, except right before an arrival
            assert (m in th) != any(t - DECISION_LEAD < m <= t + 1 for t in before)


# ---------------------------------------------------------------------- env-level basics
@pytest.mark.parametrize("task", ["SwingXtimes", "BinFill", "StopCube"])
def test_unknown_difficulty_is_named(envs_by_task, task):
    env = envs_by_task(task)
    with pytest.raises(ValueError, match="extreme"):
        env.reset(seed=base_seed(task, "test", 0), options={"difficulty": "extreme"})


@pytest.mark.parametrize("task,episode", [("SwingXtimes", 2), ("BinFill", 16), ("StopCube", 12)])
def test_same_spec_twice_is_identical(envs_by_task, task, episode):
    """Same spec -> same object poses at reset, same oracle trajectory and outcome."""
    env = envs_by_task(task)
    spec = episode_spec(task, episode)
    runs = []
    for _ in range(2):
        texts = []
        _, info = env.reset(options={"episode": spec})
        start = poses(env.unwrapped)
        assert len(info["video"]) == 0 and info["steps"] == 0  # no video: nothing counts before step 1
        info = rollout(env, spec, on_subgoal=lambda t, text: texts.append((t.clock, text)))
        runs.append((start, texts, info["status"], env.steps, env.unwrapped.truth(), poses(env.unwrapped)))
    assert runs[0] == runs[1]
    assert runs[0][2] == "success"


# ---------------------------------------------------------------------- SwingXtimes
def test_swing_flash_visible_then_gone_and_slot(envs_by_task):
    """The flash is in the front view for 20 steps, then the targets look as before: at the
    decision (after a left visit) the view does not tell how many round trips were done."""
    env = envs_by_task("SwingXtimes")
    spec = episode_spec("SwingXtimes", 12)  # N = 2 in this episode (checked below)
    checks = {"during": None, "after": None, "base": None}
    slots = []

    def on_step(t):
        if not t.visit_log:
            return
        clock, side = t.visit_log[-1]
        if side == "left" and t.clock == clock + 3 and checks["during"] is None:
            checks["during"] = seg_pixels(t, t.flash_discs["left"])
        if side == "left" and t.clock == clock + FLASH_STEPS + 2 and checks["after"] is None:
            checks["after"] = (seg_pixels(t, t.flash_discs["left"]), seg_pixels(t, t.left))

    def on_subgoal(t, text):
        if checks["base"] is None:
            checks["base"] = seg_pixels(t, t.left)
        slots.append((t.current_entry, text, t.history_slot()))

    info = rollout(env, spec, on_step=on_step, on_subgoal=on_subgoal)
    task = env.unwrapped
    assert info["status"] == "success" and task.layout.repeats == 2
    assert checks["during"] > 20
    flash_after, left_after = checks["after"]
    assert flash_after == 0 and left_after > 0.5 * checks["base"]
    decided = [(e, text, s) for e, text, s in slots if s is not None]
    # right (2nd time) and the put-down follow a left visit; nothing else depends on the past
    assert [e.option for e, _, _ in decided] == ["move_over", "put_down"]
    for _e, text, s in decided:
        assert strip_points(text) in [strip_points(a) for a in s.alternatives]
        assert len(s.alternatives) == 2
    assert task.truth()["visits_right"] == task.truth()["visits_left"] == 2


def test_swing_extra_visit_and_early_press_fail(envs_by_task):
    env = envs_by_task("SwingXtimes")
    env.reset(options={"episode": episode_spec("SwingXtimes", 0)})
    t = env.unwrapped
    assert not t.task_failure()
    t.visits["right"].count = t.layout.repeats + 1
    t.visits["left"].count = t.layout.repeats
    assert t.task_failure()  # more than 2N visits
    env.reset(options={"episode": episode_spec("SwingXtimes", 0)})
    t.button.set_qpos(np.array([[-0.01]]))
    assert t.task_failure()  # pressed during the pick stage


# ---------------------------------------------------------------------- BinFill
def test_binfill_deposit_leaves_no_trace(envs_by_task):
    """A cube dropped into the bin disappears and the bin looks exactly as before."""
    env = envs_by_task("BinFill")
    env.reset(options={"episode": episode_spec("BinFill", 17)})
    t = env.unwrapped
    hold = np.hstack([t.qpos()[:7], 1.0]).astype(np.float32)
    for _ in range(3):
        env.step(hold)
    seg0 = t.render_front(segmentation=True)
    bin_mask = seg0["segmentation"] == t.seg_id(t.bin)
    i = t.visible_cubes()[0]
    colour = t.layout.cubes[i].label
    t.set_xyz(t.cubes[i], [t.layout.bin.x, t.layout.bin.y, 0.09])
    for _ in range(3):
        env.step(hold)
    assert t.counts[colour] == 1 and t.away[i] and t.truth()["deposit_log"][0][1] == colour
    for _ in range(10):
        env.step(hold)
    seg1 = t.render_front(segmentation=True)
    assert not (seg1["segmentation"] == t.seg_id(t.cubes[i])).any()
    diff = np.abs(seg1["rgb"].astype(int) - seg0["rgb"].astype(int))[bin_mask]
    assert diff.max() <= 3


def test_binfill_slots_and_early_press(envs_by_task):
    env = envs_by_task("BinFill")
    spec = episode_spec("BinFill", 10)  # one green and one blue cube to deposit
    slots = []
    info = rollout(env, spec, on_subgoal=lambda t, text: slots.append((t.current_entry, text, t.history_slot())))
    t = env.unwrapped
    assert info["status"] == "success"
    assert t.counts_match()
    first_pick = slots[0]
    assert first_pick[0].option == "pick" and first_pick[2] is None
    for e, text, s in slots[1:]:
        if e.option in ("pick", "press"):
            assert s is not None and strip_points(text) in [strip_points(a) for a in s.alternatives]
            assert any(a.startswith("press the button") for a in s.alternatives)
        else:
            assert s is None
    env.reset(options={"episode": spec})
    t.button.set_qpos(np.array([[-0.01]]))
    assert t.task_failure()


def test_binfill_slot_accepts_holding_still_while_no_owed_cube_has_arrived(envs_by_task):
    """A dynamic episode (train 8: two red cubes, the second arrives at step 50): right after the first
    deposit nothing red is on the table, so no pick is right and holding still is; once the second red
    cube has arrived, only a pick of it is."""
    env = envs_by_task("BinFill")
    env.reset(options={"episode": episode_spec("BinFill", 8, "train")})
    t = env.unwrapped
    assert t.layout.dynamic and t.layout.targets == (("red", 2),)
    hold = np.hstack([t.qpos()[:7], 1.0]).astype(np.float32)
    i = next(i for i in t.visible_cubes() if t.layout.cubes[i].label == "red")
    t.set_xyz(t.cubes[i], [t.layout.bin.x, t.layout.bin.y, 0.09])
    for _ in range(3):
        env.step(hold)
    assert t.counts["red"] == 1 and t.clock < 50
    t.checker.index = 2  # the checker past the first pick and its deposit: "pick up the second red cube"
    slot = t.history_slot()
    assert slot is not None and slot.accepts(("wait", None)) and slot.accepts(None)
    assert not slot.accepts(("press", t.button))
    while t.clock < 50:
        env.step(hold)
    slot = t.history_slot()
    assert not slot.accepts(("wait", None)) and not slot.accepts(None)
    red = next(a for k, a in zip(t.layout.cubes, t.cubes) if k.label == "red" and not t.away[t.cubes.index(a)])
    assert slot.accepts(("pick", slot.choice_of(red)))


# ---------------------------------------------------------------------- StopCube
def test_stopcube_arrivals_look_alike(envs_by_task):
    """With the robot still, the view at the first and at the second arrival is the same image."""
    env = envs_by_task("StopCube")
    env.reset(options={"episode": episode_spec("StopCube", 0)})
    t = env.unwrapped
    hold = np.hstack([t.qpos()[:7], 1.0]).astype(np.float32)
    a1, a2 = t.layout.arrivals[:2]
    frames = {}
    while t.clock < a2:
        env.step(hold)
        if t.clock in (a1, a2):
            frames[t.clock] = env.front_frame().astype(int)
    assert t.cube_distance() < 1e-6
    assert np.abs(frames[a1] - frames[a2]).max() <= 3
    mid = env.front_frame()
    env.step(hold)
    assert np.abs(env.front_frame().astype(int) - mid.astype(int)).max() > 20  # it does move


def test_stopcube_slot_at_press_and_wrong_arrival_fails(envs_by_task):
    env = envs_by_task("StopCube")
    spec = episode_spec("StopCube", 0)  # k = 5 here, mi = 60
    slots = []

    def on_subgoal(t, text):
        i = t.checker.index
        j = t.decided_arrival(i) if t.current_entry.option in ("wait", "press") else None
        slots.append((t.current_entry, text, j, t.history_slot()))

    info = rollout(env, spec, on_subgoal=on_subgoal)
    t = env.unwrapped
    assert info["status"] == "success" and t.stopped_well()
    assert slots[-1][0].option == "press" and slots[-1][2] == t.layout.stop_time
    decisions = [(j, s) for _, _, j, s in slots if j is not None]
    arrivals = [j for j, _ in decisions]
    # one decision per arrival, from the first reachable one up to the k-th
    assert arrivals == list(range(arrivals[0], t.layout.stop_time + 1)) and arrivals[0] <= 2
    for j, s in decisions:
        remaining = MAX_PASSES - j + 1
        assert s.alternatives.count("remain static") == remaining - 1
        assert sum(a.startswith("press the button") for a in s.alternatives) == 1
    # a blind predictor pressing with hazard 1/R at each decision hits the k-th arrival w.p. 1/R_first
    p_hit = np.prod([1 - 1 / (MAX_PASSES - j + 1) for j in arrivals[:-1]]) / (MAX_PASSES - arrivals[-1] + 1)
    assert p_hit == pytest.approx(1 / (MAX_PASSES - arrivals[0] + 1))

    # pressing one arrival early: the cube is on the target, but in the wrong window
    env.reset(options={"episode": spec})
    ex = S.Executor(t)
    motion = t.motion("move_over", t.button, ex)
    for a in motion:
        env.step(a)
    early = t.layout.arrival(t.layout.stop_time - 1)
    while t.clock < early - 25:
        env.step(ex.action())
    ex.sync()
    for a in t.motion("press", t.button, ex):
        _, _, term, _, info = env.step(a)
        if term:
            break
    assert info["status"] == "fail"
    assert t.stop_step is not None and t.stop_distance <= 0.06 and t.stop_step < t.layout.window[0]


# ---------------------------------------------------------------------- the 20-episode oracle
@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("task", ["SwingXtimes", "BinFill", "StopCube"])
def test_oracle_success_rate(task):
    from experiments.loop.oracle_rollout import oracle_success_rate

    outs = oracle_success_rate(task, range(20))
    assert sum(o.status == "success" for o in outs) >= 18, [(o.spec.episode_idx, o.status, o.fail_reason) for o in outs]

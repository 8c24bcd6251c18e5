"""An executor profile on the official envs (policies/official_faults.py): which option is which skill,
which runs a drawn failure asks the planner for, and what each failure does to the planner's actions.

The drawing and the action changes are pure and run everywhere; the episode on the benchmark's own
env (a missed grasp the benchmark's checker does not count) needs the official package and is slow."""

import numpy as np
import pytest

from envs.official.mapping import Command
from policies.official_faults import OPEN, OfficialFaults, nearest_other, official_skill, sibling_choice
from envs.official.install import robomme_available
from policies.executor_profile import ExecutorProfile, FailureRates

AVAILABLE, WHY = robomme_available()

OPTION_TEXTS = {
    "pick up the cube": "grasp", "pick up the container": "grasp", "pick up the peg by grasping one end": "grasp",
    "pick up the highlighted cube": "grasp",
    "put it down": "carry", "put it into the bin": "carry", "put down the container": "carry",
    "insert the peg from the right side": "carry", "hook the cube to the target with the peg": "carry",
    "close gripper and push the cube to the target": "carry", "place the cube onto the target": "carry",
    "drop onto": "carry", "move to the top of the target": "carry", "put the cube on the table": "carry",
    "press the button": "press", "press button to stop the cube": "press", "press the first button": "press",
    "press button": "press",
    "move left": "stick", "move forward": "stick",
    "move to the nearest left target by circling around the stick clockwise": "stick",
    "remain static": None, "move to the top of the button to prepare": None,
}
"""The benchmark's own option texts (its vqa_options) and the skill each exercises."""

PICK_OPTIONS = [{"label": "a", "action": "pick up the cube"}, {"label": "b", "action": "press the button"}]
STICK_OPTIONS = [{"label": c, "action": f"move {d}"} for c, d in zip("abcd", ("left", "right", "forward", "backward"))]


def faults(kind: str, skill: str, seed: int = 3, **extra) -> OfficialFaults:
    f = OfficialFaults(ExecutorProfile("t", {skill: FailureRates(**{kind: 1.0}, **extra)}), "PickXtimes")
    f.reset(seed)
    return f


def no_candidates(label):
    return [], []


def planner_actions(n: int, grip: float = -1.0) -> list[np.ndarray]:
    return [np.array([0.1 * i] * 7 + [grip], dtype=np.float32) for i in range(n)]


@pytest.mark.parametrize("text,skill", sorted(OPTION_TEXTS.items()))
def test_every_benchmark_option_text_has_its_skill(text, skill):
    assert official_skill(text) == skill


def test_a_clean_profile_runs_the_option_once_and_leaves_every_action_alone():
    f = OfficialFaults(ExecutorProfile("clean"), "PickXtimes")
    f.reset(0)
    runs = f.runs("pick up the red cube at <10, 20>", Command("a", (10, 20)), PICK_OPTIONS, no_candidates)
    assert [(r.command.choice, r.command.point, r.perturb) for r in runs] == [("a", (10, 20), None)]
    f.arm(runs[0])
    acts = planner_actions(5)
    assert all(f.action(a) is a for a in acts)
    assert f.executor_events == []


def test_a_missed_grasp_never_closes_the_gripper_and_a_retry_runs_the_pick_again():
    f = faults("miss_retry", "grasp")
    runs = f.runs("pick up the red cube", Command("a", (10, 20)), PICK_OPTIONS, no_candidates)
    assert [r.command.choice for r in runs] == ["a", "a"] and runs[0].perturb.kind == "miss_retry" and runs[1].perturb is None
    f.arm(runs[0])
    assert all(f.action(a)[-1] == OPEN for a in planner_actions(6))
    f.arm(runs[1])
    assert all(f.action(a)[-1] == -1.0 for a in planner_actions(6)), "the retry is the planner's own grasp"
    assert f.executor_events[0]["failure"] == "miss_retry" and f.executor_events[0]["applied"]


def test_a_miss_without_retry_is_one_run_on_air():
    f = faults("miss", "grasp")
    runs = f.runs("pick up the red cube", Command("a", (10, 20)), PICK_OPTIONS, no_candidates)
    assert len(runs) == 1 and runs[0].perturb.kind == "miss"


def test_a_press_is_not_a_grasp_the_failure_follows_the_option_run():
    f = faults("miss", "grasp")
    runs = f.runs("press the button", Command("b", None), PICK_OPTIONS, no_candidates)
    assert runs[0].perturb is None and f.executor_events == []


def test_a_drop_opens_the_gripper_after_its_steps_and_not_before():
    f = faults("drop", "carry")
    opts = [{"label": "a", "action": "place the cube onto the target"}]
    runs = f.runs("place the red cube onto the target", Command("a", (5, 5)), opts, no_candidates)
    after = runs[0].perturb.params["after_steps"]
    f.arm(runs[0])
    grips = [float(f.action(a)[-1]) for a in planner_actions(after + 4)]
    assert grips == [-1.0] * after + [OPEN] * 4


def test_a_stall_holds_the_last_action_before_it_for_the_rest_of_the_option():
    f = faults("stall", "grasp")
    runs = f.runs("pick up the red cube", Command("a", (10, 20)), PICK_OPTIONS, no_candidates)
    after = runs[0].perturb.params["after_steps"]
    f.arm(runs[0])
    acts = planner_actions(after + 5)
    out = [f.action(a) for a in acts]
    assert all(np.array_equal(o, a) for o, a in zip(out[:after], acts[:after]))
    frozen = acts[after - 1] if after else acts[0]
    assert all(np.array_equal(o, frozen) for o in out[after:])


def test_a_late_press_holds_where_the_arm_is_before_the_motion():
    f = faults("late", "press")
    f.arm(None)
    last = planner_actions(1)[0]
    f.action(last)  # the previous option's last action: where the arm is
    runs = f.runs("press the button", Command("b", None), PICK_OPTIONS, no_candidates)
    f.arm(runs[0])
    held = []
    first = planner_actions(3)[2]
    assert f.action(first, hold_steps=lambda a, n: held.append((a.copy(), n))) is first
    assert len(held) == 1 and np.array_equal(held[0][0], last)
    assert held[0][1] == runs[0].perturb.params["shift_steps"] > 0


def test_an_extra_press_runs_the_option_twice_unperturbed():
    f = faults("extra", "press")
    runs = f.runs("press the button", Command("b", None), PICK_OPTIONS, no_candidates)
    assert [(r.command.choice, r.perturb) for r in runs] == [("b", None), ("b", None)]


def test_an_early_press_has_no_equivalent_and_is_recorded_as_not_applied():
    f = faults("early", "press")
    runs = f.runs("press the button", Command("b", None), PICK_OPTIONS, no_candidates)
    assert [(r.command.choice, r.perturb) for r in runs] == [("b", None)]
    assert f.executor_events[0]["failure"] == "early" and f.executor_events[0]["applied"] is False


def test_a_wrong_object_is_the_nearest_other_candidate_within_reach():
    positions = [(0.0, 0.0, 0.02), (0.05, 0.0, 0.02), (0.3, 0.0, 0.02)]
    points = [(100, 100), (100, 120), (100, 200)]
    f = faults("wrong_object", "grasp", near_m=0.08)
    runs = f.runs("pick up the red cube", Command("a", (101, 99)), PICK_OPTIONS, {"a": (positions, points)}.__getitem__)
    assert [(r.command.choice, r.command.point, r.perturb) for r in runs] == [("a", (100, 120), None)]
    assert f.executor_events[0]["point"] == [100, 120] and f.executor_events[0]["applied"]
    # nothing within reach: the planner's own pick, recorded as not applied
    g = faults("wrong_object", "grasp", near_m=0.01)
    runs = g.runs("pick up the red cube", Command("a", (101, 99)), PICK_OPTIONS, {"a": (positions, points)}.__getitem__)
    assert runs[0].command.point == (101, 99) and g.executor_events[0]["applied"] is False
    assert nearest_other((100, 200), positions, points, 0.5) == (100, 120)
    assert nearest_other(None, positions, points, 0.5) is None


def test_candidate_positions_are_asked_for_only_when_a_wrong_object_is_drawn():
    asked = []

    def candidates(label):
        asked.append(label)
        return [], []

    for kind, skill in (("miss", "grasp"), ("extra", "press"), ("stall", "grasp")):
        faults(kind, skill).runs("pick up the red cube", Command("a", (1, 1)), PICK_OPTIONS, candidates)
    assert asked == []
    faults("wrong_object", "grasp", near_m=0.08).runs("pick up the red cube", Command("a", (1, 1)), PICK_OPTIONS, candidates)
    assert asked == ["a"]


def test_a_wrong_turn_is_another_stick_move():
    f = faults("wrong_turn", "stick")
    runs = f.runs("move left", Command("a", None), STICK_OPTIONS, no_candidates)
    assert len(runs) == 1 and runs[0].command.choice in "bcd" and runs[0].perturb is None
    ev = f.executor_events[0]
    assert ev["instead"] == {o["label"]: o["action"] for o in STICK_OPTIONS}[runs[0].command.choice]
    assert sibling_choice("a", PICK_OPTIONS, 0.5) is None, "a pick and a press are not stick moves"


def test_the_same_seed_draws_the_same_failures():
    profile = ExecutorProfile("t", {"grasp": FailureRates(miss=0.3, miss_retry=0.3, stall=0.1)})

    def draws(seed):
        f = OfficialFaults(profile, "PickXtimes")
        f.reset(seed)
        for _ in range(30):
            f.runs("pick up the red cube", Command("a", (1, 1)), PICK_OPTIONS, no_candidates)
        return [(e["failure"], e.get("after_steps")) for e in f.executor_events]

    assert draws(5) == draws(5) and draws(5) != draws(6)


def test_a_planner_crash_after_a_failed_motion_is_the_executors_fail_not_an_error():
    why = "screw->RRT* planning exhausted"
    f = faults("early", "press")
    assert f.crash_status(why) == ("error", why)
    f.runs("press the button", Command("b", None), PICK_OPTIONS, no_candidates)  # drawn, not applied: nothing moved differently
    assert f.crash_status(why) == ("error", why)
    g = faults("drop", "carry")
    g.runs("place the cube", Command("a", (1, 1)), [{"label": "a", "action": "place the cube onto the target"}], no_candidates)
    status, reason = g.crash_status(why)
    assert status == "fail" and why in reason and "executor profile" in reason


def test_torch_actions_keep_their_type():
    torch = pytest.importorskip("torch")
    f = faults("miss", "grasp")
    f.arm(f.runs("pick up the red cube", Command("a", (1, 1)), PICK_OPTIONS, no_candidates)[0])
    a = torch.tensor([[0.0] * 7 + [-1.0]])
    out = f.action(a)
    assert isinstance(out, torch.Tensor) and float(out[0, -1]) == OPEN and float(a[0, -1]) == -1.0


@pytest.mark.slow
@pytest.mark.skipif(not AVAILABLE, reason=f"the official robomme package is not importable ({WHY})")
def test_a_missed_grasp_on_the_official_env_is_not_counted_by_its_checker():
    """PickXtimes train 0 with every grasp missed: the planner's pick runs with the gripper open,
    the fingers end open, and the benchmark's own subgoal stays the pick (~1 min)."""
    from envs.official.env import OfficialSubgoalEnv
    from envs.official.episodes import official_episode_spec

    env = OfficialSubgoalEnv("PickXtimes", split="train")
    env.faults = faults("miss", "grasp", seed=1)
    env.reset(options={"episode": official_episode_spec("PickXtimes", 0, "train")})
    pick = env.oracle_subgoal()
    assert pick.startswith("pick up")
    _, _, _, _, info = env.step(pick)
    assert info["status"] == "ongoing" and info["frames"]
    assert all(float(fr.action[-1]) == OPEN for fr in info["frames"])
    assert min(info["frames"][-1].gripper) > 0.035, "the fingers never closed on the cube"
    assert env.oracle_subgoal().startswith("pick up"), "the benchmark's checker did not count the pick"
    assert [e["failure"] for e in env.faults.executor_events] == ["miss"]
    env.close()

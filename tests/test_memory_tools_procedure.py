"""Procedure memory on frames rendered from the real tasks: the manner reader (MoveCube: tool push,
finger push or grasp-and-place, read from the conditioning video and the arm's joint states) and the
peg reader (InsertPeg: which look-alike bar, which end, which side), their evidence gates, their
subgoal gates, and (slow) whole episodes where memory turns a history-blind failure into a success.

The tools only ever see what the wrapper gives the memory: video frames (rgb + joint state) and live
frames. The truth is read here, outside the memory, to check them.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import episode_spec, make_env
from memory.contract.frames import Frame
from memory.language.spec import specify
from memory.store.memory_store import MemoryStore, StoreKind
from memory.tools.manner_reader import KEY as MANNER_KEY
from memory.tools.manner_reader import MannerReader, panda_tcp, proposal_manner
from memory.tools.peg_reader import BINDING, ENTITY_KEY, TRAJ_KEY, PegReader, to_pixel
from subgoals.grammar import try_parse
from tests.blind_vs_memory import blind_fails_memory_succeeds


def _demo(info) -> list[Frame]:
    v = info["video"]
    return [Frame(step=int(c), rgb=rgb, joint_state=q, source="video") for c, rgb, q in zip(v.clock, v.front, v.joint_state)]


def _live(obs) -> Frame:
    return Frame(step=int(obs["clock"]), rgb=obs["front_rgb"], joint_state=obs["joint_state"])


def _feed(tool, goal: str, frames, live: Frame | None):
    store = MemoryStore()
    tool.reset(specify(goal), store)
    for f in frames:
        tool.observe(f, store)
    if live is not None:
        tool.observe(live, store)
    return store


def _point(text: str):
    sg = try_parse(text)
    assert sg is not None and sg.points, text
    return sg.points[0].y, sg.points[0].x


def _nearest(t, point, objs):
    d = [np.hypot(*(np.array(t.project(t.pos_of(o))) - point)) for o in objs]
    return objs[int(np.argmin(d))]


# --------------------------------------------------------------------------- MoveCube


@pytest.fixture(scope="module")
def move_cube():
    """MoveCube test episode 4: the video hooks the cube onto the target with the peg."""
    env = make_env("MoveCube", video_stride=4)
    obs, info = env.reset(options={"episode": episode_spec("MoveCube", 4)})
    t = env.unwrapped
    out = {"demo": _demo(info), "live": _live(obs), "goal": t.goal_texts()[0], "goal2": t.goal_texts()[1],
           "manner": t.manner, "tail": t.peg_tail, "head": t.peg_head, "cube": t.cube, "task": t,
           "probe": t.probe_questions()}
    yield out
    env.close()


def test_forward_kinematics_matches_the_robot_at_rest(move_cube):
    # the arm's rest pose puts the tool-centre point about 0.52 m over the table, 0.55 m in front of the base
    tcp = panda_tcp(move_cube["live"].joint_state)
    assert abs(tcp[2] - 0.521) < 0.005 and abs(tcp[0] - 0.555) < 0.005 and abs(tcp[1]) < 0.005


def test_manner_is_read_from_the_video_and_verified(move_cube):
    assert move_cube["manner"] == "peg_push"
    tool = MannerReader()
    store = _feed(tool, move_cube["goal"], move_cube["demo"], move_cube["live"])
    assert tool.manner == "tool_push" and tool.grasped_end == "near", tool.diagnostics()
    rec = store.get(MANNER_KEY)
    assert rec is not None and rec.segments == ("pick up the peg by its near end", "hook the cube to the target with the peg")
    # the assessment's question is answered from the snapshot
    q = move_cube["probe"][0]
    snap = store.snapshot(move_cube["live"].step)
    assert any(r.kind == "trajectory" and r.name == q.record and tuple(r.segments) == q.answer for r in snap.records.values())
    assert sum(1 for _ in store.items(StoreKind.TRAJECTORY)) == 1


def test_manner_gate_turns_a_wrong_draw_into_the_demonstrated_first_step(move_cube):
    t = move_cube["task"]
    tool = MannerReader()
    store = _feed(tool, move_cube["goal2"], move_cube["demo"], move_cube["live"])
    for wrong in ("pick up the cube at <100, 100>", "close the gripper and push the cube at <100, 100> to the target at <90, 90>"):
        out = tool.gated(wrong, store)
        assert out is not None and proposal_manner(out) == ("tool_push", True), out
        # grounded on the peg's tail (the end nearer the robot) in the current view
        assert _nearest(t, _point(out), [move_cube["tail"], move_cube["head"], move_cube["cube"]]) is move_cube["tail"]
        assert tool.gated(wrong, store) == out  # latched
    assert tool.gated("pick up the peg at <90, 80>", store) is None
    assert tool.gated("hook the cube at <1, 2> to the target at <3, 4> with the peg", store) is None


def test_manner_evidence_gate_withholds_an_unfinished_demonstration(move_cube):
    demo = move_cube["demo"]
    tool = MannerReader()
    store = _feed(tool, move_cube["goal"], demo[: len(demo) // 2], move_cube["live"])
    assert tool.manner is None and store.get(MANNER_KEY) is None, tool.diagnostics()
    assert tool.gated("pick up the cube at <100, 100>", store) is None  # abstains
    # and without a video at all there is nothing to read
    tool = MannerReader()
    store = _feed(tool, move_cube["goal"], [], move_cube["live"])
    assert store.get(MANNER_KEY) is None and tool.gated("pick up the cube at <100, 100>", store) is None


def test_manner_reader_stays_off_for_other_goals(move_cube):
    tool = MannerReader()
    store = _feed(tool, "pick up the red cube and place it on the target", move_cube["demo"][:20], move_cube["live"])
    assert tool.gated("pick up the cube at <100, 100>", store) is None and store.get(MANNER_KEY) is None


# --------------------------------------------------------------------------- InsertPeg


@pytest.fixture(scope="module")
def insert_peg():
    """InsertPeg test episode 1: the tail (near end) of peg 0, inserted from the right; grey-ish pegs."""
    env = make_env("InsertPeg", video_stride=2)
    obs, info = env.reset(options={"episode": episode_spec("InsertPeg", 1)})
    t = env.unwrapped
    demo = _demo(info)
    out = {"demo": demo, "live": _live(obs), "goal": t.goal_texts()[0], "task": t, "truth": t.truth(),
           "links": [link for ends in t.ends for link in ends], "grasp": t.grasp_link, "probe": t.probe_questions(),
           "mid": Frame(step=int(obs["clock"]) + 1, rgb=demo[len(demo) * 2 // 3].rgb, joint_state=obs["joint_state"])}
    yield out
    env.close()


def test_camera_calibration_projects_the_base_frame(insert_peg):
    t = insert_peg["task"]
    base = t.agent.robot.pose.p[0].cpu().numpy()
    for p in ([0.6, 0.0, 0.0], [0.45, 0.2, 0.01], [0.7, -0.25, 0.05]):
        want = t.project(np.array(p) + base)
        got = to_pixel(p)
        assert np.hypot(want[0] - got[0], want[1] - got[1]) < 0.5


def test_peg_end_and_side_are_read_from_the_video(insert_peg):
    truth = insert_peg["truth"]
    tool = PegReader()
    store = _feed(tool, insert_peg["goal"], insert_peg["demo"], insert_peg["live"])
    assert tool.why == "verified", tool.diagnostics()
    assert tool.end == truth["end_word"] and tool.side == truth["side"]
    t = insert_peg["task"]
    ent = store.get(ENTITY_KEY)
    assert ent.binding == BINDING and ent.readable
    assert _nearest(t, np.array(ent.position, float), insert_peg["links"]) is insert_peg["grasp"]
    assert store.get(TRAJ_KEY).segments == (f"grasp the {truth['end_word']} end", f"insert from the {truth['side']} side")
    from experiments.audit.assessment import answer_from_snapshot

    snap = store.snapshot(insert_peg["live"].step)
    for q in insert_peg["probe"]:
        assert answer_from_snapshot(q, snap) == q.answer, q


def test_peg_gate_fills_the_pick_and_the_side(insert_peg):
    t = insert_peg["task"]
    truth = insert_peg["truth"]
    tool = PegReader()
    store = _feed(tool, insert_peg["goal"], insert_peg["demo"], insert_peg["live"])
    other = "left" if truth["side"] == "right" else "right"
    for link in insert_peg["links"]:
        y, x = (int(v) for v in t.project(t.pos_of(link)))
        out = tool.gated(f"pick up the peg at <{y}, {x}> by grasping the far end", store)
        got = out or f"pick up the peg at <{y}, {x}> by grasping the far end"
        assert _nearest(t, _point(got), insert_peg["links"]) is insert_peg["grasp"], (link.name, out)
        assert f"the {truth['end_word']} end" in got
    assert tool.gated(f"insert the peg from the {other} side", store) == f"insert the peg from the {truth['side']} side"
    assert tool.gated(f"insert the peg from the {truth['side']} side", store) is None


def test_peg_gate_abstains_when_the_bar_is_not_back_in_place(insert_peg):
    tool = PegReader()
    store = _feed(tool, insert_peg["goal"], insert_peg["demo"], insert_peg["mid"])  # "live" view with the bar lifted
    assert store.get(ENTITY_KEY) is not None
    assert tool.gated("pick up the peg at <100, 100> by grasping the far end", store) is None
    assert tool.abstained == 1


def test_peg_evidence_gate_needs_the_accepted_insertion(insert_peg):
    demo = insert_peg["demo"]
    tool = PegReader()
    store = _feed(tool, insert_peg["goal"], demo[: len(demo) * 2 // 3], insert_peg["live"])  # no flash yet
    assert store.get(ENTITY_KEY) is None and store.get(TRAJ_KEY) is None, tool.diagnostics()
    assert tool.gated("insert the peg from the left side", store) is None


# --------------------------------------------------------------------------- whole episodes


@pytest.mark.slow
@pytest.mark.parametrize("task, episode", [("MoveCube", 4), ("InsertPeg", 1)])
def test_memory_turns_a_blind_failure_into_a_success(task, episode):
    outcomes = blind_fails_memory_succeeds(task, episode)
    mem = outcomes["memory"].memory
    # every executed subgoal was the oracle's when it started (the audit re-resolves a fixed point at each
    # decision, so a point on a bar that is being lifted can later resolve to its other end)
    assert mem["rewrites_right"] >= 1 and all(s["right"] for s in outcomes["memory"].subgoals), outcomes["memory"].subgoals
    log = mem["assessment"]["log"]
    assert log and all(x["verdict"] == "right" for x in log), log


# --------------------------------------------------------------------------- ablation switches


@pytest.mark.parametrize("name, group, tool", [("memory-no-manner", "manner", "manner_reader"),
                                               ("memory-no-peg-end-side", "peg_end_side", "peg_reader")])
def test_each_new_state_type_has_its_ablation_switch(name, group, tool):
    from experiments.loop.conditions import condition_from_name
    from experiments.loop.memory_factory import build_memory

    full = build_memory(condition_from_name("memory"))
    ablated = build_memory(condition_from_name(name))
    assert tool in {t.name for t in full.tools} and {t.group for t in full.tools if t.name == tool} == {group}
    assert tool not in {t.name for t in ablated.tools}

"""The route reader on frames rendered from the real tasks: cue routes (PatternLock), arc routes
(RouteStick), the evidence gates on parsing and on progress, the route-slot gate, and (slow) whole
episodes where memory turns a history-blind failure into a success.

Live scenes are arranged through the env's own API (a node's red flash disc switched on); the tool
only ever sees rendered pixels.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import episode_spec, make_env
from memory.contract.frames import Frame
from memory.language.spec import ReadKind, specify
from memory.store.memory_store import MemoryStore
from memory.robot.arm_view import panda_tcp
from memory.tools.route_reader import KEY, NAME, RouteReader, compass_word, find_cues
from tests.blind_vs_memory import blind_fails_memory_succeeds


def _reader(goal: str, video, live_first) -> tuple[RouteReader, MemoryStore]:
    store = MemoryStore()
    tool = RouteReader()
    tool.reset(specify(goal), store)
    for step, rgb, q in video:
        tool.observe(Frame(step=step, rgb=rgb, joint_state=q, source="video"), store)
    tool.observe(Frame(step=live_first[0], rgb=live_first[1], source="live"), store)
    return tool, store


def _near(a, b, tol: float) -> bool:
    return float(np.hypot(a[0] - b[0], a[1] - b[1])) <= tol


# --------------------------------------------------------------------------- PatternLock


@pytest.fixture(scope="module")
def pattern():
    """PatternLock test episode 1 (3 x 3 grid; left, backward-left, backward): video, first live frame,
    and live frames with the next node / a wrong node lit."""
    env = make_env("PatternLock")
    obs, info = env.reset(options={"episode": episode_spec("PatternLock", 1)})
    t = env.unwrapped
    video = list(zip(info["video"].clock, info["video"].front, info["video"].joint_state))
    first = (int(obs["clock"]), obs["front_rgb"] if obs.get("front_rgb") is not None else env.front_frame())
    path = [t.index_of(c) for c in t.layout.path]
    where = {k: t.project([*t.nodes_xy[k], 0.012]) for k in range(len(t.nodes_xy))}
    wrong = next(k for k in range(len(t.nodes_xy)) if k not in path[:2]
                 and max(abs(a - b) for a, b in zip(t.cell_of(k), t.layout.path[0])) == 1)
    lit = {}
    for name, k in (("next", path[1]), ("wrong", wrong)):
        t.flash.flash(k, t.clock)
        lit[name] = env.front_frame()
        t.flash.until[k] = -1
        t.set_xyz(t.flash.discs[k], t.flash.HIDDEN)
    yield {"video": video, "first": first, "lit": lit, "truth": t.truth(), "path": path, "where": where,
           "wrong": wrong, "goal": t.goal_texts()[0], "probes": t.probe_questions()}
    env.close()


def test_compass_words_follow_the_front_camera():
    # image down = forward (+x), image right = left (+y); columns shrink by ROW_OVER_COL
    assert compass_word(20, 0)[0] == "forward"
    assert compass_word(-20, 0)[0] == "backward"
    assert compass_word(0, 25)[0] == "left"
    assert compass_word(0, -25)[0] == "right"
    assert compass_word(20, 26)[0] == "forward-left"
    assert compass_word(-16, -22)[0] == "backward-right"
    assert compass_word(20, 2)[1] < 10


def test_route_goals_permit_route_reads():
    for goal in (
        "watch the video carefully, then use the stick attached to the robot to retrace the same pattern",
        "after watching the video, retrace the demonstrated pattern over the dots with the robot's stick",
        "watch the video carefully, then use the stick attached to the robot to navigate around the sticks on the table, following the same path",
        "after watching the video, steer the robot's stick around the upright sticks along the route you were shown",
    ):
        assert specify(goal).allows(ReadKind.ROUTE_FILL), goal
    assert not specify("pick up the green cube").allows(ReadKind.ROUTE_FILL)


def test_cue_detector_sees_lit_nodes_only(pattern):
    assert find_cues(pattern["video"][0][1]) == []  # nothing is lit before the first move
    cues = find_cues(pattern["first"][1])
    assert len(cues) == 1  # the start node, lit by the hidden return to it
    assert _near(cues[0], pattern["where"][pattern["path"][0]], 4.0)


def test_cue_route_is_parsed_from_the_demonstration(pattern):
    tool, store = _reader(pattern["goal"], pattern["video"], pattern["first"])
    truth = tuple(pattern["truth"]["directions"])
    assert tool.kind == "cue" and tool.verified, tool.reason
    assert tool.segments == truth
    rec = store.get(KEY)
    assert rec.name == NAME and rec.segments == truth and rec.index == 0
    q = pattern["probes"][0]
    assert q.kind == "route" and q.record == NAME and tuple(q.answer) == truth
    for node, k in zip(tool.nodes, pattern["path"]):
        assert _near(node, pattern["where"][k], 4.0)


def _first_touch(video):
    """(demonstration frame index, position) of the first node lit after the start, and the frames it stays lit."""
    start = [c[:2] for c in find_cues(video[0][1])]
    for i, (_, rgb, _) in enumerate(video):
        fresh = [c[:2] for c in find_cues(rgb) if not any(_near(c, s, 7.0) for s in start)]
        if fresh:
            p = fresh[0]
            lit = [j for j in range(i, len(video)) if any(_near(c, p, 7.0) for c in find_cues(video[j][1]))]
            return i, p, lit
    raise AssertionError("no node lit in the demonstration")


def _paint(video, frames, p, patch):
    """``video`` with ``patch`` (an image square) pasted centred on ``p`` in ``frames``."""
    r = patch.shape[0] // 2
    y, x = int(round(p[0])), int(round(p[1]))
    out = []
    for k, (step, rgb, q) in enumerate(video):
        if k in frames:
            rgb = rgb.copy()
            rgb[y - r:y + r + 1, x - r:x + r + 1] = patch
        out.append((step, rgb, q))
    return out


def test_a_lit_node_covered_and_seen_again_still_lit_is_not_a_new_touch(pattern):
    """The arm passing over a node that is still lit hides it for longer than a flicker; seen again,
    it is the same lighting, not a return to it (every move of the route after it stays right)."""
    video = pattern["video"]
    i, p, lit = _first_touch(video)
    # the next node's touch, while this one is still lit: then the arm moving on covers this one
    nxt = next(k for k in range(i + 1, len(video)) if any(not _near(c, p, 7.0) for c in find_cues(video[k][1])))
    covered = set(range(nxt - 3, nxt + 4))  # seven frames: more than the flicker allowance
    assert max(covered) + 1 in lit, "the light stays on long enough to be covered and seen again"
    arm = np.full((17, 17, 3), 150, np.uint8)  # a gray link over it
    tool, _ = _reader(pattern["goal"], _paint(video, covered, p, arm), pattern["first"])
    assert tool.verified, tool.reason
    assert tool.segments == tuple(pattern["truth"]["directions"])


def test_a_node_seen_unlit_and_lit_again_is_a_return(pattern):
    """Lit again after it was seen unlit, a node was touched again: the route returns to it."""
    i, p, lit = _first_touch(pattern["video"])
    video = pattern["video"]
    r = 8
    y, x = int(round(p[0])), int(round(p[1]))
    red = video[lit[0]][1][y - r:y + r + 1, x - r:x + r + 1].copy()
    later = [k for k in range(lit[-1] + 3, len(video))
             if not any(_near(c, p, 7.0) for c in find_cues(video[k][1]))][-8:]  # seen unlit, near the end
    tool, _ = _reader(pattern["goal"], _paint(video, set(later[-4:]), p, red), pattern["first"])
    events = [(r_, c_) for _, r_, c_ in tool._cue_events]
    assert len(events) == len(pattern["truth"]["directions"]) + 1
    assert sum(_near(e, p, 4.0) for e in events) == 2, "the first touch, and the return to it"


def test_gate_fills_the_next_direction_and_leaves_other_subgoals(pattern):
    tool, store = _reader(pattern["goal"], pattern["video"], pattern["first"])
    first = pattern["truth"]["directions"][0]
    assert tool.gated("move backward-right", store) == f"move {first}"
    assert tool.gated(f"move {first}", store) == f"move {first}"
    assert tool.gated("move to the nearest left target by circling around the stick clockwise", store) is None
    assert tool.gated("pick up the cube at <10, 20>", store) is None


def test_progress_advances_on_the_expected_cue_only(pattern):
    dirs = pattern["truth"]["directions"]
    tool, store = _reader(pattern["goal"], pattern["video"], pattern["first"])
    step = pattern["first"][0]
    tool.observe(Frame(step=step + 4, rgb=pattern["first"][1], source="live"), store)
    assert tool.index == 0  # the start node stays lit: no progress
    tool.observe(Frame(step=step + 8, rgb=pattern["lit"]["next"], source="live"), store)
    assert tool.index == 1 and store.get(KEY).index == 1
    assert tool.gated("move forward", store) == f"move {dirs[1]}"

    tool, store = _reader(pattern["goal"], pattern["video"], pattern["first"])
    tool.observe(Frame(step=step + 4, rgb=pattern["lit"]["wrong"], source="live"), store)
    assert not tool.lost  # one sighting is not enough
    tool.observe(Frame(step=step + 8, rgb=pattern["lit"]["wrong"], source="live"), store)
    assert tool.lost and tool.index == 0
    assert tool.gated("move forward", store) is None  # position on the route unknown: abstain


def test_no_lit_start_node_means_no_route(pattern):
    # a first live frame without the start cue: the first segment is unknown, nothing is committed
    tool, store = _reader(pattern["goal"], pattern["video"], (pattern["first"][0], pattern["video"][0][1]))
    assert not tool.verified and store.get(KEY) is None
    assert tool.gated("move forward", store) is None


def test_route_reader_is_idle_without_a_route_goal(pattern):
    tool, store = _reader("pick up the green cube", pattern["video"], pattern["first"])
    assert tool.kind is None and store.get(KEY) is None
    assert tool.gated("move forward", store) is None


# --------------------------------------------------------------------------- RouteStick


@pytest.fixture(scope="module")
def weave():
    """RouteStick test episode 1 (two moves: left clockwise, left counterclockwise)."""
    env = make_env("RouteStick")
    obs, info = env.reset(options={"episode": episode_spec("RouteStick", 1)})
    t = env.unwrapped
    video = list(zip(info["video"].clock, info["video"].front, info["video"].joint_state))
    first = (int(obs["clock"]), obs["front_rgb"] if obs.get("front_rgb") is not None else env.front_frame())
    yield {"video": video, "first": first, "truth": t.truth(), "goal": t.goal_texts()[1], "probes": t.probe_questions()}
    env.close()


def test_arc_route_is_parsed_with_sides_and_senses(weave):
    tool, store = _reader(weave["goal"], weave["video"], weave["first"])
    truth = tuple(f"{side} {sense}" for side, sense in weave["truth"]["moves"])
    assert tool.kind == "arc" and tool.verified, tool.reason
    assert tool.segments == truth
    assert store.get(KEY).segments == truth
    assert tuple(weave["probes"][0].answer) == truth
    side, sense = truth[0].split()
    other = "right" if side == "left" else "left"
    assert (tool.gated(f"move to the nearest {other} target by circling around the stick counterclockwise", store)
            == f"move to the nearest {side} target by circling around the stick {sense}")
    assert tool.gated("move forward", store) is None  # one direction word: not this route's slot shape


def test_arc_progress_follows_the_tip(weave):
    tool, store = _reader(weave["goal"], weave["video"], weave["first"])
    step = weave["first"][0]
    # replay the demonstrated motion as if live: the tip leaves the start and reaches each node in turn
    for k, (_, rgb, q) in enumerate(weave["video"]):
        tool.observe(Frame(step=step + 1 + k, rgb=rgb, joint_state=q, source="live"), store)
    assert tool.index == len(tool.segments)
    assert tool.gated("move to the nearest left target by circling around the stick clockwise", store) is None


@pytest.fixture(scope="module")
def weave_train():
    """RouteStick train episode 1: its video (front frames with joint states) and first live frame."""
    env = make_env("RouteStick")
    obs, info = env.reset(options={"episode": episode_spec("RouteStick", 1, split="train")})
    video = list(zip(info["video"].clock, info["video"].front, info["video"].joint_state))
    first = (int(obs["clock"]), obs["front_rgb"] if obs.get("front_rgb") is not None else env.front_frame())
    yield {"video": video, "first": first, "goal": env.unwrapped.goal_texts()[1]}
    env.close()


def test_arc_arrival_is_read_from_the_joints_not_a_tip_seen_at_the_node(weave_train):
    """A picture with the tip at the next node (a tip found on another part of the arm for a frame
    or two looks the same) is no arrival while the joints put the hand at the start; the hand over
    the demonstrated dwell is."""
    video = weave_train["video"]
    tool, store = _reader(weave_train["goal"], video, weave_train["first"])
    assert tool.kind == "arc" and tool.verified and len(tool.node_xy) == len(tool.nodes), tool.reason
    hand = np.array([panda_tcp(np.asarray(q, float)[:7])[:2] for _, _, q in video])
    at_next = int(np.argmin(np.hypot(*(hand - np.asarray(tool.node_xy[1])).T)))
    start_q = video[0][2]
    step = weave_train["first"][0]
    for k in range(1, 4):  # the next node's picture on consecutive rendered frames, the arm still at the start
        tool.observe(Frame(step=step + k, rgb=video[at_next][1], joint_state=start_q, source="live"), store)
    assert tool.index == 0, tool.advances
    tool.observe(Frame(step=step + 4, rgb=None, joint_state=video[at_next][2], source="live"), store)
    assert tool.index == 1 and tool.diagnostics()["arrival"] == "joints"


# --------------------------------------------------------------------------- whole episodes


@pytest.mark.slow
@pytest.mark.parametrize("task, episode", [("PatternLock", 2), ("RouteStick", 2)])
def test_memory_turns_a_blind_failure_into_a_success(task, episode):
    outcomes = blind_fails_memory_succeeds(task, episode)
    log = outcomes["memory"].memory["assessment"]["log"]
    assert log and all(x["verdict"] == "right" for x in log), log

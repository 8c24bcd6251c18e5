"""Cover binding and cover following (memory/tools/cover_binding.py, cover_tracker.py) on real frames.

The frames are rendered here from the Permanence tasks' envs: the conditioning videos of
VideoUnmask and VideoUnmaskSwap, and a few live frames. The env's truth is used only to check
the memory's answers, never given to the tools.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs import episode_spec, make_env
from memory.contract.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer
from memory.store.records import EntityRecord, EntityStatus, Source
from memory.language.spec import specify
from memory.store.memory_store import MemoryStore
from memory.tools.cover_binding import ContainerAppearance, CoverBindingTool, cover_key, note_key
from memory.tools.cover_tracker import CoverFollowTool, CoverTrack, OpticalFlowCue, lk_displacement, split_motions
from memory.tools.registry import default_tools, make_tool
from subgoals.record_names import cover_binding
from tests.blind_vs_memory import blind_fails_memory_succeeds
from tests.paper_episode import paper_memory_episode

COVER_TOOLS = ("cover_flow", "cover_binding_demo", "cover_follow_demo", "cover_binding_live", "cover_follow_live")


def _tools(names=COVER_TOOLS):
    return [make_tool(n) for n in names]


def _truth_points(task):
    """Projected centre of every container where it rests now (truth, for checking only)."""
    return [np.array(task.project(task.pos_of(c))) for c in task.containers]


def _nearest(points, yx) -> int:
    return int(np.argmin([np.hypot(*(p - np.asarray(yx, float))) for p in points]))


class Rendered:
    """One reset of a video task: goal, video frames, the first live frame and the truth."""

    def __init__(self, task: str, episode: int):
        env = make_env(task, video_stride=1)
        obs, info = env.reset(options={"episode": episode_spec(task, episode)})
        t = env.unwrapped
        self.goal = info["goal"]
        video = info["video"]
        self.frames = [Frame(step=c, rgb=rgb, source="video") for c, rgb in zip(video.clock, video.front)]
        self.live = Frame(step=obs["clock"], rgb=obs["front_rgb"])
        self.truth = t.truth()
        self.points = _truth_points(t)
        self.probes = t.probe_questions()
        env.close()

    def layer(self, groups=None) -> MemoryLayer:
        layer = MemoryLayer(MemoryConfig(tool_groups=groups), _tools())
        layer.reset(self.goal, self.frames)
        layer.observe(self.live)
        return layer


@pytest.fixture(scope="module")
def unmask():
    return Rendered("VideoUnmask", 2)  # medium: five look-alike containers, one cube to find


@pytest.fixture(scope="module")
def swap():
    return Rendered("VideoUnmaskSwap", 0)  # easy, two swaps in the video, two cubes to find


# --------------------------------------------------------------------------- notes and binding


def test_notes_are_colour_verified_then_bound_to_the_container_that_covers_them(unmask):
    layer = unmask.layer()
    spec = layer.spec
    assert spec.bindings, spec
    for binding in spec.bindings:
        phrase = binding.removeprefix(cover_binding(""))
        colour = phrase.split()[0]
        note_hist = layer.store.history(note_key(Source.DEMONSTRATION, phrase))
        statuses = [e.after.status for e in note_hist]
        # candidate at the first sighting, verified on the second, uncertain once covered
        assert statuses[0] is EntityStatus.CANDIDATE and EntityStatus.VERIFIED in statuses
        assert statuses[-1] is EntityStatus.UNCERTAIN
        assert note_hist[0].step < 32 <= note_hist[-1].step
        rec = layer.store.get(cover_key(Source.DEMONSTRATION, phrase))
        assert isinstance(rec, EntityRecord)
        assert (rec.identity, rec.role, rec.binding, rec.status) == ("container", "cover", binding, EntityStatus.VERIFIED)
        assert _nearest(unmask.points, rec.position) == unmask.truth["hides"][colour]
        assert layer.store.history(cover_key(Source.DEMONSTRATION, phrase))[0].step >= 32  # bound only once covered


def test_appearance_is_learned_from_the_frames(unmask):
    tool = CoverBindingTool("video")
    store = MemoryStore()
    tool.reset(specify(unmask.goal), store)
    assert not tool.appearance.learned
    for f in unmask.frames:
        tool.observe(f, store)
    assert tool.appearance.learned and all(0 < v <= 255 for v in tool.appearance.levels)
    mask = tool.appearance.mask(unmask.live.rgb)
    for p in unmask.points:  # every container stands on container pixels...
        assert tool.appearance.coverage(mask, p, 4) > 0.5
    assert mask[200:, :].mean() < 0.01  # ...and the empty table near the camera has none


def test_a_cube_hidden_by_something_that_is_not_a_container_binds_nothing(unmask):
    """The cube vanishes because the table is painted over it (no container there): no binding."""
    tool = CoverBindingTool("video")
    store = MemoryStore()
    tool.reset(specify(unmask.goal), store)
    first = [f for f in unmask.frames if f.step < 32]
    for f in first:
        tool.observe(f, store)
    note = next(iter(tool._notes.values()))
    y, x = (int(round(v)) for v in note.pos)
    img = first[-1].rgb.copy()
    img[y - 8 : y + 9, x - 8 : x + 9] = img[y - 8 : y + 9, x + 30 : x + 47]  # table texture over the cube
    for k in range(6):
        tool.observe(Frame(step=40 + k, rgb=img, source="video"), store)
    assert not any(r.binding for r in store.entities().values())


def test_reground_finds_the_container_and_abstains_on_empty_table(unmask):
    layer = unmask.layer()
    key, rec = next((k, r) for k, r in layer.store.entities().items() if r.binding)
    point = layer._reground(rec, unmask.live)
    assert point is not None and np.hypot(*(np.array(point.as_tuple()) - np.array(rec.position))) <= 8
    far = rec.evolve(position=(235, 20))  # table corner, no container near
    assert layer._reground(far, unmask.live) is None


def test_reground_holds_while_the_container_is_lifted_off_its_cube(unmask):
    """The spot shows the very cube the binding names (its container was lifted): the answer stands."""
    layer = unmask.layer()
    rec = next(r for r in layer.store.entities().values() if r.binding)
    first = layer._reground(rec, unmask.live)
    cubes_in_view = next(f for f in unmask.frames if f.step == 10)  # containers away, cubes on their spots
    assert first is not None and layer._reground(rec, cubes_in_view) == first


def test_a_container_lifted_off_its_cube_is_held_where_it_stood(unmask):
    flow, follow = OpticalFlowCue(), CoverFollowTool("video")
    store = MemoryStore()
    spec = specify(unmask.goal)
    for t in (flow, follow):
        t.reset(spec, store)
    colour = unmask.truth["pick_colours"][0]
    p = unmask.points[unmask.truth["hides"][colour]]
    key = "cover/video/x"
    store.add(key, EntityRecord("container", "cover", (int(p[0]), int(p[1])), cover_binding(f"{colour} cube"),
                                EntityStatus.VERIFIED, Source.DEMONSTRATION), step=1000, reason="test")
    cubes_in_view = next(f.rgb for f in unmask.frames if f.step == 10)
    for step, rgb in enumerate([unmask.live.rgb] * 3 + [cubes_in_view] * 5, start=1001):
        f = Frame(step=step, rgb=rgb, source="video")
        flow.observe(f, store)
        follow.observe(f, store)
    rec = store.get(key)
    assert rec.status is EntityStatus.VERIFIED and follow.diagnostics()["counts"]["lifted"] == 1
    assert np.hypot(rec.position[0] - p[0], rec.position[1] - p[1]) <= 4


def test_structured_access_reads_the_binding(unmask):
    layer = unmask.layer()
    colour = unmask.truth["pick_colours"][0]
    wrong = unmask.points[(unmask.truth["hides"][colour] + 1) % len(unmask.points)]
    proposed = f"pick up the container at <{int(wrong[0])}, {int(wrong[1])}> that hides the {colour} cube"
    rev = layer.revise(proposed, unmask.live)
    assert rev.rewritten and rev.trace is not None and not rev.trace.abstained
    y, x = (int(v) for v in rev.text.split("<")[1].split(">")[0].split(","))
    assert _nearest(unmask.points, (y, x)) == unmask.truth["hides"][colour]


# --------------------------------------------------------------------------- following through swaps


def test_covers_are_followed_through_the_swaps_of_the_video(swap):
    layer = swap.layer()
    assert swap.truth["swaps"], "this episode must swap"
    for colour in swap.truth["pick_colours"]:
        rec = layer.store.get(cover_key(Source.DEMONSTRATION, f"{colour} cube"))
        assert rec is not None and rec.readable
        assert _nearest(swap.points, rec.position) == swap.truth["hides"][colour]
        moved = [e for e in layer.store.history(cover_key(Source.DEMONSTRATION, f"{colour} cube")) if e.op.value == "update"]
        assert moved and all(e.step >= 32 for e in moved)
    diag = layer.diagnostics()["tools"]["cover_follow_demo"]["counts"]
    assert diag["agree"] > 0


def test_without_relation_update_the_binding_stays_where_it_was_made(swap):
    groups = frozenset({"demo_binding", "identity", "live_binding"})  # no demo_relation_update
    layer = swap.layer(groups)
    movers = {a for a, b, _ in swap.truth["swaps"]} | {b for a, b, _ in swap.truth["swaps"]}
    stale = 0
    for colour in ("red", "green", "blue"):
        rec = layer.store.get(cover_key(Source.DEMONSTRATION, f"{colour} cube"))
        if rec is None:
            continue
        assert len(layer.store.history(cover_key(Source.DEMONSTRATION, f"{colour} cube"))) == 1  # never updated
        stale += swap.truth["hides"][colour] in movers and _nearest(swap.points, rec.position) != swap.truth["hides"][colour]
    assert stale >= 1


def test_identity_ablation_follows_by_association_alone(swap):
    layer = swap.layer(frozenset({"demo_binding", "demo_relation_update", "live_binding"}))  # no cover_flow
    diag = layer.diagnostics()["tools"]["cover_follow_demo"]["counts"]
    assert diag["agree"] == 0 and diag["disagree"] == 0 and diag["association_only"] > 0


def test_lucas_kanade_measures_a_known_shift(swap):
    import cv2

    g = cv2.cvtColor(np.ascontiguousarray(swap.live.rgb), cv2.COLOR_RGB2GRAY)
    shifted = np.roll(np.roll(g, 5, axis=0), -3, axis=1)
    app = ContainerAppearance()
    app.learn(swap.live.rgb, swap.points[0])
    ys, xs = np.nonzero(app.mask(swap.live.rgb)[60:200, 40:220])
    pts = np.stack([ys + 60, xs + 40], axis=1)[::7].astype(np.float32)
    d, n = lk_displacement(g, shifted, pts)
    assert n >= 3 and np.allclose(d, [5, -3], atol=0.5)


def test_lost_track_becomes_uncertain_then_reacquired(swap):
    """Hide the containers (paint the empty table of step 10 over the frame), then show them again."""
    flow, follow = OpticalFlowCue(), CoverFollowTool("video")
    store = MemoryStore()
    spec = specify(swap.goal)
    for t in (flow, follow):
        t.reset(spec, store)
    colour = swap.truth["pick_colours"][0]
    p = swap.points[swap.truth["hides"][colour]]
    store.add("cover/video/x", EntityRecord("container", "cover", (int(p[0]), int(p[1])), cover_binding(f"{colour} cube"),
                                             EntityStatus.VERIFIED, Source.DEMONSTRATION), step=1000, reason="test")
    empty = next(f.rgb for f in swap.frames if f.step == 10)
    step = 1000
    for rgb in [swap.live.rgb] * 3 + [empty] * 6 + [swap.live.rgb] * 3:
        step += 1
        f = Frame(step=step, rgb=rgb, source="video")
        flow.observe(f, store)
        follow.observe(f, store)
    statuses = [e.after.status for e in store.history("cover/video/x")]
    assert EntityStatus.UNCERTAIN in statuses
    assert statuses[-1] is EntityStatus.REACQUIRED
    final = store.get("cover/video/x").position
    assert np.hypot(final[0] - p[0], final[1] - p[1]) <= 6
    assert follow.diagnostics()["counts"]["lost"] == 1


# --------------------------------------------------------------------------- wiring


def test_registry_groups_and_render_needs():
    from experiments.loop.render_schedule import tool_need

    tools = {t.name: t for t in default_tools()}
    assert {t: tools[t].group for t in COVER_TOOLS} == {
        "cover_flow": "identity",
        "cover_binding_demo": "demo_binding",
        "cover_follow_demo": "demo_relation_update",
        "cover_binding_live": "live_binding",
        "cover_follow_live": "live_binding",
    }
    assert tool_need(tools["cover_binding_demo"]).video and not tool_need(tools["cover_binding_live"]).video
    assert tool_need(tools["cover_follow_live"]).stride == 4 and tool_need(tools["cover_flow"]).stride is None


def test_probe_questions_ask_where_each_named_cube_is_hidden(unmask, swap):
    for r in (unmask, swap):
        assert [q.record for q in r.probes] == [cover_binding(f"{c} cube") for c in r.truth["pick_colours"]]
        for q in r.probes:
            assert q.kind == "binding" and q.answer in q.candidates and len(q.candidates) == len(r.points)


def test_assessment_answers_the_probes_from_the_snapshot(swap):
    from experiments.audit.assessment import answer_from_snapshot

    layer = swap.layer()
    snap = layer.store.snapshot(swap.live.step)
    assert all(answer_from_snapshot(q, snap) == q.answer for q in swap.probes)


# --------------------------------------------------------------------------- whole episodes


@pytest.mark.slow
@pytest.mark.parametrize("task, episode", [("ButtonUnmaskSwap", 0), ("VideoUnmaskSwap", 1), ("ButtonUnmask", 7)])
def test_memory_turns_a_blind_failure_into_a_success(task, episode):
    outcomes = blind_fails_memory_succeeds(task, episode)
    mem = outcomes["memory"].memory
    assert mem["rewrites_right"] >= 1 and mem["abstentions"] == 0
    assert mem["assessment"]["by_kind"]["binding"]["wrong"] == 0


# --------------------------------------------------------------------------- the arm in front of a container


def _hand_over(yx, z: float = 0.10) -> np.ndarray:
    """Joint angles whose tool-centre point projects onto pixel ``yx`` at height ``z`` (least squares)."""
    from scipy.optimize import least_squares

    from memory.robot.arm_view import panda_tcp, to_pixel

    home = np.array([0.0, np.pi / 8, 0.0, -5 * np.pi / 8, 0.0, 3 * np.pi / 4, np.pi / 4])

    def residual(q):
        p = panda_tcp(q)
        return np.append(np.subtract(to_pixel(p), yx), 100 * (p[2] - z))

    return least_squares(residual, home).x


def test_arm_covers_the_pixels_around_its_hand_only():
    from memory.robot.arm_view import arm_covers, panda_tcp, to_pixel

    q = _hand_over((100, 140), z=0.02)  # the hand down at the table
    assert np.allclose(to_pixel(panda_tcp(q)), (100, 140), atol=0.5)
    assert arm_covers(q, (100, 140), 16, 36) and arm_covers(q, (100, 170), 16, 36)
    assert not arm_covers(q, (100, 170), 16, 16)  # the carried object's reach, not the bare arm's
    assert not arm_covers(q, (100, 190), 16, 36) and not arm_covers(q, (200, 140), 16, 36)
    assert not arm_covers(None, (100, 140), 16, 36)


def test_a_hand_raised_toward_the_camera_covers_more_of_the_image():
    """The radii are footprints at the table's depth. A hand raised over the same pixel is nearer the
    camera and renders wider: on ButtonUnmask ood 53 the raised hand hid a container its skeleton
    passed 33-42 px from, and the follower, seeing the arm's own motion on it, walked the record 15 px
    onto a neighbour."""
    from memory.robot.arm_view import TABLE_DEPTH, arm_covers

    low, raised = _hand_over((100, 140), z=0.02), _hand_over((100, 140), z=0.20)
    assert 0.5 < TABLE_DEPTH < 0.7
    assert not arm_covers(low, (100, 190), 16, 36) and arm_covers(raised, (100, 190), 16, 36)
    assert not arm_covers(low, (100, 165), 16, 16) and arm_covers(raised, (100, 165), 16, 16)
    assert not arm_covers(raised, (230, 140), 16, 36)  # still a footprint, not the whole image


def test_the_hand_pixel_is_where_the_tool_centre_point_projects():
    """The follower asks where the hand is from its own pixel: a demonstration's arm parked high (the
    pose of VideoUnmaskSwap's videos) projects far above the image, though its links, scaled by their
    nearness to the camera, would reach every container."""
    from memory.robot.arm_view import arm_covers, hand_pixel

    y, x = hand_pixel(_hand_over((100, 140), z=0.02))
    assert np.hypot(y - 100, x - 140) <= 0.5
    parked = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, np.pi / 2, np.pi / 4])
    assert hand_pixel(parked)[0] < -200 and arm_covers(parked, (110, 150), 0.0, 108)
    assert hand_pixel(None) is None and hand_pixel([0.0] * 3) is None


@pytest.mark.parametrize("arm", ["carrying", "still"])
def test_a_container_holds_while_the_moving_arm_is_in_front_of_it(unmask, arm):
    """Apparent motion next to the moving hand while it carries something (here: the image shifted
    6 px, as when the container in its grip sweeps past) does not move the track, even with the flow
    cue on; with the arm still, the same pixels do."""
    rec, counts = _follow_shifted_image(unmask, arm)
    p = unmask.points[unmask.truth["hides"][unmask.truth["pick_colours"][0]]]
    if arm == "carrying":
        assert counts["arm_over"] >= 3 and counts["moved_under_arm"] == 0
        assert np.hypot(rec.position[0] - p[0], rec.position[1] - p[1]) <= 2
    else:
        assert counts["arm_over"] == 0 and np.hypot(rec.position[0] - p[0], rec.position[1] - (p[1] + 6)) <= 3


def test_a_container_swapped_under_the_moving_arm_is_followed(unmask):
    """Containers may trade places while the arm travels to a button above them: a lone container of
    the track's size where its own features flowed moves the track, though the arm's skeleton passes
    within reach of it (before, every such frame held, and the record stayed where the container had
    stood)."""
    rec, counts = _follow_shifted_image(unmask, "reaching")
    p = unmask.points[unmask.truth["hides"][unmask.truth["pick_colours"][0]]]
    assert counts["arm_over"] >= 3 and counts["moved_under_arm"] >= 1
    assert np.hypot(rec.position[0] - p[0], rec.position[1] - (p[1] + 6)) <= 3
    assert rec.status is EntityStatus.VERIFIED


def _live_follower(scene):
    """The flow cue and a live cover follower over a fresh store holding one verified live binding:
    the container hiding ``scene``'s first picked cube, at its true point ``p``."""
    flow, follow = OpticalFlowCue(), CoverFollowTool("live")
    store = MemoryStore()
    for t in (flow, follow):
        t.reset(specify(scene.goal), store)
    colour = scene.truth["pick_colours"][0]
    p = scene.points[scene.truth["hides"][colour]]
    key = "cover/live/x"
    store.add(key, EntityRecord("container", "cover", (int(p[0]), int(p[1])), cover_binding(f"{colour} cube"),
                                EntityStatus.VERIFIED, Source.LIVE), step=1000, reason="test")
    return flow, follow, store, key, p


def _follow_shifted_image(scene, arm: str):
    """Two frames of ``scene``'s live view, then three with the image shifted 6 px right, with the flow
    cue on and the arm ``"carrying"`` (moving, fingers closed, hand lifted over the container),
    ``"reaching"`` (moving over it, fingers open) or ``"still"``."""
    flow, follow, store, key, p = _live_follower(scene)
    q = _hand_over(p)
    gripper = -1.0 if arm == "carrying" else 1.0
    shifted = np.ascontiguousarray(np.roll(scene.live.rgb, 6, axis=1))
    for k, rgb in enumerate([scene.live.rgb] * 2 + [shifted] * 3):
        qk = q.copy()
        if arm != "still":
            qk[6] += 0.05 * k  # the wrist turns: the arm moves, its hand stays over the container
        f = Frame(step=1001 + k, rgb=rgb, joint_state=qk, action=np.append(qk, gripper))
        flow.observe(f, store)
        follow.observe(f, store)
    return store.get(key), follow.diagnostics()["counts"]


@pytest.mark.parametrize("offset", [(9.0, 0.0), (0.0, -9.0)])
def test_a_track_left_beside_its_still_container_settles_on_it(unmask, offset):
    """A swap can end with the track a few pixels off its container's centre (on the edge it shares
    with a neighbour). Once everything stands still, flow says "nothing moved" wherever the track
    sits and disagrees with the association on every frame; the lone blob of the container's size
    the association keeps finding is the track's container, and the record is readable again."""
    flow, follow, store, key, p = _live_follower(unmask)
    frames = [Frame(step=1000 + 4 * k, rgb=unmask.live.rgb) for k in range(1, 9)]  # the live stride
    for t in (flow, follow):
        t.observe(frames[0], store)
    start = follow._tracks[key].pos.copy()
    follow._tracks[key].pos = start + np.array(offset)  # where the last swap left it
    for f in frames[1:]:
        flow.observe(f, store)
        follow.observe(f, store)
    statuses = [e.after.status for e in store.history(key)]
    assert EntityStatus.UNCERTAIN in statuses and statuses[-1] is EntityStatus.REACQUIRED
    assert follow.diagnostics()["counts"]["settled"] == 1
    final = store.get(key).position
    assert np.hypot(final[0] - start[0], final[1] - start[1]) <= 1.5


@pytest.mark.slow
def test_a_container_pushed_off_its_record_is_still_the_one_picked(tmp_path):
    """ButtonUnmask train 25 under the ``paper`` preset: the executor's failed grasps push the
    container that hides the blue cube a few centimetres, the view then shows bare table where its
    record stands, and re-grounding fails. Abstaining handed the slot to the blind proposal (another
    container), and the executor turned from one container to the other until the timeout. The
    record's stored position answers instead, and the container nearest it is the one picked."""
    r = paper_memory_episode("ButtonUnmask", "train", 25, tmp_path)
    assert r.memory["abstentions"] == 0 and r.memory["reads_wrong"] == 0, r.memory["abstain_reasons"]
    assert r.status == "success", r.subgoals[-3:]


def _table_with_containers(*boxes) -> np.ndarray:
    """A saturated table with look-alike containers seen from above and in front: ``(y, x, top, front)``
    per box, a top face and a front face at those gray levels (the same box turned or lit a little
    differently renders a few levels apart)."""
    rgb = np.zeros((256, 256, 3), np.uint8)
    rgb[...] = (170, 90, 40)
    for y, x, top, front in boxes:
        rgb[y - 10 : y + 2, x - 10 : x + 11] = top
        rgb[y + 2 : y + 11, x - 10 : x + 11] = front
    return rgb


def test_every_bound_container_teaches_the_follower_its_shades():
    """The follower learned the container palette from the first bound container only. A second
    container rendering other gray levels, touching a neighbour (so no lone blob of its size stands
    there), had no palette pixels to be detected by, was lost, and its track went looking among the
    neighbours (ButtonUnmask ood 71's green cube settled on the container beside it). Each new
    track now adds its own container's shades, and both stay verified in place."""
    rgb = _table_with_containers((90, 60, 231, 151), (90, 170, 226, 148), (90, 191, 231, 151))
    flow, follow = OpticalFlowCue(), CoverFollowTool("live")
    store = MemoryStore()
    for t in (flow, follow):
        t.reset(specify("first press the button, then pick up the container hiding the red cube, "
                        "finally pick up another container hiding the green cube"), store)
    for key, colour, p in (("cover/live/a", "red", (90, 60)), ("cover/live/b", "green", (90, 170))):
        store.add(key, EntityRecord("container", "cover", p, cover_binding(f"{colour} cube"), EntityStatus.VERIFIED,
                                    Source.LIVE), step=36, reason="test")
    for k in range(8):
        f = Frame(step=36 + 4 * k, rgb=rgb)
        flow.observe(f, store)
        follow.observe(f, store)
    assert {151, 231, 148, 226} <= set(follow.appearance.levels)
    counts = follow.diagnostics()["counts"]
    assert counts["lost"] == 0 and counts["missed"] == 0, counts
    for key, p in (("cover/live/a", (90, 60)), ("cover/live/b", (90, 170))):
        rec = store.get(key)
        assert rec.status is EntityStatus.VERIFIED and np.hypot(rec.position[0] - p[0], rec.position[1] - p[1]) <= 3


@pytest.mark.slow
def test_a_container_turned_another_shade_is_followed_among_touching_neighbours(tmp_path):
    """ButtonUnmask ood 71 (development range) under ``paper``: the green cube's container stands in
    a row of touching containers and renders a gray level the first bound container does not have;
    its track was lost and settled on the neighbour, and every read of it was wrong."""
    r = paper_memory_episode("ButtonUnmask", "ood", 71, tmp_path)
    binding = r.memory["assessment"]["by_kind"]["binding"]
    assert binding["wrong"] == 0 and r.memory["reads_wrong"] == 0, binding


@pytest.mark.slow
def test_a_container_behind_the_raised_hand_stays_where_it_stood(tmp_path):
    """ButtonUnmask ood 53 (development range) under ``paper``: the hand, raised near the camera,
    hid the container hiding the blue cube though its skeleton passed 33-42 px away; flow and
    association agreed on the hand's own motion and walked the record onto a neighbour."""
    r = paper_memory_episode("ButtonUnmask", "ood", 53, tmp_path)
    binding = r.memory["assessment"]["by_kind"]["binding"]
    assert binding["wrong"] == 0 and r.memory["reads_wrong"] == 0, binding


def _follow_past_a_gray_bar(moves_first: str | None = None, hand_far: bool = False):
    """A live follower over three look-alike containers in a row (the tracked one on the left), as a
    grayish bar (the arm's colour, not the containers') slides in from the left over the tracked
    container toward its neighbours, the hand working beside it (``hand_far``: parked far away). With ``moves_first``, the tracked container is first seen
    travelling 20 px down and back while the arm stands still far away (``"arm still"``) or moves
    with its hand beside it (``"arm beside"``, what a push looks like). Returns the record and the
    follower's counts."""
    boxes = [(90, 100, 231, 151), (90, 122, 231, 151), (90, 144, 231, 151)]
    flow, follow = OpticalFlowCue(), CoverFollowTool("live")
    store = MemoryStore()
    for t in (flow, follow):
        t.reset(specify("first press the button, then pick up the container hiding the red cube"), store)
    key = "cover/live/a"
    store.add(key, EntityRecord("container", "cover", (90, 100), cover_binding("red cube"), EntityStatus.VERIFIED, Source.LIVE),
              step=36, reason="test")
    q_far = _hand_over((210, 40))
    frames = [(_table_with_containers(*boxes), q_far)] * 2
    if moves_first is not None:
        q_beside = _hand_over((90, 60))
        for dy in (5, 10, 15, 20, 15, 10, 5, 0, 0, 0):  # 5 px per 4-step frame: a swap's pace
            q = q_far if moves_first == "arm still" else q_beside + 0.01 * dy  # a moving arm
            frames.append((_table_with_containers((90 + dy, 100, 231, 151), *boxes[1:]), q))
    q_bar = _hand_over((90, 75))  # the working hand, 25 px beside the container: its links reach no container
    for k in range(8):
        rgb = _table_with_containers(*boxes)
        rgb[70:115, 88 + 3 * k : 102 + 3 * k] = (110, 110, 116)
        frames.append((rgb, q_far if hand_far else q_bar + 0.01 * (k % 2)))
    for k, (rgb, q) in enumerate(frames):
        f = Frame(step=36 + 4 * k, rgb=rgb, joint_state=q)
        flow.observe(f, store)
        follow.observe(f, store)
    return store.get(key), follow.diagnostics()["counts"]


def test_a_gray_bar_sliding_over_a_container_does_not_drag_its_record():
    """ButtonUnmask train 95, seed 11 (development range): the hand worked over the container hiding
    the cube, half hiding it; what was left of the container and the hand's edge flowed together, and
    flow and association agreed on the hand's own motion and walked the record onto the neighbour
    (48 of 70 reads wrong). In a scene where no container has been seen moving on its own, a
    container half hidden by something grayish with the hand close by holds where it stood."""
    rec, counts = _follow_past_a_gray_bar()
    assert counts["held_by_arm"] >= 1 and "scene_moves_at" not in counts, counts
    assert np.hypot(rec.position[0] - 90, rec.position[1] - 100) <= 3, rec.position
    # with the hand far away the gray thing is not the hand: the container follows its flow as before
    _, counts = _follow_past_a_gray_bar(hand_far=True)
    assert counts["held_by_arm"] == 0, counts


@pytest.mark.parametrize("moves_first, learns", [("arm still", True), ("arm beside", False)])
def test_a_container_moving_on_its_own_tells_the_follower_the_scene_moves(moves_first, learns):
    """Containers that swap move while the arm stands still or is far away; a container the arm
    pushes moves beside it. Once a container has been seen moving on its own, a half hidden one may be
    moving too: the follower goes back to following what flows of it."""
    rec, counts = _follow_past_a_gray_bar(moves_first)
    assert ("scene_moves_at" in counts) is learns, counts
    if learns:
        assert counts["held_by_arm"] == 0


@pytest.mark.slow
def test_a_container_half_hidden_by_the_working_hand_keeps_its_record(tmp_path):
    """ButtonUnmask train 95, seed 11 (development range) under ``paper``: the hand worked over the
    container hiding the cube, half hiding it, and flow and association walked the record onto the
    neighbour (48 of 70 reads wrong, a timeout)."""
    r = paper_memory_episode("ButtonUnmask", "train", 95, tmp_path, seed=11)
    binding = r.memory["assessment"]["by_kind"]["binding"]
    assert binding["wrong"] == 0 and r.memory["reads_wrong"] == 0, binding
    assert r.status == "success", r.subgoals[-3:]


@pytest.mark.slow
def test_containers_shading_each_other_in_a_swap_are_followed(tmp_path):
    """VideoUnmaskSwap train 27 under ``paper``: as the video's first swap starts, the two containers
    shade each other (grayish pixels over a container) with the demonstration's arm parked high.
    That is no hand at work: the track follows its container (a hold there lost it, 8 reads wrong)."""
    r = paper_memory_episode("VideoUnmaskSwap", "train", 27, tmp_path)
    assert r.memory["reads_wrong"] == 0 and r.status == "success", r.memory["assessment"]["by_kind"]


def _follow_a_pair_crossing_in_depth():
    """Two look-alike containers of a swap, one behind the other in the image (the rear one's lower
    half hidden by the front one), both followed; the rear one travels right while the front one
    travels left, 4 px per 4-step frame (a swap's pace). Returns each record's last position and
    each container's true centre then, and the follower's counts."""
    flow, follow = OpticalFlowCue(), CoverFollowTool("live")
    store = MemoryStore()
    for t in (flow, follow):
        t.reset(specify("first press both buttons on the table, then pick up the container hiding the red cube, "
                        "finally pick up another container hiding the blue cube"), store)
    rear, front = (78, 100), (95, 100)
    # the records stand where the binder left them: the visible part's centre, the rear one's low
    for key, colour, p in (("cover/live/rear", "red", (84, 100)), ("cover/live/front", "blue", (97, 100))):
        store.add(key, EntityRecord("container", "cover", p, cover_binding(f"{colour} cube"), EntityStatus.VERIFIED,
                                    Source.LIVE), step=36, reason="test")
    for k in range(12):
        dx = 4 * max(0, k - 2)
        rgb = _table_with_containers((rear[0], rear[1] + dx, 231, 151), (front[0], front[1] - dx, 226, 148))
        f = Frame(step=36 + 4 * k, rgb=rgb)
        flow.observe(f, store)
        follow.observe(f, store)
    return ({"rear": store.get("cover/live/rear").position, "front": store.get("cover/live/front").position},
            {"rear": (rear[0], rear[1] + dx), "front": (front[0], front[1] - dx)}, follow.diagnostics()["counts"])


def test_the_rear_container_of_a_pair_crossing_in_depth_keeps_its_own_track():
    """ButtonUnmaskSwap ood 66 (development range) under ``paper``: two containers of a swap overlap
    in the image, the rear one's lower half hidden by the front one, and its track's centre sits near
    the boundary between them. The front one's faces carried the rear track's flow and association
    along with them and the binding walked onto the wrong container (22 of 41 probes wrong). The
    points of the region the two share are split by how they move, and each track follows its own."""
    got, truth, counts = _follow_a_pair_crossing_in_depth()
    assert counts["split"] >= 1, counts
    for name in ("rear", "front"):
        assert abs(got[name][1] - truth[name][1]) <= 6, (name, got, truth)


def test_points_moving_two_ways_are_split_by_where_the_containers_stand():
    rng = np.random.default_rng(0)
    upper = np.column_stack([rng.uniform(70, 80, 12), rng.uniform(90, 110, 12)])
    lower = np.column_stack([rng.uniform(85, 100, 20), rng.uniform(90, 110, 20)])
    points = np.concatenate([upper, lower])
    moves = np.concatenate([np.tile([1.0, 4.0], (12, 1)), np.tile([-1.0, -4.0], (20, 1))]) + rng.normal(0, 0.3, (32, 2))
    # the upper track's anchor sits low, near the boundary: the groups still go by total distance
    groups = split_motions(points, moves, np.array([[84.0, 100.0], [104.0, 100.0]]))
    assert groups is not None and (groups[:12] == 0).all() and (groups[12:] == 1).all()
    # the anchors given the other way round, the labels follow them
    flipped = split_motions(points, moves, np.array([[104.0, 100.0], [84.0, 100.0]]))
    assert (flipped == 1 - groups).all()
    # one motion (within min_gap): nothing to split
    assert split_motions(points, np.tile([1.0, 4.0], (32, 1)) + rng.normal(0, 0.3, (32, 2)), np.array([[84.0, 100.0], [104.0, 100.0]])) is None


@pytest.mark.slow
def test_a_pair_of_containers_crossing_in_depth_keeps_its_bindings(tmp_path):
    """ButtonUnmaskSwap ood 66 (development range) under ``paper``: see the test above on drawn frames."""
    r = paper_memory_episode("ButtonUnmaskSwap", "ood", 66, tmp_path)
    binding = r.memory["assessment"]["by_kind"]["binding"]
    assert binding["wrong"] == 0 and r.memory["reads_wrong"] == 0, binding


def test_of_two_tracks_on_one_container_the_one_that_held_searches_for_its_own():
    """ButtonUnmaskSwap ood 93 (development range) under ``paper``: a swap ran while the arm stood
    over one container of the pair; its track held, the other followed its own container onto that
    spot, and both records named one container (13 of 29 probes wrong). A container hides one cube:
    the track that stood still longer loses the spot, becomes uncertain, and finds the container no
    other track holds; it loses that spot to the same track again if it wanders back."""
    rgb = _table_with_containers((90, 100, 231, 151), (90, 140, 231, 151))
    flow, follow = OpticalFlowCue(), CoverFollowTool("live")
    store = MemoryStore()
    for t in (flow, follow):
        t.reset(specify("first press both buttons on the table, then pick up the container hiding the red cube, "
                        "finally pick up another container hiding the blue cube"), store)
    for key, colour in (("cover/live/moved", "red"), ("cover/live/held", "blue")):
        store.add(key, EntityRecord("container", "cover", (92, 100), cover_binding(f"{colour} cube"), EntityStatus.VERIFIED,
                                    Source.LIVE), step=36, reason="test")
    # the follower's state as the swap left it: one track followed its container here, the other held here for 8 frames
    follow._tracks = {"cover/live/moved": CoverTrack("cover/live/moved", np.array([92.0, 100.0]), 32, still=0),
                      "cover/live/held": CoverTrack("cover/live/held", np.array([92.0, 101.0]), 32, still=8)}
    statuses = []
    for k in range(8):
        f = Frame(step=36 + 4 * k, rgb=rgb)
        flow.observe(f, store)
        follow.observe(f, store)
        statuses.append(store.get("cover/live/held").status)
    assert follow.diagnostics()["counts"]["collided"] == 1
    assert statuses[0] is EntityStatus.UNCERTAIN and statuses[-1] is EntityStatus.REACQUIRED, statuses
    held, moved = store.get("cover/live/held").position, store.get("cover/live/moved").position
    assert abs(held[1] - 140) <= 3 and abs(moved[1] - 100) <= 3, (held, moved)
    assert store.get("cover/live/moved").status is EntityStatus.VERIFIED


@pytest.mark.slow
def test_a_swap_the_arm_hid_leaves_no_two_bindings_on_one_container(tmp_path):
    """ButtonUnmaskSwap ood 93 (development range) under ``paper``: see the test above on drawn frames.
    Until the two tracks meet, the held one is wrong and nothing in view says so (4 of 32 probes,
    13 of 29 before); from then on it is uncertain, then right, and no read goes wrong."""
    r = paper_memory_episode("ButtonUnmaskSwap", "ood", 93, tmp_path)
    binding = r.memory["assessment"]["by_kind"]["binding"]
    assert r.memory["reads_wrong"] == 0 and binding["wrong"] <= 4, binding
    assert r.status == "success", r.subgoals[-3:]

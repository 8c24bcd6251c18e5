"""The shared event detectors (memory.events), the blob tracker and the count gate, on synthetic
frames and signals: each test fixes what one detector must and must not report."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from memory.control.count_gate import CountGate, CountGates
from memory.events import (
    GRIPPER_LIVE,
    DescentConfig,
    Detector,
    DetectorConfig,
    Event,
    EventHub,
    FlashConfig,
    GripperConfig,
    PassConfig,
    events_for,
    find_flashes,
)
from memory.events import descent as descent_module
from memory.events import dwell as dwell_module
from memory.events import press as press_module
from memory.events import DwellConfig, PressConfig
from memory.events.tracking import BlobTrack, TrackConfig
from memory.contract.frames import Frame
from memory.perception.blobs import Blob
from memory.store.memory_store import MemoryStore

OPEN, CLOSED = 1.0, -1.0
TABLE = (150, 110, 70)  # the wooden table: orange, saturation about 0.53


def _grip(step: int, command: float | None, source: str = "live") -> Frame:
    action = None if command is None else np.append(np.zeros(7), command)
    return Frame(step=step, action=action, source=source)


def _kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


# --------------------------------------------------------------------------- hub


@dataclass(frozen=True)
class _CountingConfig(DetectorConfig):
    name: str = "x"


class _Counting(Detector):
    calls = 0

    def reset(self) -> None:
        self.seen: list[int] = []

    def update(self, frame: Frame) -> list[Event]:
        type(self).calls += 1
        self.seen.append(frame.step)
        return [Event("grasp", frame.step, frame.source)]


_CountingConfig.detector = _Counting


def test_hub_feeds_each_detector_once_per_frame_and_shares_equal_configs():
    hub = EventHub()
    a = hub.attach(_CountingConfig("x"))
    assert hub.attach(_CountingConfig("x")) is a  # equal thresholds: one detector
    b = hub.attach(_CountingConfig("y"))
    assert b is not a
    _Counting.calls = 0
    f = Frame(step=3)
    hub.update(f)  # the layer feeds first
    first = hub.events(f, _CountingConfig("x"))  # then two readers ask for the same frame
    second = hub.events(f, _CountingConfig("x"))
    assert first is second and _kinds(first) == ["grasp"]
    assert _Counting.calls == 2 and a.seen == [3] and b.seen == [3]
    hub.events(Frame(step=4), _CountingConfig("x"))  # no layer: the first reader feeds the frame
    assert a.seen == [3, 4] and b.seen == [3, 4]
    assert {"detector": "_Counting", "name": "y"} in hub.configs()
    a.seen.append(99)
    assert hub.attach(_CountingConfig("x")) is a and a.seen == []  # a new episode starts it afresh
    hub.reset()
    assert hub.detector(_CountingConfig("x")) is not a


def test_events_for_is_one_hub_per_store():
    s1, s2 = MemoryStore(), MemoryStore()
    assert events_for(s1) is events_for(s1)
    assert events_for(s1) is not events_for(s2)


# --------------------------------------------------------------------------- gripper


def test_gripper_edges_grasp_and_release_live_only():
    hub = EventHub()
    det = hub.attach(GRIPPER_LIVE)
    seq = [(0, OPEN, "video"), (1, CLOSED, "video"), (2, OPEN, "live"), (3, CLOSED, "live"), (4, None, "live"),
           (5, CLOSED, "live"), (6, OPEN, "live"), (7, OPEN, "live")]
    out = {}
    for step, command, source in seq:
        out[step] = _kinds(hub.events(_grip(step, command, source), GRIPPER_LIVE))
    # the video's grasp is not a live edge, and the live gripper starts open
    assert out == {0: [], 1: [], 2: [], 3: ["grasp"], 4: [], 5: [], 6: ["release"], 7: []}
    assert det.closed is False


def test_gripper_without_a_gripper_column_keeps_its_state():
    hub = EventHub()
    det = hub.attach(GripperConfig("live"))
    hub.update(_grip(0, CLOSED))
    stick = Frame(step=1, action=np.zeros(7))  # the stick robot: no gripper column
    assert hub.events(stick, GripperConfig("live")) == [] and det.closed is True


def test_two_tools_see_one_release():
    """The repetition counter and the deposit counter, on one store, read the same release event."""
    from memory.language.spec import MemorySpec
    from memory.tools.deposit_counter import DepositCounter
    from memory.tools.repetition_counter import RepetitionCounter

    store = MemoryStore()
    spec = MemorySpec(goal="g", watch=("green cube",), repetitions=2, counts=(("red cube", 1),), layout=("bin",))
    rep, dep = RepetitionCounter(), DepositCounter()
    for tool in (rep, dep):
        tool.active = True
        tool.reset(spec, store)
    hub = events_for(store)
    det = hub.detector(GRIPPER_LIVE)
    releases = []
    dep._on_release = lambda step: releases.append(step)
    for step, command in enumerate([CLOSED, CLOSED, OPEN]):
        f = _grip(step, command)
        hub.update(f)
        rep.observe(f, store)
        dep.observe(f, store)
    assert hub.detector(GRIPPER_LIVE) is det
    assert releases == [2] and rep._pending == rep.config.verify_within


# --------------------------------------------------------------------------- flash


def _lit_disc(rgb: np.ndarray, cy: int, cx: int) -> None:
    """A lit target disc: red rings with white rings between them."""
    yy, xx = np.mgrid[: rgb.shape[0], : rgb.shape[1]]
    d = np.hypot(yy - cy, xx - cx)
    for r0, r1, colour in ((0, 3, (230, 20, 20)), (3, 6, (250, 250, 250)), (6, 9, (230, 20, 20)),
                           (9, 12, (250, 250, 250)), (12, 15, (230, 20, 20))):
        rgb[(d >= r0) & (d < r1)] = colour


def _table() -> np.ndarray:
    rgb = np.zeros((256, 256, 3), np.uint8)
    rgb[:] = TABLE
    return rgb


def _flash_frame(step: int, lit: bool, where=(120, 60)) -> Frame:
    rgb = _table()
    rgb[200:215, 200:215] = (230, 20, 20)  # a solid red cube: red, but nothing white inside
    if lit:
        _lit_disc(rgb, *where)
    return Frame(step=step, rgb=rgb)


def test_find_flashes_sees_rings_not_a_solid_cube():
    assert find_flashes(_flash_frame(0, False).rgb) == []
    (f,) = find_flashes(_flash_frame(0, True).rgb)
    assert abs(f.y - 120) <= 2 and abs(f.x - 60) <= 2


def test_flash_counted_on_its_second_frame_once_per_lit_period():
    hub = EventHub()
    config = FlashConfig()
    det = hub.attach(config)
    lit = {0, 4, 8, 12, 16, 20, 36, 52, 56}  # 0-20 one lit period (20 hidden, 24-32 dark < relight_gap)
    got = {}
    for step in range(0, 60, 4):
        got[step] = [(e.kind, e.site, e.point) for e in hub.events(_flash_frame(step, step in lit), config)]
    counted = {s: e for s, e in got.items() if e}
    # 36: lit again after 12 dark steps (< relight_gap 24): the same period, not a new visit;
    # 52, 56: dark from 40 to 48 after 36 ... but last lit at 36, 52 - 36 = 16 < 24: still the same period
    assert list(counted) == [4]
    ((kind, site, point),) = counted[4]
    assert kind == "flash" and site == 0 and abs(point[0] - 120) <= 2 and abs(point[1] - 60) <= 2
    assert det.sites[0].visits == 1


def test_flash_relit_after_the_gap_is_a_new_visit_and_one_frame_is_rejected():
    hub = EventHub()
    config = FlashConfig()
    det = hub.attach(config)
    lit = {0, 4, 40, 44, 80}  # two lit periods 36 steps apart, then one frame only
    steps = [s for s in range(0, 100, 4) if hub.events(_flash_frame(s, s in lit), config)]
    assert steps == [4, 44]
    assert det.rejected == 1 and det.pending() is None
    hub.events(_flash_frame(100, True), config)
    assert det.pending() == 0  # lit in the latest frame, awaiting its second frame


# --------------------------------------------------------------------------- pass


def _pass_frame(step: int, x: float | None, y: float = 128.0, target=(128, 128)) -> Frame:
    rgb = _table()
    yy, xx = np.mgrid[:256, :256]
    rgb[np.hypot(yy - target[0], xx - target[1]) <= 10] = (140, 40, 200)  # the purple target disc
    if x is not None:
        x0, y0 = int(round(x)) - 6, int(round(y)) - 6
        rgb[max(0, y0): y0 + 12, max(0, x0): x0 + 12] = (20, 30, 200)  # the sliding cube
    return Frame(step=step, rgb=rgb)


def _slide(path, config=PassConfig()):
    hub = EventHub()
    det = hub.attach(config)
    out = []
    for step in range(0, 4 * len(path), 4):
        out += hub.events(_pass_frame(step, path[step // 4]), config)
    return det, out


def test_pass_detected_with_its_arrival_time():
    # off screen for three frames, then sliding right at 3 px/step, crossing x = 128 at step 52
    path = [None, None, None] + [128 + 3 * (s - 52) for s in range(12, 100, 4)]
    det, out = _slide(path)
    assert det.target is not None and abs(det.target[1] - 128) <= 1
    assert [e.kind for e in out] == ["pass"]
    assert out[0].time == pytest.approx(52, abs=1.0) and out[0].step > out[0].time
    assert det.arrivals == [out[0].time]


def test_object_stopping_on_the_target_has_not_passed_it():
    # it stops 2 px past the centre: it reached the target (inside past_px) but never went beyond
    path = [None, None, None] + [min(130.0, 128 + 3 * (s - 52)) for s in range(12, 100, 4)]
    det, out = _slide(path)
    assert out == [] and det.arrivals == []


def test_two_crossings_closer_than_min_separation_are_one_pass():
    # right across the target, then straight back 12 steps later
    xs = [128 + 3 * (s - 52) for s in range(12, 60, 4)]
    path = [None, None, None] + xs + xs[::-1][1:]
    det, out = _slide(path, PassConfig(min_separation=20))
    assert len(out) == 1
    det2, out2 = _slide(path, PassConfig(min_separation=5))
    assert len(out2) == 2


# --------------------------------------------------------------------------- descent


@pytest.fixture
def fake_kinematics(monkeypatch):
    """The joint reading's first three entries are the tool-centre point (x, y, z)."""
    monkeypatch.setattr(descent_module, "panda_tcp", lambda q: np.asarray(q[:3], float))
    monkeypatch.setattr(descent_module, "to_pixel", lambda p: (float(p[0]) * 100, float(p[1]) * 100))


def _arm(step: int, z: float, x: float = 0.5, rendered: bool = True, source: str = "video") -> Frame:
    q = np.array([x, 0.1, z, 0, 0, 0, 0, 0.04, 0.04])
    return Frame(step=step, rgb=np.zeros((4, 4, 3), np.uint8) if rendered else None, joint_state=q, source=source)


def test_descents_keep_their_lowest_point(fake_kinematics):
    hub = EventHub()
    config = DescentConfig(low_z=0.045, up_z=0.045, min_drop=1e-4)
    det = hub.attach(config)
    zs = [0.3, 0.1, 0.04, 0.03, 0.035, 0.2, 0.3, 0.044, 0.02, 0.1]
    out = {}
    for i, z in enumerate(zs):
        out[i] = hub.events(_arm(i, z, x=0.5 + i / 100), config)
        if i == 3:
            assert det.nth(0) == (0.03, pytest.approx((53.0, 10.0)))  # the grasp in progress
    done = {i: e for i, e in out.items() if e}
    assert list(done) == [5, 9]
    first, second = done[5][0], done[9][0]
    assert first.kind == "descent" and first.tcp[2] == 0.03 and first.time == 3.0
    assert second.tcp[2] == 0.02 and second.point == pytest.approx((58.0, 10.0))
    assert det.nth(0)[0] == 0.03 and det.nth(1)[0] == 0.02 and det.nth(2) is None


def test_descent_hysteresis_and_frame_filter(fake_kinematics):
    hub = EventHub()
    config = DescentConfig(low_z=0.03, up_z=0.09)
    det = hub.attach(config)
    frames = [_arm(0, 0.2), _arm(1, 0.02), _arm(2, 0.01, rendered=False),  # unrendered: not read
              _arm(3, 0.05), _arm(4, 0.08), _arm(5, 0.02, source="live"), _arm(6, 0.1)]
    steps = [f.step for f in frames if hub.events(f, config)]
    assert steps == [6]  # up at 0.05 and 0.08 is inside the band: the hand is not up yet
    assert det.done[0].tcp[2] == 0.02


# --------------------------------------------------------------------------- dwell / place, press


def _scene(step: int, cube=None, q=None, button=(150, 100)) -> Frame:
    rgb = _table()
    yy, xx = np.mgrid[:256, :256]
    rgb[np.hypot(yy - button[0], xx - button[1]) <= 6] = (128, 128, 128)  # the button's gray cap
    if cube is not None:
        y, x = cube
        rgb[y - 5: y + 5, x - 5: x + 5] = (20, 30, 200)  # the blue cube
    return Frame(step=step, rgb=rgb, joint_state=q, source="video")


@pytest.fixture
def fake_arm(monkeypatch):
    """The joint reading's first three entries are the tool-centre point; pixel = 100 x (x, y)."""
    for module in (dwell_module, press_module):
        monkeypatch.setattr(module, "panda_tcp", lambda q: np.asarray(q[:3], float))
        monkeypatch.setattr(module, "to_pixel", lambda p: (float(p[0]) * 100, float(p[1]) * 100))


def test_a_place_is_a_stay_away_from_the_last_one(fake_arm):
    hub = EventHub()
    config = DwellConfig(colour="blue", dwell_frames=4)
    det = hub.attach(config)
    path = [(100, 60)] * 6 + [(100, 80), (100, 100)] + [(100, 120)] * 6 + [(100, 125)] * 5 + [(100, 140)] + [(100, 160)] * 5
    out = []
    for i, p in enumerate(path):
        out += hub.events(_scene(2 * i, p), config)
    # the start is no place; 120 and 125 are one rest (5 px apart, within moved_px); 160 is a new one
    assert [(e.kind, e.step) for e in out] == [("place", 16), ("place", 40)]
    assert out[0].point == pytest.approx((99.5, 119.5)) and det.pos == pytest.approx((99.5, 159.5))


def test_an_object_lost_behind_the_arm_is_found_again_at_the_hand(fake_arm):
    """Carried out of sight and seen again 80 px away: followed only by nearby blobs, the detector
    would stay at the old spot for the rest of the video; at the hand's pixel it is the object."""
    hub = EventHub()
    config = DwellConfig(colour="blue", dwell_frames=4)
    det = hub.attach(config)
    low = lambda y, x: np.array([y / 100, x / 100, 0.02, 0, 0, 0, 0])  # noqa: E731 - the hand low at pixel (y, x)
    frames = [_scene(2 * i, (100, 60), low(100, 60)) for i in range(6)]  # the start
    frames += [_scene(12 + 2 * i, None, low(100, 60 + 20 * i)) for i in range(4)]  # hidden while carried
    frames += [_scene(20 + 2 * i, (100, 140), low(100, 140)) for i in range(6)]  # set down far away
    out = [e for f in frames for e in hub.events(f, config)]
    assert [(e.kind, e.step) for e in out] == [("place", 20)] and det.pos == pytest.approx((99.5, 139.5))
    # without the hand's pixel (no joint readings) it is not guessed
    hub, blind = EventHub(), DwellConfig(colour="blue", dwell_frames=4)
    det = hub.attach(blind)
    frames = [_scene(f.step, (100, 60) if f.step < 12 else (100, 140) if f.step >= 20 else None) for f in frames]
    assert [e for f in frames for e in hub.events(f, blind)] == [] and det.pos == pytest.approx((99.5, 59.5))


def test_a_stay_held_up_in_the_air_is_no_place(fake_arm):
    hub = EventHub()
    config = DwellConfig(colour="blue", dwell_frames=4, max_jump=80.0)
    up = np.array([1.0, 1.2, 0.2, 0, 0, 0, 0])  # the hand 20 cm up, right over the cube at (100, 120)
    away = np.array([0.2, 0.2, 0.2, 0, 0, 0, 0])
    frames = [_scene(2 * i, (100, 60), away) for i in range(6)] + [_scene(20 + 2 * i, (100, 120), up) for i in range(6)]
    out = [e for f in frames for e in hub.events(f, config)]
    assert [(e.kind, e.step) for e in out] == [("hold", 20)]


def test_a_press_is_the_hand_down_at_the_button_long_enough(fake_arm):
    hub = EventHub()
    config = PressConfig(press_kin_frames=3)
    det = hub.attach(config)
    high, down = np.array([1.5, 1.0, 0.2, 0, 0, 0, 0]), np.array([1.5, 1.0, 0.05, 0, 0, 0, 0])
    elsewhere = np.array([0.5, 0.5, 0.03, 0, 0, 0, 0])  # low, but not at the button
    qs = [high, down, down, high, elsewhere, elsewhere, elsewhere, high, down, down, down, down, high]
    out = [e for i, q in enumerate(qs) for e in hub.events(_scene(2 * i, None, q), config)]
    assert det.button == pytest.approx((150, 100), abs=1)
    assert [(e.kind, e.step, e.time) for e in out] == [("press", 24, 16.0)]  # two frames at 5 cm is a graze
    assert det.visits == [(4, 16, 24)]


def test_a_quick_press_that_pushes_the_cap_down_is_a_press(fake_arm):
    hub = EventHub()
    config = PressConfig(press_kin_frames=3, press_deep_z=0.045)
    high, deep = np.array([1.5, 1.0, 0.2, 0, 0, 0, 0]), np.array([1.5, 1.0, 0.037, 0, 0, 0, 0])
    qs = [high, high, deep, deep, high]
    out = [e for i, q in enumerate(qs) for e in hub.events(_scene(2 * i, None, q), config)]
    assert [(e.kind, e.step, e.time) for e in out] == [("press", 8, 4.0)]


# --------------------------------------------------------------------------- tracker


def _blob(y: float, x: float, area: int = 50) -> Blob:
    return Blob("red", y, x, area, (int(y) - 3, int(x) - 3, int(y) + 4, int(x) + 4))


def test_blob_track_follows_nearest_within_the_jump_and_gets_lost():
    track = BlobTrack(TrackConfig(max_jump=10.0, confirm_frames=2, lose_frames=2))
    assert track.associate([_blob(50, 50), _blob(100, 100)]) .x == 50  # no anchor: the first (largest)
    assert track.associate([_blob(100, 100), _blob(52, 55)], fallback=(50, 50)).x == 55
    track.hit(_blob(50, 50))
    assert not track.confirmed
    b = track.associate([_blob(50, 70), _blob(55, 56)])
    assert b.x == 56
    track.hit(b)
    assert track.confirmed and track.last == (55, 56)
    assert track.associate([_blob(90, 90)]) is None  # beyond the jump: another object
    assert track.miss() is False and track.miss() is True and track.lost and track.last is None
    assert track.associate([_blob(90, 90)]).x == 90  # lost: wherever it reappears


# --------------------------------------------------------------------------- count gate


def test_count_gate_continues_while_owed_and_stops_when_reached():
    gate = CountGate(target=2)
    assert gate.verdict(stops=True, continues=False) == "continue"  # pressing too early
    assert gate.verdict(stops=False, continues=True) is None  # another pick: due
    assert gate.next_ordinal() == 1
    gate.add()
    assert gate.owed and gate.next_ordinal() == 2
    gate.add()
    assert gate.reached
    assert gate.verdict(stops=False, continues=True) == "stop"  # one pick too many
    assert gate.verdict(stops=True, continues=False) is None  # the stop stands
    gate.add(-1)
    assert gate.verdict(stops=True, continues=False) == "continue"  # a take-back reopens it
    assert CountGate(target=20, count=15).next_ordinal() == 10  # the language spells up to tenth


def test_count_gates_per_kind_in_goal_order():
    gates = CountGates({"red": 2, "green": 1}, kinds=("blue", "green", "red"))
    counts = gates.counts
    assert counts == {"blue": 0, "green": 0, "red": 0}
    assert gates.owed() == ["red", "green"]  # goal order, not the kinds' order
    gates.add("red", 2)
    assert gates.owed() == ["green"] and gates.next_ordinal("green") == 1
    counts.update(green=1)  # one dict: a reader holding it sees and makes the same counts
    assert gates.reached and gates.gate("blue").reached
    gates.add("green", -1)
    assert gates.owed() == ["green"]


def test_the_layer_feeds_the_hub_before_the_tools():
    """Through the layer: the episode's detectors are attached at reset and fed once per frame."""
    from memory.layer import MemoryConfig, MemoryLayer
    from memory.tools.highlight_marks import HighlightMarkTool
    from memory.tools.repetition_counter import RepetitionCounter

    rep = RepetitionCounter()
    layer = MemoryLayer(MemoryConfig(), [rep, HighlightMarkTool()])
    layer.reset("pick up the green cube and place it on the target, repeating this action twice, then press the button", [])
    assert rep.active
    hub = events_for(layer.store)
    det = hub.detector(GRIPPER_LIVE)
    calls = []
    update = det.update
    det.update = lambda frame: calls.append(frame.step) or update(frame)
    for step, command in enumerate([CLOSED, OPEN, OPEN]):
        layer.observe(_grip(step, command))
    assert calls == [0, 1, 2] and rep._pending == rep.config.verify_within
    layer.reset("pick up the green cube", [])  # an episode without counting: no gripper detector left
    assert GRIPPER_LIVE not in hub._detectors


def _hand(step: int, shoulder: float, command: float, fingers: float | None) -> Frame:
    """A live frame: the arm with its shoulder at ``shoulder`` (0.6: hand 4 cm over the table, 0.5: 10
    cm), the gripper command, and each finger ``fingers`` m from closed (None: not logged)."""
    q = np.array([0.0, shoulder, 0.0, -2.0, 0.0, 2.5, 0.785])
    action = np.concatenate([q, [command]])
    return Frame(step, joint_state=q, action=action, gripper=None if fingers is None else np.array([fingers, fingers]))


def _lift_events(frames: list[Frame]) -> list[tuple[str, int]]:
    from memory.events import LiftConfig

    det = LiftConfig().build()
    det.reset()
    return [(e.kind, e.step) for f in frames for e in det.update(f)]


def test_lift_is_a_held_grip_that_rose_and_a_slip_after_it_is_a_drop():
    held = [_hand(0, 0.6, 1.0, 0.04), _hand(1, 0.6, -1.0, 0.02), _hand(2, 0.55, -1.0, 0.02),
            _hand(3, 0.5, -1.0, 0.02), _hand(4, 0.5, -1.0, 0.0), _hand(5, 0.5, 1.0, 0.04)]
    assert _lift_events(held) == [("lift", 2), ("drop", 4)]  # 0.55: the hand 3 cm up


def test_a_grip_closed_on_nothing_or_that_never_rose_is_no_lift():
    missed = [_hand(0, 0.6, 1.0, 0.04), _hand(1, 0.6, -1.0, 0.0), _hand(2, 0.5, -1.0, 0.0), _hand(3, 0.5, 1.0, 0.04)]
    assert _lift_events(missed) == []
    stayed = [_hand(0, 0.6, 1.0, 0.04), _hand(1, 0.6, -1.0, 0.02), _hand(2, 0.6, -1.0, 0.02), _hand(3, 0.6, 1.0, 0.04)]
    assert _lift_events(stayed) == []


def test_lift_without_finger_readings_says_it_cannot_sense():
    from memory.events import LiftConfig

    det = LiftConfig().build()
    det.reset()
    for f in [_hand(0, 0.6, 1.0, None), _hand(1, 0.6, -1.0, None), _hand(2, 0.5, -1.0, None)]:
        assert det.update(f) == []
    assert det.sensing is False
    det.update(_hand(3, 0.5, -1.0, 0.02))
    assert det.sensing is True


def _video_hand(step: int, shoulder: float, fingers: float | None) -> Frame:
    """A video frame (no command): the arm with its shoulder at ``shoulder`` (0.6: hand 4 cm over the
    table, 0.4: 16 cm) and each finger ``fingers`` m from closed."""
    q = np.array([0.0, shoulder, 0.0, -2.0, 0.0, 2.5, 0.785])
    return Frame(step, joint_state=q, source="video", gripper=None if fingers is None else np.array([fingers, fingers]))


def _puts(frames: list[Frame]):
    from memory.events.put_down import PutDownConfig

    det = PutDownConfig().build()
    det.reset()
    return det, [(e.kind, e.step) for f in frames for e in det.update(f)]


def test_a_put_down_is_held_fingers_opening_low_over_the_table():
    carry = [_video_hand(0, 0.4, 0.04), _video_hand(2, 0.4, 0.03), _video_hand(4, 0.4, 0.02), _video_hand(6, 0.4, 0.02),
             _video_hand(8, 0.6, 0.02), _video_hand(10, 0.6, 0.02), _video_hand(12, 0.6, 0.03), _video_hand(14, 0.6, 0.04)]
    det, out = _puts(carry)
    assert out == [("place", 14)] and det.sensing
    assert det.places[0].tcp[2] < 0.08  # the hand's last resting hold, low over the table


def test_opening_in_the_air_or_after_closing_on_nothing_is_no_put_down():
    in_air = [_video_hand(0, 0.4, 0.02), _video_hand(2, 0.4, 0.02), _video_hand(4, 0.4, 0.04)]
    assert _puts(in_air)[1] == []
    after_press = [_video_hand(0, 0.6, 0.0), _video_hand(2, 0.6, 0.0), _video_hand(4, 0.6, 0.015),
                   _video_hand(6, 0.6, 0.03), _video_hand(8, 0.6, 0.04)]  # fingers open from closed: they never rest held
    assert _puts(after_press)[1] == []
    det, out = _puts([_video_hand(0, 0.6, None), _video_hand(2, 0.6, None)])
    assert out == [] and not det.sensing

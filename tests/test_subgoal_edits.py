"""The typed subgoal edits (subgoals.edits) and sentence forms (subgoals.phrases) the memory gates return.

The gates used to write whole sentences with f-strings; the forms below are those sentences, so
the phrases must reproduce them byte for byte (an executed subgoal must not change), read back
through the grammar losslessly, and refuse bad values with an error that names the value.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memory.contract.frames import Frame
from memory.layer import MemoryConfig, MemoryLayer
from memory.language.needs import Need
from memory.language.spec import ReadKind
from memory.store.memory_store import MemoryStore
from memory.tools.base import Tool
from subgoals import phrases
from subgoals.edits import Abstain, Replace, SetDirections, SetOrdinal, SetPoint, SubgoalEdit, SubgoalEditError
from subgoals.grammar import Point, SubgoalParseError, format_subgoal, parse_subgoal
from subgoals.numbers import ordinal_word

# --------------------------------------------------------------------------- phrases: the old sentences

POINTS = [(0, 0), (7, 255), (120, 64), (255, 3)]


@pytest.mark.parametrize("yx", POINTS)
@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_phrases_write_the_sentences_the_gates_wrote(yx, n):
    y, x = yx
    nth = ordinal_word(n)
    assert phrases.pick("green cube", yx, time=n) == f"pick up the green cube at <{y}, {x}> for the {nth} time"
    assert phrases.pick("correct cube", Point(y, x), time=n) == f"pick up the correct cube at <{y}, {x}> for the {nth} time"
    assert phrases.pick("red cube", yx, rank=n) == f"pick up the {nth} red cube at <{y}, {x}>"
    assert phrases.pick("peg", yx) == f"pick up the peg at <{y}, {x}>"
    assert phrases.pick("cube", yx) == f"pick up the cube at <{y}, {x}>"
    assert phrases.pick("peg", yx, by_end="far") == f"pick up the peg at <{y}, {x}> by grasping the far end"
    assert phrases.press(yx) == f"press the button at <{y}, {x}>"
    assert phrases.press(yx, purpose="stop") == f"press the button at <{y}, {x}> to stop"
    assert phrases.press(yx, purpose="finish") == f"press the button at <{y}, {x}> to finish"
    assert phrases.press_to_stop_on(yx) == f"press the button to stop the cube on the target at <{y}, {x}>"
    assert phrases.put_into(yx) == f"put it into the bin at <{y}, {x}>"
    for side in ("left", "right"):
        assert (phrases.move_to_top(side, "target", yx, time=n)
                == f"move to the top of the {side}-side target at <{y}, {x}> for the {nth} time")
        assert phrases.insert_from_side(side) == f"insert the peg from the {side} side"
    assert phrases.push_to(yx, (x, y)) == f"close the gripper and push the cube at <{y}, {x}> to the target at <{x}, {y}>"
    assert phrases.put_on_table("green cube") == "put the green cube on the table"
    assert phrases.remain_static() == phrases.REMAIN_STATIC == "remain static"


def test_phrases_take_numpy_coordinates_like_the_fstrings_did():
    assert phrases.press((np.int64(66), np.int32(131))) == "press the button at <66, 131>"
    assert phrases.pick("peg", np.array([90, 80])) == "pick up the peg at <90, 80>"


def _all_sentences():
    return [
        phrases.pick("green cube", (120, 64), time=2),
        phrases.pick("red cube", (1, 2), rank=3),
        phrases.pick("peg", (90, 80), by_end="near"),
        phrases.press((66, 131), purpose="stop"),
        phrases.press((66, 131)),
        phrases.press_to_stop_on((90, 120)),
        phrases.put_into((40, 200)),
        phrases.put_on_table("blue cube"),
        phrases.move_to_top("left", "target", (100, 60), time=4),
        phrases.insert_from_side("right"),
        phrases.push_to((100, 100), (30, 40)),
        phrases.remain_static(),
    ]


@pytest.mark.parametrize("text", _all_sentences())
def test_every_phrase_round_trips_through_the_grammar(text):
    assert format_subgoal(parse_subgoal(text)) == text


def test_phrases_are_what_the_grammar_reads():
    sg = parse_subgoal(phrases.pick("green cube", (120, 64), time=2))
    assert sg.verb == "pick up" and sg.points == (Point(120, 64),) and sg.ordinal == 2
    assert sg.noun_phrases[0].phrase == "green cube"
    sg = parse_subgoal(phrases.pick("red cube", (1, 2), rank=3))
    assert sg.ordinal == 3 and sg.noun_phrases[0].modifiers == ("third", "red")
    sg = parse_subgoal(phrases.move_to_top("right", "target", (100, 60), time=1))
    assert sg.verb == "move" and sg.points == (Point(100, 60),) and sg.ordinal == 1 and "right-side" in sg.noun_phrases[-1].modifiers
    sg = parse_subgoal(phrases.push_to((100, 100), (30, 40)))
    assert sg.points == (Point(100, 100), Point(30, 40))


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: phrases.press((300, 1)), "300"),
        (lambda: phrases.press((-1, 1)), "-1"),
        (lambda: phrases.press((1.5, 2)), "1.5"),
        (lambda: phrases.press((True, 2)), "True"),
        (lambda: phrases.pick("cube", (1, 2), time=0), "0"),
        (lambda: phrases.pick("cube", (1, 2), rank=-2), "-2"),
        (lambda: phrases.move_to_top("up", "target", (1, 2)), "'up'"),
        (lambda: phrases.insert_from_side("middle"), "'middle'"),
        (lambda: phrases.pick("cube at <1, 2>", (1, 2)), "'cube at <1, 2>'"),
        (lambda: phrases.pick("", (1, 2)), "''"),
        (lambda: phrases.put_on_table("red  cube"), "'red  cube'"),
        (lambda: phrases.press((1, 2), purpose=" stop"), "' stop'"),
    ],
)
def test_phrases_refuse_bad_values_naming_them(call, named):
    with pytest.raises(ValueError) as err:
        call()
    assert named in str(err.value)


@pytest.mark.parametrize("bad", ["<1, 2>", (1, 2, 3), 7, None])
def test_a_point_must_be_a_pair(bad):
    with pytest.raises(TypeError, match="point"):
        phrases.press(bad)
    with pytest.raises(TypeError, match="noun"):
        phrases.pick(None, (1, 2))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- slot edits


def test_set_point_moves_one_point_and_keeps_the_words():
    text = "pick up the container at <10, 20> that hides the green cube"
    assert SetPoint(0, (62, 120)).apply(text) == "pick up the container at <62, 120> that hides the green cube"
    push = "close the gripper and push the cube at <100, 100> to the target at <30, 40>"
    assert SetPoint(-1, Point(31, 41)).apply(push) == "close the gripper and push the cube at <100, 100> to the target at <31, 41>"
    assert SetPoint(1, (5, 6)).apply(push) == "close the gripper and push the cube at <100, 100> to the target at <5, 6>"
    peg = "pick up the peg at <100, 100> by grasping the far end"
    assert SetPoint(0, (90, 80)).apply(peg) == phrases.pick("peg", (90, 80), by_end="far")
    assert SetPoint(0, (1, 2)).point == Point(1, 2)


def test_set_point_refuses_a_missing_slot_and_bad_values():
    with pytest.raises(SubgoalEditError, match="0 point"):
        SetPoint(0, (1, 2)).apply("remain static")
    with pytest.raises(SubgoalEditError, match="index 2"):
        SetPoint(2, (1, 2)).apply("press the button at <66, 131>")
    assert not SetPoint(0, (1, 2)).applies_to("move forward")
    assert not SetPoint(0, (1, 2)).applies_to("pick up the cube at <1, 2")  # malformed proposal
    with pytest.raises(ValueError, match="256"):
        SetPoint(0, (256, 1))
    with pytest.raises(TypeError, match="'0'"):
        SetPoint("0", (1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="True"):
        SetPoint(True, (1, 2))  # type: ignore[arg-type]


def test_set_ordinal_sets_the_time_phrase_or_the_modifier():
    assert (SetOrdinal(2).apply("pick up the green cube at <1, 2> for the first time")
            == "pick up the green cube at <1, 2> for the second time")
    assert (SetOrdinal(3).apply("move to the top of the left-side target at <100, 60> for the first time")
            == "move to the top of the left-side target at <100, 60> for the third time")
    assert SetOrdinal(2).apply("pick up the first red cube at <120, 100>") == "pick up the second red cube at <120, 100>"
    assert SetOrdinal(11).apply("pick up the cube at <1, 2> for the 3rd time") == "pick up the cube at <1, 2> for the 11th time"
    # the time phrase is the slot the grammar reads first, so that is the one set
    both = "pick up the first cube at <1, 2> for the first time"
    assert SetOrdinal(4).apply(both) == "pick up the first cube at <1, 2> for the fourth time"
    assert parse_subgoal(SetOrdinal(4).apply(both)).ordinal == 4
    # the proposal's own ordinal: nothing changes
    same = "pick up the green cube at <1, 2> for the second time"
    assert SetOrdinal(2).apply(same) == same


def test_set_ordinal_refuses_a_missing_slot_and_bad_values():
    with pytest.raises(SubgoalEditError, match="no ordinal slot"):
        SetOrdinal(2).apply("press the button at <66, 131> to stop")
    assert not SetOrdinal(2).applies_to("pick up the cube at <1, 2> for the last time")
    for bad in (0, -1):
        with pytest.raises(ValueError, match=str(bad)):
            SetOrdinal(bad)
    with pytest.raises(TypeError, match="2.0"):
        SetOrdinal(2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'second'"):
        SetOrdinal("second")  # type: ignore[arg-type]


def test_set_directions_fills_the_route_slot_byte_for_byte():
    assert SetDirections(("forward-left",)).apply("move backward-right") == "move forward-left"
    assert SetDirections(("forward",)).apply("move forward") == "move forward"
    step = "move to the nearest left target by circling around the stick clockwise"
    assert (SetDirections(("right", "counterclockwise")).apply(step)
            == "move to the nearest right target by circling around the stick counterclockwise")
    # the spacing of the proposal is kept as it was
    assert SetDirections(("left",)).apply("move  Forward  now") == "move  left  now"
    with pytest.raises(SubgoalEditError, match="1 direction word"):
        SetDirections(("left", "clockwise")).apply("move forward")
    assert not SetDirections(("left",)).applies_to("pick up the cube at <10, 20>")
    with pytest.raises(ValueError, match="'upward'"):
        SetDirections(("upward",))
    with pytest.raises(TypeError, match="'left'"):
        SetDirections("left")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="none"):
        SetDirections(())


def test_replace_states_a_new_action():
    text = phrases.press((66, 131), purpose="stop")
    assert Replace(text).apply("pick up the green cube at <1, 2> for the fourth time") == text
    assert Replace(phrases.REMAIN_STATIC).apply("press the button to stop the cube on the target at <90, 120>") == "remain static"
    with pytest.raises(SubgoalParseError, match="<1, 2"):
        Replace("pick up the cube at <1, 2")
    with pytest.raises(SubgoalParseError, match="300"):
        Replace("press the button at <300, 2>")
    with pytest.raises(SubgoalParseError, match="empty"):
        Replace("")


def test_edits_are_frozen_and_hashable_so_a_gate_can_latch_them():
    edits = [SetPoint(0, (1, 2)), SetOrdinal(2), SetDirections(("left",)), Replace("remain static")]
    for e in edits:
        assert isinstance(e, SubgoalEdit)
        with pytest.raises(dataclasses.FrozenInstanceError):
            e.x = 1  # type: ignore[attr-defined]
    assert len(set(edits)) == 4 and SetPoint(0, Point(1, 2)) == SetPoint(0, (1, 2))
    assert SetDirections(["left"]) == SetDirections(("left",))


# --------------------------------------------------------------------------- the layer applies them


class _Gate(Tool):
    name = "scripted_gate"
    group = "progress"
    gate_kind = ReadKind.COUNT_GATE
    serves = frozenset({Need.REPETITION_COUNT})

    def __init__(self, out):
        self.out = out

    def observe(self, frame, store):
        pass

    def gate(self, proposed, store):
        return self.out


GOAL = "pick up the green cube and place it on the target, repeating this action three times"


def test_the_layer_applies_the_edit_and_traces_the_text():
    layer = MemoryLayer(MemoryConfig(), [_Gate(Replace(phrases.press((66, 131), purpose="stop")))])
    layer.reset(GOAL, [])
    rev = layer.revise("pick up the green cube at <1, 2> for the fourth time", Frame(step=1))
    assert rev.text == "press the button at <66, 131> to stop" and rev.rewritten
    assert rev.trace.answer == rev.text and rev.trace.reason_code == "gate"
    layer = MemoryLayer(MemoryConfig(), [_Gate(SetOrdinal(2))])
    layer.reset(GOAL, [])
    assert layer.revise("pick up the green cube at <1, 2> for the first time", Frame(step=1)).text == (
        "pick up the green cube at <1, 2> for the second time")
    # an edit that changes nothing is no rewrite
    layer = MemoryLayer(MemoryConfig(), [_Gate(SetPoint(0, (1, 2)))])
    layer.reset(GOAL, [])
    rev = layer.revise("pick up the green cube at <1, 2> for the first time", Frame(step=1))
    assert not rev.rewritten and rev.trace is None


def test_a_gate_that_cannot_decide_abstains_in_the_audit():
    """A gate whose decision depends on the past but which cannot make it now (nothing visible to
    re-ground on) returns Abstain: the proposal stands, and the revision is an abstention with the
    gate's reason, never a silent pass."""
    layer = MemoryLayer(MemoryConfig(), [_Gate(Abstain("green still owed, but no such cube is visible"))])
    layer.reset(GOAL, [])
    proposal = "press the button at <66, 131> to stop"
    rev = layer.revise(proposal, Frame(step=1))
    assert rev.text == proposal and not rev.rewritten and not rev.read and rev.abstained
    assert rev.trace.reason_code == "gate-abstained" and "no such cube is visible" in rev.trace.reason
    assert layer.diagnostics()["abstentions"] == 1
    assert Abstain("x").apply(proposal) == proposal
    with pytest.raises(ValueError, match="needs a reason"):
        Abstain(" ")


def test_a_gate_that_returns_text_is_refused_naming_the_tool():
    tool = _Gate("press the button at <66, 131> to stop")
    with pytest.raises(TypeError, match="scripted_gate.gate returned 'press the button"):
        tool.gated("pick up the green cube at <1, 2>", MemoryStore())
    assert _Gate(None).gated("pick up the green cube at <1, 2>", MemoryStore()) is None

"""Slots of choices between official options (Counting, Imitation): pure functions over the
benchmark's plan and offered options, as ``OfficialSubgoalEnv.history_slot`` hands them over.
The plans below are PickXtimes's, StopCube's and MoveCube's as the official envs write them
(train episode 0; ``task_list``'s ``choice_label`` / ``subgoal_segment``)."""

from __future__ import annotations

import pytest

from envs.cards import card as card_of
from envs.cards.card import OfficialChoice
from envs.official.mapping import option_label
from envs.official.slots import OfferedOption, PlanStep, choice_of, choice_slot, plan_phrases

PICK, PLACE, PRESS = "pick up the cube", "place the cube onto the target", "press the button to stop"
PLAN = [
    PlanStep(PICK, "pick up the red cube at <> for the first time", ((89, 122),)),
    PlanStep(PLACE, "place the red cube onto the target at <>", ((82, 93),)),
    PlanStep(PICK, "pick up the red cube at <> for the second time", ((78, 98),)),
    PlanStep(PLACE, "place the red cube onto the target at <>", ((82, 93),)),
    PlanStep(PRESS, "press the button at <> to stop", ((61, 137),)),
]
OFFERED = [OfferedOption(PICK, ((78, 98),)), OfferedOption(PLACE), OfferedOption(PRESS)]
REPEAT = card_of("PickXtimes").official_history_choices[0]


def test_the_first_pick_of_a_count_is_settled_by_the_goal():
    assert choice_slot(REPEAT, PICK, "pick up the red cube at <89, 122> for the first time", 0, PLAN, OFFERED) is None


def test_a_later_pick_offers_the_press_as_the_plan_writes_it():
    slot = choice_slot(REPEAT, PICK, "pick up the red cube at <78, 98> for the second time", 2, PLAN, OFFERED)
    assert slot.name == "repeat or stop"
    assert slot.alternatives == ("pick up the red cube at <78, 98> for the second time", "press the button at <61, 137> to stop")


def test_the_press_offers_a_pick_again():
    slot = choice_slot(REPEAT, PRESS, "press the button at <61, 137> to stop", 4, PLAN, OFFERED)
    assert slot.alternatives == ("pick up the red cube at <78, 98> for the second time", "press the button at <61, 137> to stop")


def test_a_place_is_no_choice():
    assert choice_of("PickXtimes", PLACE) is None
    assert choice_slot(REPEAT, PLACE, "place the red cube onto the target at <82, 93>", 1, PLAN, OFFERED) is None


def test_every_alternative_executes_its_own_option():
    """The executor maps each alternative back to its option through the plan's phrase book, even
    one the plan writes with another count ("for the third time" when the plan stops at two)."""
    options = [{"label": "a", "action": PICK}, {"label": "b", "action": PLACE}, {"label": "c", "action": PRESS}]
    slot = choice_slot(REPEAT, PRESS, "press the button at <61, 137> to stop", 4, PLAN, OFFERED)
    oracle = ("press the button at <61, 137> to stop", "c")
    phrases = plan_phrases(PLAN)
    assert [option_label(a, options, *oracle, phrases) for a in slot.alternatives] == ["a", "c"]
    assert option_label("pick up the red cube at <70, 90> for the third time", options, *oracle, phrases) == "a"
    assert option_label("pick up the red cube at <70, 90> for the third time", options, *oracle) is None


def test_stop_cube_waits_or_presses_at_every_decision():
    wait, press = "remain static", "press button to stop the cube"
    plan = [PlanStep("move to the top of the button to prepare", "move to the top of the button at <> to prepare", ((57, 85),)),
            *[PlanStep(wait, wait) for _ in range(4)],
            PlanStep(press, "press the button to stop the cube on the target at <>", ((103, 103),))]
    offered = [OfferedOption(p.action) for p in plan[:2]] + [OfferedOption(press)]
    choice = card_of("StopCube").official_history_choices[0]
    assert choice_slot(choice, plan[0].action, plan[0].template, 0, plan, offered) is None
    for index in (1, 4, 5):
        oracle = "remain static" if index < 5 else "press the button to stop the cube on the target at <103, 103>"
        slot = choice_slot(choice, plan[index].action, oracle, index, plan, offered)
        assert slot.alternatives == ("remain static", "press the button to stop the cube on the target at <103, 103>")


def test_a_manner_is_chosen_once_after_the_demonstration():
    manner = OfficialChoice("manner", ("pick up the peg", "close gripper and push the cube to the target", "pick up the cube"), "first")
    plan = [PlanStep("pick up the peg", "pick up the peg at <>", ((40, 40),), demonstration=True),
            PlanStep("hook the cube to the target with the peg", "hook the cube to the target with the peg", (), demonstration=True),
            PlanStep("pick up the peg", "pick up the peg at <>", ((40, 40),)),
            PlanStep("hook the cube to the target with the peg", "hook the cube to the target with the peg")]
    offered = [OfferedOption("pick up the peg", ((41, 42),)), OfferedOption("close gripper and push the cube to the target"),
               OfferedOption("pick up the cube", ((90, 90),))]
    slot = choice_slot(manner, "pick up the peg", "pick up the peg at <41, 42>", 2, plan, offered)
    assert slot.alternatives == ("pick up the peg at <41, 42>", "close gripper and push the cube to the target",
                                 "pick up the cube at <90, 90>")
    plan.append(PlanStep("pick up the peg", "pick up the peg at <>", ((40, 40),)))
    assert choice_slot(manner, "pick up the peg", "pick up the peg at <41, 42>", 4, plan, offered) is None


SWING_TOP, PUT_DOWN = "move to the top of the target", "put the cube on the table"
RIGHT, LEFT = (77, 79), (86, 181)
SWING_PLAN = [  # SwingXtimes train episode 0, two round trips
    PlanStep("pick up the cube", "pick up the red cube at <>", ((64, 113),)),
    PlanStep(SWING_TOP, "move to the top of the right-side target at <> for the first time", (RIGHT,)),
    PlanStep(SWING_TOP, "move to the top of the left-side target at <> for the first time", (LEFT,)),
    PlanStep(SWING_TOP, "move to the top of the right-side target at <> for the second time", (RIGHT,)),
    PlanStep(SWING_TOP, "move to the top of the left-side target at <> for the second time", (LEFT,)),
    PlanStep(PUT_DOWN, "put the red cube on the table", ()),
    PlanStep("press the button", "press the button at <>", ((67, 150),)),
]


def test_an_option_taking_either_target_names_each_target_in_its_own_words():
    """The official "move to the top of the target" takes either target; each is offered as the plan
    words it ("the right-side target" at the right one), never in the other target's words."""
    swing = card_of("SwingXtimes").official_history_choices[0]
    offered = [OfferedOption("pick up the cube", ((64, 113),)), OfferedOption(SWING_TOP, (RIGHT, LEFT)),
               OfferedOption(PUT_DOWN), OfferedOption("press the button", ((67, 150),))]
    oracle = "move to the top of the left-side target at <86, 181> for the first time"
    slot = choice_slot(swing, SWING_TOP, oracle, 2, SWING_PLAN, offered)
    assert slot.alternatives == ("move to the top of the right-side target at <77, 79> for the second time", oracle,
                                 "put the red cube on the table")


def test_a_prefix_action_covers_every_offered_direction():
    way = OfficialChoice("direction", ("move *",))
    assert way.covers("move forward") and way.covers("move left") and not way.covers("remain static")
    offered = [OfferedOption("move forward"), OfferedOption("move left"), OfferedOption("move right")]
    slot = choice_slot(way, "move left", "move left", 0, [], offered)
    assert slot.alternatives == ("move forward", "move left", "move right")


def test_a_bad_choice_is_refused_naming_the_value():
    with pytest.raises(ValueError, match="unknown decisions 'sometimes'"):
        OfficialChoice("x", ("a",), "sometimes")
    with pytest.raises(ValueError, match="chooses among no actions"):
        OfficialChoice("x", ())


def test_every_counting_and_imitation_task_declares_an_official_slot():
    from envs.cards import all_cards

    for c in all_cards():
        if c.suite in ("counting", "imitation"):
            assert c.official_history_choices or c.official_history_options, c.name

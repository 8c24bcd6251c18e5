"""Gates read what a proposal asks for, not how it is worded (``subgoals/actions.py``).

Why: a VLM composer words its proposals its own way. A gate that recognised a press by the letters
"press" let "push the stop button" through untouched. Each wording below is one the tasks never
produce; the kind of action must still be read, and the gates must ask for it through
``action_of`` (the last test holds every memory tool to that).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from subgoals.actions import Action, action_of
from subgoals.grammar import parse_subgoal

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text, action", [
    ("press the button to stop", Action.PRESS),
    ("push the stop button", Action.PRESS),
    ("hit the button at <40, 120>", Action.PRESS),
    ("tap the red button", Action.PRESS),
    ("push the cube to the target", Action.PUSH),  # a push of a cube moves it along the table, no press
    ("slide the block onto the pad", Action.PUSH),
    ("hook the cube to the target with the peg", Action.PUSH),
    ("pick up the red cube at <10, 20>", Action.PICK),
    ("grab the red block", Action.PICK),
    ("lift the green cube for the second time", Action.PICK),
    ("take the blue cube", Action.PICK),
    ("remain static", Action.WAIT),
    ("stay still", Action.WAIT),
    ("wait", Action.WAIT),
    ("hold still", Action.WAIT),
    ("hold the cube over the target", Action.OTHER),
    ("put it down", Action.PUT_DOWN),
    ("set the cube down", Action.PUT_DOWN),
    ("put the cube on the table", Action.PUT_DOWN),
    ("put it into the bin at <3, 4>", Action.PLACE),
    ("place the green cube onto the correct target", Action.PLACE),
    ("move to the top of the right-side target at <5, 6>", Action.MOVE),
    ("swing the cube to the left-side target", Action.MOVE),
    ("close the gripper and push the cube", Action.PUSH),  # the compound's second verb
    ("close the gripper and tap the button", Action.PRESS),
    ("close the gripper", Action.OTHER),
    ("the red cube", Action.OTHER),
])
def test_the_kind_of_action_is_read_whatever_the_verb(text, action):
    assert action_of(parse_subgoal(text)) is action


def test_no_memory_tool_decides_by_a_verbs_letters():
    offenders = []
    for path in sorted((ROOT / "memory" / "tools").glob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(r"verb(\.lower\(\))?\.startswith\(", line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, "gates read subgoals.actions.action_of, not verb prefixes:\n" + "\n".join(offenders)


@pytest.mark.parametrize("text, manner", [
    ("pick up the peg", ("tool_push", True)),
    ("grab the rod by its left end", ("tool_push", True)),
    ("shove the block onto the target with the rod", ("tool_push", False)),
    ("close gripper and push the cube to the target", ("finger_push", True)),  # the official option's words
    ("slide the block to the pad", ("finger_push", True)),
    ("take the block", ("grasp_place", True)),
    ("set the brick on the disc", ("grasp_place", False)),
    ("push the button", None),
    ("wait", None),
])
def test_the_manner_gate_reads_the_typed_subgoal(text, manner):
    """The demonstrated-procedure gate knows which manner a proposal starts from what it asks for
    (action and object role from the word table), so a reworded proposal cannot walk past it."""
    from memory.tools.manner_reader import proposal_manner

    assert proposal_manner(text) == manner


@pytest.mark.parametrize("text, side", [
    ("move to the top of the right-side target at <5, 6>", ("right", "target")),
    ("swing the cube over to the left target", ("left", "target")),
    ("move above the target on the right", ("right", "target")),
    ("bring it over the left-side pad for the second time", ("left", "pad")),
    ("move to the top of the target", None),
])
def test_the_visit_gate_reads_the_side_from_noun_phrases(text, side):
    """The flash-visit gate takes the side a move goes to from the typed subgoal's noun phrases, not
    from one hyphenated phrase, so "the left target" or "the target on the right" is a visit too."""
    from memory.tools.flash_counter import side_of_move
    from subgoals.grammar import try_parse

    assert side_of_move(try_parse(text)) == side

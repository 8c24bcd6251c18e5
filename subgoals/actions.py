"""What a subgoal asks the robot to do, as a kind of action, whatever verb it is worded with.

Why: the memory's gates decide whether a proposal touches the state they keep (a pick continues a
count, a press ends it, a wait lets a timed arrival come nearer, a move to one side is a visit).
Deciding that from a verb's first letters ("press...", "pick...") lets a composer that words its
proposal otherwise ("push the stop button", "grab the red block") walk past the memory; a VLM
will. The gates ask :func:`action_of` instead, which reads the parsed verb and, where the verb alone
does not settle it (push a button or push a cube; put it on a target or put it down), its object.
A verb the table does not know is ``OTHER``: the gates leave such a proposal alone, as they leave
any proposal that is not theirs.
"""

from __future__ import annotations

from enum import Enum

from subgoals.grammar import Subgoal

__all__ = ["Action", "action_of"]


class Action(str, Enum):
    PICK = "pick"
    """Take hold of an object: pick up, grab, grasp, lift, take."""
    PLACE = "place"
    """Set a held object on or into something: place, put ... on, set, lay, drop ... into."""
    PUT_DOWN = "put down"
    """Set a held object down on the table (no destination but the table)."""
    PRESS = "press"
    """Press a button: press, push / hit / tap the button."""
    MOVE = "move"
    """Move the arm or a held object somewhere without releasing it: move, bring, carry, swing."""
    WAIT = "wait"
    """Hold still: remain static, stay still, wait, hold (with no object: "hold it over ..." is no wait)."""
    PUSH = "push"
    """Move an object along the table without lifting it: push, shove, slide, nudge, hook, sweep (a
    button pushed is PRESS); also the second verb of a compound ("close the gripper and push ...")."""
    OTHER = "other"


_PICK = frozenset("pick grab grasp lift take collect raise".split())
_PLACE = frozenset("place put set lay drop deposit".split())
_PRESS = frozenset("press depress".split())
_PRESS_IF_BUTTON = frozenset("push hit tap".split())
_MOVE = frozenset("move bring carry swing".split())
_WAIT = frozenset("remain stay wait pause".split())
_PUSH = frozenset("push shove slide nudge hook sweep drag".split())
_TABLE = ("table", "ground", "surface")


def _objects(sg: Subgoal) -> list[str]:
    return [np_.head.lower() for np_ in sg.noun_phrases]


def _words(sg: Subgoal) -> list[str]:
    """The literal words after the verb (not inside a noun phrase)."""
    return [w.lower() for part in sg.parts if isinstance(part, str) for w in part.replace(",", " ").split()]


def action_of(sg: Subgoal) -> Action:
    """The kind of action ``sg`` asks for (``Action.OTHER`` when its verb is not in the table)."""
    words = sg.verb.lower().split()
    if not words:
        return Action.OTHER
    verb, particle = words[0], (words[1] if len(words) > 1 else "")
    objects = _objects(sg)
    if verb in _WAIT or (verb == "hold" and not objects):
        return Action.WAIT
    if verb in _PRESS or (verb in _PRESS_IF_BUTTON and "button" in objects):
        return Action.PRESS
    if verb in _PICK:
        return Action.PICK
    if verb in _PLACE:
        if particle == "down" or "down" in _words(sg) or "down" in objects or (objects and objects[-1] in _TABLE):
            return Action.PUT_DOWN
        return Action.PLACE
    if verb in _MOVE:
        return Action.MOVE
    if verb in _PUSH:
        return Action.PUSH
    then = _second_verb(sg)
    if then in _PUSH or then in _PRESS_IF_BUTTON:
        return Action.PRESS if "button" in objects else Action.PUSH
    return Action.OTHER


def _second_verb(sg: Subgoal) -> str | None:
    """The verb after ``and`` in a compound whose first verb only prepares (``close the gripper and
    push the cube ...``), or None."""
    words = _words(sg)
    for a, b in zip(words, words[1:]):
        if a == "and":
            return b
    return None

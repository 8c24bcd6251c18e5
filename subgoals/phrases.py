"""The benchmark's subgoal sentence forms, written once.

The composers propose, the memory rewrites and the scripted policy executes subgoals such as
``"pick up the green cube at <120, 64> for the second time"`` or ``"press the button at <66, 131>
to stop"``. Those sentence shapes are the shared subgoal language of all three, so they live
here, beside the grammar that reads them, and nobody else writes them with string formatting:
a memory tool that changes the action (count reached: press the button; count not reached: pick
again; the other side; into the bin; ...) builds the new subgoal with one of these functions and
hands it back as a :class:`subgoals.edits.Replace`.

Each function validates its arguments and raises ``ValueError`` (``TypeError`` for a value of the
wrong kind) naming the bad value; every sentence it returns is in canonical spacing, so
``format_subgoal(parse_subgoal(s)) == s``.

Points are :class:`~subgoals.grammar.Point` or ``(y, x)`` pairs of integers in 0..255.
"""

from __future__ import annotations

import re

from subgoals.grammar import Point
from subgoals.numbers import as_integer, ordinal_word

__all__ = [
    "REMAIN_STATIC",
    "SIDES",
    "as_point",
    "insert_from_side",
    "move_to_top",
    "pick",
    "press",
    "press_to_stop_on",
    "push_to",
    "put_into",
    "put_on_table",
    "remain_static",
]

REMAIN_STATIC = "remain static"
"""The waiting subgoal: hold still (e.g. until a moving object is where a press will stop it)."""

SIDES = ("left", "right")
"""The sides a target, an insertion or a swing visit can be on."""

_WORDS = re.compile(r"[^\s<>]+(?: [^\s<>]+)*\Z")


def as_point(value) -> Point:
    """``value`` as a :class:`Point`: a Point, or a ``(y, x)`` pair of integers in 0..255."""
    if isinstance(value, Point):
        return value
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"a point is a Point or a (y, x) pair of integers, got {value!r}")
    y, x = value
    for name, raw in (("y", y), ("x", x)):
        as_integer(raw, ValueError, f"point coordinate {name}={raw!r} in {value!r} must be an integer")
    return Point(y, x)


def _words(value, what: str) -> str:
    """``value`` as one or more words separated by single spaces (no ``<``/``>``: a point is a slot of its own)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be words, got {value!r}")
    if not _WORDS.match(value):
        raise ValueError(f"{what} must be words separated by single spaces, without '<' or '>', got {value!r}")
    return value


def _side(value) -> str:
    if value not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {value!r}")
    return value


def _time(n: int | None) -> str:
    return "" if n is None else f" for the {ordinal_word(n)} time"


def pick(noun: str, point, *, time: int | None = None, rank: int | None = None, by_end: str | None = None) -> str:
    """``"pick up the {noun} at <y, x>"``, with optional slots:

    * ``time=2``: ``"... for the second time"`` (a repetition of the same pick);
    * ``rank=2``: ``"pick up the second {noun} at <y, x>"`` (the nth of several alike);
    * ``by_end="far"``: ``"... by grasping the far end"`` (which end of a long object to hold).
    """
    noun = _words(noun, "noun")
    p = as_point(point)
    nth = "" if rank is None else f"{ordinal_word(rank)} "
    grasp = "" if by_end is None else f" by grasping the {_words(by_end, 'end')} end"
    return f"pick up the {nth}{noun} at {p}{grasp}{_time(time)}"


def press(point, *, purpose: str | None = None) -> str:
    """``"press the button at <y, x>"``, or ``"press the button at <y, x> to {purpose}"`` (stop, finish)."""
    p = as_point(point)
    tail = "" if purpose is None else f" to {_words(purpose, 'purpose')}"
    return f"press the button at {p}{tail}"


def press_to_stop_on(point, *, noun: str = "cube", place: str = "target") -> str:
    """``"press the button to stop the {noun} on the {place} at <y, x>"``: a timed press."""
    return f"press the button to stop the {_words(noun, 'noun')} on the {_words(place, 'place')} at {as_point(point)}"


def put_into(point, *, container: str = "bin", thing: str = "it") -> str:
    """``"put it into the bin at <y, x>"``."""
    return f"put {_words(thing, 'thing')} into the {_words(container, 'container')} at {as_point(point)}"


def put_on_table(noun: str) -> str:
    """``"put the {noun} on the table"``."""
    return f"put the {_words(noun, 'noun')} on the table"


def move_to_top(side: str, noun: str, point, *, time: int | None = None) -> str:
    """``"move to the top of the {side}-side {noun} at <y, x>"`` (+ ``" for the {nth} time"``)."""
    return f"move to the top of the {_side(side)}-side {_words(noun, 'noun')} at {as_point(point)}{_time(time)}"


def insert_from_side(side: str, *, noun: str = "peg") -> str:
    """``"insert the peg from the {side} side"``."""
    return f"insert the {_words(noun, 'noun')} from the {_side(side)} side"


def push_to(point, target_point, *, noun: str = "cube", target: str = "target") -> str:
    """``"close the gripper and push the cube at <y, x> to the target at <y, x>"``."""
    return (f"close the gripper and push the {_words(noun, 'noun')} at {as_point(point)} "
            f"to the {_words(target, 'target')} at {as_point(target_point)}")


def remain_static() -> str:
    """:data:`REMAIN_STATIC`."""
    return REMAIN_STATIC

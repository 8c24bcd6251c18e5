"""Typed edits of a subgoal: what a memory gate hands back instead of a sentence.

A gate (``memory.tools.base.Tool.gate``) decides, from progress or trajectory state, that the
composer's proposal must change. It says *how* with one of these small frozen values, and the
memory layer applies it to the proposal (``edit.apply(proposed) -> str``). The sentence forms
stay in the subgoal language (:mod:`subgoals.grammar`, :mod:`subgoals.phrases`), so no task's
subgoal template is written inside the memory.

* :class:`SetPoint`: the ``index``-th point of the proposal becomes ``point``; the rest of the
  sentence is kept (canonicalised by the grammar).
* :class:`SetOrdinal`: the proposal's position word (``for the second time``, or ``the second
  red cube``) becomes the ``n``-th.
* :class:`SetDirections`: the proposal's direction words (``move forward-left``), in order, become
  ``words``; everything else is kept byte for byte.
* :class:`Abstain`: the gate's decision depends on the past but it cannot decide it now (no
  visible object to re-ground on, say): the proposal stands, and the layer records an abstention
  with ``reason``, so the audit scores it as one instead of as a silent pass.
* :class:`Replace`: the memory changes the action (count reached: press the button; not reached:
  pick again; the other side; into the bin; ...): the proposal becomes ``text``, a sentence built
  with :mod:`subgoals.phrases`.

Prefer the slot edits: they leave the composer's wording alone. Every edit validates its values
when it is made and raises an error naming the bad value; ``apply`` raises when the proposal has
no slot of the kind (use :meth:`SubgoalEdit.applies_to` to ask first).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

from subgoals.grammar import (
    DIRECTION_WORDS,
    NounPhrase,
    Point,
    SubgoalParseError,
    format_subgoal,
    parse_subgoal,
    replace_point,
)
from subgoals.numbers import as_integer, is_ordinal_word, ordinal_word
from subgoals.phrases import as_point

__all__ = ["Abstain", "Replace", "SetDirections", "SetOrdinal", "SetPoint", "SubgoalEdit", "SubgoalEditError"]


class SubgoalEditError(ValueError):
    """An edit that does not fit the proposal it is applied to (it has no such slot)."""


class SubgoalEdit(ABC):
    """One change to a proposed subgoal."""

    @abstractmethod
    def apply(self, proposed: str) -> str:
        """The subgoal ``proposed`` becomes.

        Raises:
            SubgoalEditError: if ``proposed`` has no slot this edit changes.
            SubgoalParseError: if the edit needs to parse ``proposed`` and it is malformed.
        """

    def applies_to(self, proposed: str) -> bool:
        """Whether :meth:`apply` succeeds on ``proposed``."""
        try:
            self.apply(proposed)
        except (SubgoalEditError, SubgoalParseError):
            return False
        return True


def _index(value, what: str) -> int:
    return as_integer(value, TypeError, f"{what} must be an integer, got {value!r}")


@dataclass(frozen=True)
class SetPoint(SubgoalEdit):
    """The ``index``-th point of the proposal (reading order; negatives count from the end) is ``point``."""

    index: int
    point: Point

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", _index(self.index, "point index"))
        object.__setattr__(self, "point", as_point(self.point))

    def apply(self, proposed: str) -> str:
        try:
            return replace_point(proposed, self.index, self.point)
        except IndexError as exc:
            raise SubgoalEditError(str(exc)) from None


_TIME_SLOT = re.compile(r"\b(for the )(\S+)( time)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SetOrdinal(SubgoalEdit):
    """The proposal's position word becomes the ``n``-th: ``"for the first time"`` -> ``"for the
    second time"``, or ``"the first red cube"`` -> ``"the second red cube"``.

    The slot is the one :attr:`subgoals.grammar.Subgoal.ordinal` reads: the ``for the nth time``
    phrase if there is one, else the first ordinal modifier of a noun phrase.
    """

    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", _index(self.n, "ordinal"))
        ordinal_word(self.n)  # raises ValueError naming a non-positive value

    def apply(self, proposed: str) -> str:
        sg = parse_subgoal(proposed)
        word = ordinal_word(self.n)
        parts = list(sg.parts)
        for i, part in enumerate(parts):
            if not isinstance(part, str):
                continue
            for m in _TIME_SLOT.finditer(part):
                if is_ordinal_word(m.group(2)):
                    parts[i] = part[: m.start(2)] + word + part[m.end(2) :]
                    return format_subgoal(replace(sg, parts=tuple(parts)))
        for i, part in enumerate(parts):
            if not isinstance(part, NounPhrase):
                continue
            for j, mod in enumerate(part.modifiers):
                if is_ordinal_word(mod):
                    mods = (*part.modifiers[:j], word, *part.modifiers[j + 1 :])
                    parts[i] = replace(part, modifiers=mods)
                    return format_subgoal(replace(sg, parts=tuple(parts)))
        raise SubgoalEditError(f"{proposed!r} has no ordinal slot to set to {word!r}")


_SPACES = re.compile(r"(\s+)")


@dataclass(frozen=True)
class SetDirections(SubgoalEdit):
    """The proposal's direction words, in reading order, become ``words`` (one for one): a route
    step ``"move forward-left"`` -> ``"move backward"``. The rest of the text is kept byte for byte.
    """

    words: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.words, str):
            raise TypeError(f"directions must be a sequence of words, got the string {self.words!r}")
        words = tuple(self.words)
        if not words:
            raise ValueError("directions must name at least one direction word, got none")
        for w in words:
            if not isinstance(w, str) or w.lower() not in DIRECTION_WORDS:
                raise ValueError(f"direction {w!r} is not one of {sorted(DIRECTION_WORDS)}")
        object.__setattr__(self, "words", words)

    def apply(self, proposed: str) -> str:
        tokens = _SPACES.split(proposed)
        slots = [i for i, t in enumerate(tokens) if t.lower() in DIRECTION_WORDS]
        if len(slots) != len(self.words):
            raise SubgoalEditError(
                f"{proposed!r} has {len(slots)} direction word(s), the route step {self.words!r} has {len(self.words)}"
            )
        for i, w in zip(slots, self.words):
            tokens[i] = w
        return "".join(tokens)


@dataclass(frozen=True)
class Replace(SubgoalEdit):
    """The proposal becomes ``text``: the memory changes the action. ``text`` is a sentence of the
    subgoal language, built with :mod:`subgoals.phrases` (or a subgoal proposed earlier); it must
    parse (:class:`~subgoals.grammar.SubgoalParseError`, naming the text, otherwise)."""

    text: str

    def __post_init__(self) -> None:
        parse_subgoal(self.text)

    def apply(self, proposed: str) -> str:
        return self.text


@dataclass(frozen=True)
class Abstain(SubgoalEdit):
    """The gate abstains: the proposal stands unchanged, and ``reason`` (why it could not decide)
    goes into the layer's abstention trace (module docstring)."""

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError(f"an abstention needs a reason, got {self.reason!r}")

    def apply(self, proposed: str) -> str:
        return proposed

"""Kinds of state: what the memory keeps in an episode, typed, with its parameters, read off the specification.

Why: the tools used to be switched on by rules that each recognised one family of goals (two named
sides, a literal noun in the watch list, a literal scene item in the layout). A goal about a new
object then switched nothing on, or the wrong thing, silently. Here the unit is the *kind of state*
a goal asks the memory to keep:

* :class:`Count`: a count of an event kind with a target: repetitions of the goal's action, visits
  (round trips) between two named sides, or deposits of each kind of object into a receptacle;
* :class:`Binding`: an entity bound to a carrier that moves (an object under a cover);
* :class:`Mark`: a mark objects carried during the episode (highlighted), kept after it is gone;
* :class:`TimedArrival`: the k-th arrival of a moving object at a place;
* :class:`EventSequence`: the ordered events of the demonstration (places where objects were set
  down), read by position or relative to another event;
* :class:`DemonstratedObject`: which object the demonstration handled;
* :class:`DemonstratedGrasp`: which part of which object the demonstration held, and where it went;
* :class:`DemonstratedManner`: how the demonstration moved an object;
* :class:`Route`: the route the demonstration traced.

:func:`state_kinds_of` derives them from the typed fields of a
:class:`~memory.language.spec.MemorySpec` with rules that name no noun: *which* object or scene item
a state is about comes from the one word table (:mod:`memory.language.words`: an object's role, its
parts, whether it is a tool; a scene item's kind, such as a receptacle or a place), so a new noun
is one entry there and keeps the kinds. :func:`unserved_of` reports what the specification asked
for that no kind keeps (an unknown noun, a count with nothing to count into), so a noun the table
lacks is reported, never silently dropped. The tools' vocabulary (:class:`memory.language.needs.Need`)
is a function of these kinds (:func:`memory.language.needs.need_of`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from functools import lru_cache
from typing import ClassVar

import re

from memory.language.lexicon import canonical_text
from memory.language.spec import EventAnchor, EvidenceSource, MemorySpec, ReadKind
from memory.language.words import (
    COLOUR_WORDS, DEFAULT_OBJECT_ROLE, OBJECT_PARTS, OBJECT_ROLES, TOOL_ROLES, SceneItemKind, canonical_role, colour_of,
    is_known_noun, object_role, scene_items_of_kind,
)
from subgoals.record_names import cover_binding, highlight_binding

__all__ = [
    "Binding", "Count", "CountEvent", "DemonstratedGrasp", "DemonstratedManner", "DemonstratedObject", "EventSequence",
    "Mark", "Route", "State", "StateKind", "TimedArrival", "state_kinds_of", "unserved_of",
]


class StateKind(str, Enum):
    """A kind of state the memory can keep."""

    COUNT = "count"
    BINDING = "binding"
    MARK = "mark"
    TIMED_ARRIVAL = "timed_arrival"
    EVENT_SEQUENCE = "event_sequence"
    DEMONSTRATED_OBJECT = "demonstrated_object"
    DEMONSTRATED_GRASP = "demonstrated_grasp"
    DEMONSTRATED_MANNER = "demonstrated_manner"
    ROUTE = "route"


class CountEvent(str, Enum):
    """The event a :class:`Count` counts."""

    REPETITION = "repetition"
    """A completed repetition of the goal's action ("three times")."""
    VISIT = "visit"
    """A trip between two named sides of the layout (a round trip: there and back)."""
    DEPOSIT = "deposit"
    """An object of one kind put into a receptacle (which hides it, so the view cannot count it)."""


@dataclass(frozen=True)
class State:
    """One instance of a kind of state, with its parameters."""

    kind: ClassVar[StateKind]

    def to_dict(self) -> dict:
        out = {"kind": self.kind.value}
        for name, value in asdict(self).items():
            out[name] = value.value if isinstance(value, Enum) else value
        return out


@dataclass(frozen=True)
class Count(State):
    """A count of ``event`` with a target.

    Attributes:
        event: what is counted.
        target: how many the goal asks for (repetitions, visits); ``None`` for per-kind counts.
        per_kind: deposits: ``(phrase, n)`` per kind of object, in goal order.
        sides: visits: the two sides a trip goes between.
        receptacle: deposits: the scene item (a receptacle by the word table) they go into.
    """

    kind: ClassVar[StateKind] = StateKind.COUNT
    event: CountEvent
    target: int | None = None
    per_kind: tuple[tuple[str, int], ...] = ()
    sides: tuple[str, ...] = ()
    receptacle: str | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        """The object roles of the per-kind phrases (``"red cube" -> "cube"``), in order, once each."""
        return tuple(dict.fromkeys(r for r in (object_role(p) for p, _ in self.per_kind) if r is not None))


@dataclass(frozen=True)
class Binding(State):
    """``entity`` bound to a ``carrier`` that moves with it (an object under a cover)."""

    kind: ClassVar[StateKind] = StateKind.BINDING
    entity: str
    carrier: str


@dataclass(frozen=True)
class Mark(State):
    """Objects of ``role`` that carried ``mark`` during the episode. ``named``: whether the goal named
    the role with a noun of the table (otherwise ``role`` is the table's default object role and the
    reading is reported by :func:`unserved_of`)."""

    kind: ClassVar[StateKind] = StateKind.MARK
    mark: str
    role: str
    named: bool = True


@dataclass(frozen=True)
class TimedArrival(State):
    """The ``ordinal``-th arrival of a moving object at ``place`` (a scene item of kind place)."""

    kind: ClassVar[StateKind] = StateKind.TIMED_ARRIVAL
    place: str
    ordinal: int


@dataclass(frozen=True)
class EventSequence(State):
    """The demonstration's ``event`` events at ``place`` in order, of the named ``objects``; the one
    asked for is the ``ordinal``-th, or the one next to ``anchor``."""

    kind: ClassVar[StateKind] = StateKind.EVENT_SEQUENCE
    event: str
    place: str
    objects: tuple[str, ...]
    ordinal: int | None = None
    anchor: EventAnchor | None = None


@dataclass(frozen=True)
class DemonstratedObject(State):
    """Which object of ``role`` the demonstration handled (to handle again)."""

    kind: ClassVar[StateKind] = StateKind.DEMONSTRATED_OBJECT
    role: str


@dataclass(frozen=True)
class DemonstratedGrasp(State):
    """Which of the ``parts`` of the object of ``role`` the demonstration held, and where it went."""

    kind: ClassVar[StateKind] = StateKind.DEMONSTRATED_GRASP
    role: str
    parts: tuple[str, ...]


@dataclass(frozen=True)
class DemonstratedManner(State):
    """How the demonstration moved the object of ``role``: by hand, or with one of ``tools``."""

    kind: ClassVar[StateKind] = StateKind.DEMONSTRATED_MANNER
    role: str
    tools: tuple[str, ...]


@dataclass(frozen=True)
class Route(State):
    """The route the demonstration traced, to follow again (``source``: where it was shown)."""

    kind: ClassVar[StateKind] = StateKind.ROUTE
    source: str


# --------------------------------------------------------------------------- rules


def _binding(text: str) -> Binding:
    """A binding of the specification as entity and carrier: ``"cover hiding the red cube"``."""
    prefix = cover_binding("")
    if text.startswith(prefix):
        return Binding(entity=text[len(prefix):], carrier=canonical_role(prefix.split()[0]))
    return Binding(entity=text, carrier=canonical_role(prefix.split()[0]))


def _marked_role(spec: MemorySpec) -> tuple[str, bool]:
    """The role of the marked objects, and whether the goal named it with a noun of the table."""
    prefix = highlight_binding("")
    for phrase in spec.watch:
        if phrase.startswith(prefix):
            role = canonical_role(phrase.split()[-1])
            if role in OBJECT_ROLES:
                return role, True
    return DEFAULT_OBJECT_ROLE, False


@lru_cache(maxsize=512)
def state_kinds_of(spec: MemorySpec) -> tuple[State, ...]:
    """The kinds of state an episode with specification ``spec`` keeps (ablated reads already removed),
    in a fixed order. Every rule reads typed fields and word-table properties of roles; none names a noun."""
    video = spec.source is EvidenceSource.VIDEO
    demo_reference = ReadKind.DEMO_REFERENCE in spec.reads
    places = scene_items_of_kind(spec.layout, SceneItemKind.PLACE)
    receptacles = scene_items_of_kind(spec.layout, SceneItemKind.RECEPTACLE)
    coloured = tuple(p for p in spec.watch if colour_of(p.split()) is not None)
    watched = tuple(dict.fromkeys(r for r in (object_role(p) for p in spec.watch) if r is not None))
    same = set(spec.same)
    out: list[State] = []

    out += [_binding(b) for b in spec.bindings]
    if spec.highlighted:
        role, named = _marked_role(spec)
        out.append(Mark(mark="highlighted", role=role, named=named))
    if spec.repetitions:
        out.append(Count(CountEvent.REPETITION, target=spec.repetitions))
        sides = tuple(dict.fromkeys(spec.sides))
        if len(sides) == 2:  # a trip between the two named sides is counted by its visits
            out.append(Count(CountEvent.VISIT, target=spec.repetitions, sides=sides))
    kinds = tuple((p, n) for p, n in spec.counts if colour_of(p.split()) is not None)
    if receptacles and kinds:  # objects of each kind into a receptacle: the view cannot count them
        out.append(Count(CountEvent.DEPOSIT, per_kind=kinds, receptacle=receptacles[0]))
    if (spec.ordinal is not None and ReadKind.EVENT_ORDINAL in spec.reads and places
            and spec.ordinal_event == "arrival"):
        out.append(TimedArrival(place=places[0], ordinal=spec.ordinal))
    if video and demo_reference and places and coloured and (spec.ordinal is not None or spec.anchor is not None):
        out.append(EventSequence(event="place", place=places[0], objects=coloured, ordinal=spec.ordinal,
                                 anchor=spec.anchor))
    whole = [r for r in watched if r not in OBJECT_PARTS]
    if video and demo_reference and spec.ordinal is None and spec.anchor is None and not spec.bindings and whole:
        out.append(DemonstratedObject(role=whole[0]))
    for role in (r for r in watched if r in OBJECT_PARTS):
        if {role, *OBJECT_PARTS[role]} & same:  # an object held by a part: the grasp is the state
            out.append(DemonstratedGrasp(role=role, parts=tuple(p for p in spec.same if p in OBJECT_PARTS[role])))
            break
    moved = [r for r in watched if r not in TOOL_ROLES]
    if spec.same and moved and ReadKind.PROCEDURE_REFERENCE in spec.reads:
        out.append(DemonstratedManner(role=moved[0], tools=tuple(r for r in OBJECT_ROLES if r in TOOL_ROLES)))
    if ReadKind.ROUTE_FILL in spec.reads:
        out.append(Route(source=spec.source.value))
    return tuple(out)


_RE_AFTER_COLOUR = re.compile(r"\b(?:" + "|".join(COLOUR_WORDS) + r") ([a-z][a-z\-]*)\b")
_NOT_NOUNS = frozenset({"and", "or", "one", "ones", "then", "to", "on", "in", "into", "onto", "with", "from", "at"})


def _unknown_nouns(goal: str) -> tuple[str, ...]:
    """Words after a colour word in ``goal`` that are no noun of the word table ("the red widget")."""
    found = (w for w in _RE_AFTER_COLOUR.findall(canonical_text(goal)) if w not in _NOT_NOUNS and w not in COLOUR_WORDS)
    return tuple(dict.fromkeys(w for w in found if not is_known_noun(w)))


def unserved_of(spec: MemorySpec) -> tuple[str, ...]:
    """What ``spec`` asks for that no kind of state keeps, one reason each (empty when everything is
    kept): a field the goal asked for in words the specifier could not read (naming the unknown
    nouns it could find), a phrase whose noun the word table lacks, or a field no kind consumes. The
    layer reports these with its diagnostics, so an unknown noun shows as a reason rather than as nothing."""
    kinds = state_kinds_of(spec)
    out: list[str] = []
    for field in spec.unfilled:
        nouns = _unknown_nouns(spec.goal) if field == "watch" else ()
        out.append(f"{field}: asked for in words the specifier could not read"
                   + (f" (no noun of the word table: {', '.join(repr(n) for n in nouns)})" if nouns else ""))
    phrases = [("watch", p) for p in spec.watch] + [("counts", p) for p, _ in spec.counts]
    phrases += [("bindings", b.entity) for b in kinds if isinstance(b, Binding)]
    for field, phrase in phrases:
        head = phrase.split()[-1] if phrase.split() else ""
        if not is_known_noun(head):
            out.append(f"{field} {phrase!r}: {head!r} is no noun of the word table")
    for m in kinds:
        if isinstance(m, Mark) and not m.named:
            out.append(f"highlighted: no object noun named; marks are read under any object and recorded as {m.role!r}")
    of = {type(k) for k in kinds}
    if any(colour_of(p.split()) is not None for p, _ in spec.counts) and not any(
            isinstance(k, Count) and k.event is CountEvent.DEPOSIT for k in kinds):
        out.append("counts: no scene item the goal names takes deposits, so no kind counts them")
    if spec.ordinal is not None and not of & {TimedArrival, EventSequence}:
        out.append(f"ordinal {spec.ordinal}: no arrival at a place nor demonstrated event sequence to count it in")
    if spec.anchor is not None and EventSequence not in of:
        out.append(f"anchor {spec.anchor.relation} {spec.anchor.event}: no demonstrated event sequence to read it in")
    singled = [w for w in spec.same if w in OBJECT_ROLES]
    if singled and not of & {DemonstratedObject, DemonstratedGrasp, DemonstratedManner, EventSequence}:
        out.append(f"same {', '.join(singled)}: no demonstrated object, grasp or manner kept for it")
    return tuple(out)

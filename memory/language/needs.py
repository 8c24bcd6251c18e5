"""Typed needs: the monitors the tools declare they serve, one per kind of state (and the scene).

Why: a tool used to switch itself on with its own test of the parsed goal (often of its wording:
"does the goal say right-side and left-side?", "does it say reaches?"). Then a reworded goal
silently switched tools off, and every tool carried a copy of task knowledge. Now the unit is the
kind of state (:mod:`memory.language.state_kinds`): :func:`needs_of` is the scene plus
:func:`need_of` of every state the specification asks to keep, each tool declares the needs it
serves (``Tool.serves``), and the layer enables exactly the tools whose needs the episode has. No
rule here reads the specification itself, and no tool looks at the goal text.
"""

from __future__ import annotations

from enum import Enum

from memory.language.spec import MemorySpec
from memory.language.state_kinds import (
    Binding, Count, CountEvent, DemonstratedGrasp, DemonstratedManner, DemonstratedObject, EventSequence, Mark, Route,
    State, TimedArrival, state_kinds_of,
)

__all__ = ["Need", "need_of", "needs_of"]


class Need(str, Enum):
    """A monitor the episode needs (what to watch, and for which read)."""

    SCENE = "scene"
    """Every episode: the scene's stable items and the colours of what it shows (re-grounding)."""
    COVER_BINDING = "cover_binding"
    """Which cover hides which object (a :class:`~memory.language.state_kinds.Binding`)."""
    HIGHLIGHT_MARKS = "highlight_marks"
    """Objects marked during the episode (a :class:`~memory.language.state_kinds.Mark`)."""
    REPETITION_COUNT = "repetition_count"
    """Completed repetitions of an action (a count of repetitions)."""
    ROUND_TRIP_COUNT = "round_trip_count"
    """Trips between the two named sides of the layout (a count of visits)."""
    PER_KIND_COUNT = "per_kind_count"
    """Deposits of each kind into a receptacle (a count of deposits)."""
    EVENT_ORDINAL = "event_ordinal"
    """The k-th arrival of a moving object at a place (a :class:`~memory.language.state_kinds.TimedArrival`)."""
    DEMO_PLACES = "demo_places"
    """Where the demonstration placed a coloured object, by order or relative to an event (an
    :class:`~memory.language.state_kinds.EventSequence`)."""
    DEMO_HANDLED = "demo_handled"
    """Which object the demonstration handled (a :class:`~memory.language.state_kinds.DemonstratedObject`)."""
    DEMO_MANNER = "demo_manner"
    """How the demonstration moved an object (a :class:`~memory.language.state_kinds.DemonstratedManner`)."""
    DEMO_GRASP = "demo_grasp"
    """Which part of which object the demonstration grasped and where it went (a
    :class:`~memory.language.state_kinds.DemonstratedGrasp`)."""
    DEMO_ROUTE = "demo_route"
    """The route the demonstration traced (a :class:`~memory.language.state_kinds.Route`)."""


_COUNT_NEEDS: dict[CountEvent, Need] = {
    CountEvent.REPETITION: Need.REPETITION_COUNT,
    CountEvent.VISIT: Need.ROUND_TRIP_COUNT,
    CountEvent.DEPOSIT: Need.PER_KIND_COUNT,
}
_KIND_NEEDS: dict[type[State], Need] = {
    Binding: Need.COVER_BINDING,
    Mark: Need.HIGHLIGHT_MARKS,
    TimedArrival: Need.EVENT_ORDINAL,
    EventSequence: Need.DEMO_PLACES,
    DemonstratedObject: Need.DEMO_HANDLED,
    DemonstratedManner: Need.DEMO_MANNER,
    DemonstratedGrasp: Need.DEMO_GRASP,
    Route: Need.DEMO_ROUTE,
}


def need_of(state: State) -> Need:
    """The need (the tools' vocabulary) that keeps ``state``: one per kind, a count's by its event."""
    if isinstance(state, Count):
        return _COUNT_NEEDS[state.event]
    return _KIND_NEEDS[type(state)]


def needs_of(spec: MemorySpec) -> frozenset[Need]:
    """The needs of an episode with specification ``spec`` (ablated reads already removed): the scene,
    and the need of every kind of state it keeps (:func:`~memory.language.state_kinds.state_kinds_of`)."""
    return frozenset({Need.SCENE, *(need_of(s) for s in state_kinds_of(spec))})

"""Typed needs: what the memory must monitor in an episode, derived from the specification alone.

Why: a tool used to switch itself on with its own test of the parsed goal (often of its wording:
"does the goal say right-side and left-side?", "does it say reaches?"). Then a reworded goal
silently switched tools off, and every tool carried a copy of task knowledge. Here one function,
:func:`needs_of`, turns the typed fields of a :class:`~memory.language.spec.MemorySpec` into needs; each
tool declares the needs it serves (``Tool.serves``) and the layer enables exactly the tools whose
needs the episode has. No tool looks at the goal text.
"""

from __future__ import annotations

from enum import Enum

from memory.language.spec import EvidenceSource, MemorySpec, ReadKind
from memory.language.words import colour_of

__all__ = ["Need", "needs_of"]


class Need(str, Enum):
    """A monitor the episode needs (what to watch, and for which read)."""

    SCENE = "scene"
    """Every episode: the scene's stable items and the colours of what it shows (re-grounding)."""
    COVER_BINDING = "cover_binding"
    """Which cover hides which object (spec ``bindings``)."""
    HIGHLIGHT_MARKS = "highlight_marks"
    """Objects marked during the episode (spec ``highlighted``)."""
    REPETITION_COUNT = "repetition_count"
    """Completed repetitions of an action (spec ``repetitions``)."""
    ROUND_TRIP_COUNT = "round_trip_count"
    """Trips between the two named sides of the layout (``repetitions`` and ``sides`` = right, left)."""
    PER_KIND_COUNT = "per_kind_count"
    """Deposits of each kind into a bin (``counts`` of coloured objects and a ``bin`` in the layout)."""
    EVENT_ORDINAL = "event_ordinal"
    """The k-th arrival of a moving object at a target (``ordinal`` with ``ordinal_event`` arrival)."""
    DEMO_PLACES = "demo_places"
    """Where the demonstration placed a coloured object, by order or relative to an event."""
    DEMO_HANDLED = "demo_handled"
    """Which object the demonstration handled (a demonstrated object to handle again)."""
    DEMO_MANNER = "demo_manner"
    """How the demonstration moved an object (the same manner)."""
    DEMO_GRASP = "demo_grasp"
    """Which part of which object the demonstration grasped and where it went (same peg / end / side)."""
    DEMO_ROUTE = "demo_route"
    """The route the demonstration traced (the same path or pattern)."""


def needs_of(spec: MemorySpec) -> frozenset[Need]:
    """The needs of an episode with specification ``spec`` (ablated reads already removed)."""
    needs = {Need.SCENE}
    video = spec.source is EvidenceSource.VIDEO
    demo_reference = ReadKind.DEMO_REFERENCE in spec.reads
    coloured = [p for p in spec.watch if colour_of(p.split()) is not None]
    if spec.bindings:
        needs.add(Need.COVER_BINDING)
    if spec.highlighted:
        needs.add(Need.HIGHLIGHT_MARKS)
    if spec.repetitions:
        needs.add(Need.REPETITION_COUNT)
        if set(spec.sides) == {"right", "left"}:
            needs.add(Need.ROUND_TRIP_COUNT)
    if "bin" in spec.layout and any(colour_of(p.split()) is not None for p, _ in spec.counts):
        needs.add(Need.PER_KIND_COUNT)
    if (spec.ordinal is not None and ReadKind.EVENT_ORDINAL in spec.reads and "target" in spec.layout
            and spec.ordinal_event == "arrival"):
        needs.add(Need.EVENT_ORDINAL)
    if video and demo_reference and "target" in spec.layout and coloured and (
            spec.ordinal is not None or spec.anchor is not None):
        needs.add(Need.DEMO_PLACES)
    if (video and demo_reference and spec.ordinal is None and spec.anchor is None and not spec.bindings
            and any(p.split()[-1] == "cube" for p in spec.watch)):
        needs.add(Need.DEMO_HANDLED)
    if spec.same and "cube" in spec.watch and ReadKind.PROCEDURE_REFERENCE in spec.reads:
        needs.add(Need.DEMO_MANNER)
    if "peg" in spec.watch and {"peg", "end", "side"} & set(spec.same):
        needs.add(Need.DEMO_GRASP)
    if ReadKind.ROUTE_FILL in spec.reads:
        needs.add(Need.DEMO_ROUTE)
    return frozenset(needs)

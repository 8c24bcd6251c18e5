"""Typed records: the values the memory keeps about one episode.

Each record type answers one kind of history question, and keeping them apart makes
each read explicit about what it relies on:

* :class:`EntityRecord`: who is where and bound to what ("the cover hiding the green
  cube is at (80, 90)"). Its :class:`EntityStatus` separates *identity* (which can stay
  valid after the object leaves view) from *current geometry* (which may go stale).
* :class:`RelationRecord`: a relation between two named things (cube *on* highlight).
* :class:`ProgressRecord`: counts, ordinals and stages accumulated by events.
* :class:`TrajectoryRecord`: an ordered route or procedure plus how far along it we are.
* :class:`LayoutRecord`: stable scene items (targets, buttons, bins).

Records are immutable values; the :class:`~memory.store.memory_store.MemoryStore` changes state only by
replacing one record with another through a logged edit. All of them serialise to
plain JSON dicts and back (:func:`record_from_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any, ClassVar, Union

__all__ = [
    "EntityRecord",
    "EntityStatus",
    "LayoutRecord",
    "ProgressRecord",
    "Record",
    "RelationRecord",
    "Source",
    "TrajectoryRecord",
    "record_from_dict",
]


class EntityStatus(str, Enum):
    """Lifecycle of an entity record.

    ``candidate``: seen once, not yet confirmed by its evidence gate, never read.
    ``verified``: confirmed; safe to read.
    ``uncertain``: identity still believed, current position not (occluded, lost track).
    ``reacquired``: was uncertain, then confirmed again; safe to read.
    """

    CANDIDATE = "candidate"
    VERIFIED = "verified"
    UNCERTAIN = "uncertain"
    REACQUIRED = "reacquired"

    @property
    def readable(self) -> bool:
        """Whether structured access may answer from a record in this state."""
        return self in (EntityStatus.VERIFIED, EntityStatus.REACQUIRED)


class Source(str, Enum):
    """Where the evidence for a record came from."""

    LIVE = "live"
    DEMONSTRATION = "demonstration"

    @classmethod
    def of_frame(cls, frame_source: str) -> Source:
        """Map a frame's ``"video"``/``"live"`` to a record source."""
        return cls.DEMONSTRATION if frame_source == "video" else cls.LIVE


def _position(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    y, x = value
    return (int(y), int(x))


class _Serialisable:
    """``to_dict``/``from_dict`` shared by all record types."""

    kind: ClassVar[str]

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"type": self.kind}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Enum):
                value = value.value
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = value
        return out

    def evolve(self, **changes: Any):
        """A copy with some fields changed (records are immutable)."""
        return replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class EntityRecord(_Serialisable):
    """An object the episode's history says something about.

    Attributes:
        identity: what the object is, in words: ``"green cube"``, ``"container"``.
        role: its role in the task: ``"cube"``, ``"cover"``, ``"target"``.
        position: last trusted pixel position ``(y, x)`` in the front image, if any.
        binding: the history-dependent description it answers to, e.g.
            ``"cover hiding the green cube"``, ``"highlighted cube"``, ``"reference target"``.
        status: lifecycle state; only verified/reacquired records are read.
        source: live interaction or the demonstration video.
    """

    kind: ClassVar[str] = "entity"

    identity: str
    role: str
    position: tuple[int, int] | None = None
    binding: str | None = None
    status: EntityStatus = EntityStatus.CANDIDATE
    source: Source = Source.LIVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _position(self.position))
        object.__setattr__(self, "status", EntityStatus(self.status))
        object.__setattr__(self, "source", Source(self.source))

    @property
    def readable(self) -> bool:
        return self.status.readable

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["position"] = None if self.position is None else list(self.position)
        return out


@dataclass(frozen=True)
class RelationRecord(_Serialisable):
    """A relation ``subject relation object`` (``"blue cube" "on" "highlight"``), with the same lifecycle as entities."""

    kind: ClassVar[str] = "relation"

    subject: str
    relation: str
    object: str
    status: EntityStatus = EntityStatus.CANDIDATE
    source: Source = Source.LIVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", EntityStatus(self.status))
        object.__setattr__(self, "source", Source(self.source))


@dataclass(frozen=True)
class ProgressRecord(_Serialisable):
    """Task progress that no single frame shows.

    Attributes:
        name: what is being counted or staged: ``"repetitions"``, ``"deposited red cube"``.
        count: events verified so far, if it is a counter.
        ordinal: current position in an enumeration (1-based), if it is one.
        stage: a named stage (``"after button press"``), if it is one.
        target: the value the goal asks for, when the instruction says it.
    """

    kind: ClassVar[str] = "progress"

    name: str
    count: int | None = None
    ordinal: int | None = None
    stage: str | None = None
    target: int | None = None

    @property
    def done(self) -> bool | None:
        """Whether ``count`` has reached ``target`` (``None`` when either is unknown)."""
        if self.count is None or self.target is None:
            return None
        return self.count >= self.target


@dataclass(frozen=True)
class TrajectoryRecord(_Serialisable):
    """An ordered route or procedure and the index of the next element to execute.

    Attributes:
        name: ``"demonstrated route"``, ``"demonstrated procedure"``.
        segments: the ordered elements, as words (``"forward-left"``, ``"left clockwise"``).
        index: 0-based index of the next segment; ``len(segments)`` when finished.
        source: where the segments were read from.
    """

    kind: ClassVar[str] = "trajectory"

    name: str
    segments: tuple[str, ...] = ()
    index: int = 0
    source: Source = Source.DEMONSTRATION

    def __post_init__(self) -> None:
        object.__setattr__(self, "segments", tuple(self.segments))
        object.__setattr__(self, "source", Source(self.source))
        if not 0 <= self.index <= len(self.segments):
            raise ValueError(f"trajectory index {self.index} outside 0..{len(self.segments)} for {self.name!r}")

    @property
    def next_segment(self) -> str | None:
        return self.segments[self.index] if self.index < len(self.segments) else None


@dataclass(frozen=True)
class LayoutRecord(_Serialisable):
    """A stable scene item: ``role`` in {target, button, bin, ...}, a distinguishing ``label``, and its position."""

    kind: ClassVar[str] = "layout"

    role: str
    label: str
    position: tuple[int, int] | None = None
    source: Source = Source.LIVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _position(self.position))
        object.__setattr__(self, "source", Source(self.source))

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["position"] = None if self.position is None else list(self.position)
        return out


Record = Union[EntityRecord, RelationRecord, ProgressRecord, TrajectoryRecord, LayoutRecord]
RECORD_TYPES: dict[str, type] = {
    cls.kind: cls for cls in (EntityRecord, RelationRecord, ProgressRecord, TrajectoryRecord, LayoutRecord)
}


def record_from_dict(data: dict) -> Record:
    """Rebuild a record from :meth:`to_dict` output.

    Raises:
        ValueError: if ``data["type"]`` names no record type.
    """
    kind = data.get("type")
    if kind not in RECORD_TYPES:
        raise ValueError(f"unknown record type {kind!r}; expected one of {sorted(RECORD_TYPES)}")
    cls = RECORD_TYPES[kind]
    values = {k: v for k, v in data.items() if k != "type"}
    if "segments" in values:
        values["segments"] = tuple(values["segments"])
    return cls(**values)

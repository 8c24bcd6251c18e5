"""The event interface: one typed :class:`Event`, one :class:`Detector` protocol, one per-store hub.

Why a hub: several tools need the same event (a release of the gripper counts a repetition, a
deposit, a pick of the reference cube, a marked cube's grip), and each used to read it by hand
from the frames with its own copy of the edge logic. Now a detector is built once per episode and
per configuration: a tool asks the hub for the detector of a configuration (its thresholds, a
frozen dataclass) in ``reset``, and reads that detector's events of the current frame in
``observe``. Two tools that ask for the same configuration get the same detector, so they see
the same event.

Feeding: the layer calls :meth:`EventHub.update` with every frame before any tool observes it, so
each detector sees each frame exactly once. A tool run without a layer (unit tests) reads
:meth:`EventHub.events`, which feeds the frame itself the first time it is asked for it: either
way a detector's ``update`` runs once per frame, whichever caller comes first. Detectors read only
what a :class:`~memory.contract.frames.Frame` carries (pixels, the robot's own joint readings and command).

Strides: a tool reads the events of the frames it observes; every tool that reads the hub observes
every frame (``stride`` 1), so it misses none.
"""

from __future__ import annotations

import weakref
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import ClassVar, Literal

from memory.contract.frames import Frame, FrameSource
from memory.store.memory_store import MemoryStore

__all__ = ["Detector", "DetectorConfig", "Event", "EventHub", "EventKind", "events_for"]

EventKind = Literal["grasp", "release", "flash", "pass", "descent", "place", "hold", "press", "lift", "drop"]


@dataclass(frozen=True)
class Event:
    """Something that happened at one step, as one detector saw it.

    Attributes:
        kind: what happened (``grasp``, ``release``, ``flash``, ``pass``, ``descent``, ``place``,
            ``hold``, ``press``, ``lift``, ``drop``).
        step: the step of the frame on which the detector verified it.
        source: the frames it was seen in (``video`` or ``live``).
        point: where, in image coordinates ``(y, x)``, if the event has a place.
        site: an index into the detector's own sites (a flash's target disc), if any.
        time: an interpolated time (a pass's arrival between two sightings), if any.
        tcp: the tool-centre point ``(x, y, z)`` in the arm's base frame (a descent's lowest point), if any.
    """

    kind: EventKind
    step: int
    source: FrameSource = "live"
    point: tuple[float, float] | None = None
    site: int | None = None
    time: float | None = None
    tcp: tuple[float, float, float] | None = None


class DetectorConfig:
    """Mixin of a detector's thresholds (a frozen dataclass): ``build()`` makes its detector.

    The configuration is the detector's identity in the hub: equal thresholds, one detector."""

    detector: ClassVar[type]

    def build(self) -> "Detector":
        return self.detector(self)


class Detector(ABC):
    """Turns frames into events. ``reset`` starts an episode; ``update`` is called once per frame."""

    def __init__(self, config) -> None:
        self.config = config
        self.reset()

    @abstractmethod
    def reset(self) -> None:
        """Forget the last episode."""

    @abstractmethod
    def update(self, frame: Frame) -> list[Event]:
        """The events this frame completes (usually none)."""


class EventHub:
    """The detectors of one memory (one store), each fed once per frame."""

    def __init__(self) -> None:
        self._detectors: dict[object, Detector] = {}
        self._seen: dict[object, Frame] = {}
        self._out: dict[object, list[Event]] = {}

    def reset(self) -> None:
        """A new episode: no detector, nothing seen (tools ask for theirs again in ``reset``)."""
        self._detectors.clear()
        self._seen.clear()
        self._out.clear()

    def attach(self, config: DetectorConfig) -> Detector:
        """The detector for ``config``, fresh for a new episode: a tool calls this in ``reset``
        (before the episode's first frame, so a second tool attaching the same configuration resets
        nothing it has seen) and may keep the detector for the episode."""
        det = self._detectors.get(config)
        if det is None:
            det = self._detectors[config] = config.build()
        else:
            det.reset()
        self._seen.pop(config, None)
        self._out.pop(config, None)
        return det

    def detector(self, config: DetectorConfig) -> Detector:
        """The episode's detector for ``config`` (attached on first request)."""
        det = self._detectors.get(config)
        return det if det is not None else self.attach(config)

    def configs(self) -> list[dict]:
        """The attached detectors' thresholds, JSON-ready (``{"detector": class name, **fields}``),
        for a run's record of what its events meant."""
        return [{"detector": type(d).__name__, **asdict(c)} for c, d in self._detectors.items()]

    def update(self, frame: Frame) -> None:
        """Feed ``frame`` to every detector that has not seen it yet."""
        for config in list(self._detectors):
            self._feed(config, frame)

    def events(self, frame: Frame, config: DetectorConfig) -> list[Event]:
        """The events ``frame`` completes for the detector of ``config`` (fed now if not yet)."""
        self.detector(config)
        self.update(frame)
        return self._out[config]

    def _feed(self, config, frame: Frame) -> None:
        if self._seen.get(config) is frame:
            return
        self._seen[config] = frame
        self._out[config] = self._detectors[config].update(frame)


_HUBS: "weakref.WeakKeyDictionary[MemoryStore, EventHub]" = weakref.WeakKeyDictionary()


def events_for(store: MemoryStore) -> EventHub:
    """The event hub of the memory that owns ``store`` (one per store, made on first use)."""
    hub = _HUBS.get(store)
    if hub is None:
        hub = _HUBS[store] = EventHub()
    return hub

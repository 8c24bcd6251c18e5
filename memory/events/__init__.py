"""Event detectors built once on the robot's own signals and pixels, shared by the memory tools.

One interface (:mod:`memory.events.base`): a detector's thresholds are a frozen dataclass (its
identity: tools asking for equal thresholds share one detector), ``update(frame) -> list[Event]``
runs once per frame (the layer feeds the per-store :class:`EventHub` before the tools observe), and
an :class:`Event` is typed (``kind``, ``step``, ``source``, ``point``, ...).

Detectors and their readers:

* :class:`GripperEdges` (``grasp``, ``release``; :mod:`memory.events.gripper`): the repetition
  counter, the deposit counter, the reference-cube pick count (demo_handled) and the highlight
  marks, all on one live instance (:data:`GRIPPER_LIVE`).
* :class:`LiftDetector` (``lift``, ``drop``: a grip that held something and rose, and its slip;
  :mod:`memory.events.lift`): the reference-cube pick count (demo_handled), on one live instance
  (:data:`LIFT_LIVE`).
* :class:`FlashDetector` (``flash``; :mod:`memory.events.flash`): the flash counter.
* :class:`PassDetector` (``pass``; :mod:`memory.events.passes`): the pass timer.
* :class:`DescentDetector` (``descent``, the hand's stay at the table, with its lowest point;
  :mod:`memory.events.descent`): the grasp and put-down of the demonstration in demo_handled, and
  the peg reader's grasp.
* :class:`DwellDetector` (``place``, ``hold``: the carried object at rest; :mod:`memory.events.dwell`)
  and :class:`PressDetector` (``press``: the hand down at the button; :mod:`memory.events.press`):
  demo_places.

Not here: demo_places' pixel fallback for a press (the arm's pixels over the button while the
object rests on a target: it needs the tool's own places), and the manner reader's low-travel and
carry integration (sums over the whole video, not events). The counting decision the counters
share is :mod:`memory.control.count_gate`.

Tracking (the colour-blob ``_Track`` and the cover tracker) is deliberately not one shared tracker
here; see :mod:`memory.events.tracking` for why, and why not ``supervision``'s ByteTrack.
"""

from memory.events.base import Detector, DetectorConfig, Event, EventHub, EventKind, events_for
from memory.events.descent import DescentConfig, DescentDetector
from memory.events.dwell import DwellConfig, DwellDetector
from memory.events.flash import Flash, FlashConfig, FlashDetector, Site, find_flashes
from memory.events.gripper import GRIPPER_LIVE, GripperConfig, GripperEdges
from memory.events.lift import LIFT_LIVE, LiftConfig, LiftDetector, sensed_grip
from memory.events.passes import PassConfig, PassDetector
from memory.events.press import PressConfig, PressDetector

__all__ = [
    "GRIPPER_LIVE",
    "DescentConfig",
    "DescentDetector",
    "Detector",
    "DetectorConfig",
    "DwellConfig",
    "DwellDetector",
    "Event",
    "EventHub",
    "EventKind",
    "Flash",
    "FlashConfig",
    "FlashDetector",
    "GripperConfig",
    "GripperEdges",
    "LIFT_LIVE",
    "LiftConfig",
    "LiftDetector",
    "PassConfig",
    "PassDetector",
    "PressConfig",
    "PressDetector",
    "Site",
    "events_for",
    "find_flashes",
    "sensed_grip",
]

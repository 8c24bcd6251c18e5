"""A last-seen memory: the smallest useful memory, written only against :mod:`memory.contract.interface`.

It remembers where each colour named in the goal was last seen in the front camera, and when a
proposed subgoal names a colour that is not in view now, it points the subgoal at the last place
that colour was seen. That is the classic object-permanence baseline: right while nothing moves
after the object disappears, wrong after a swap. Run it exactly like our memory::

    python -m experiments.run --preset quick --conditions memory:memory.examples.last_seen:LastSeenMemory

It keeps its state in a :class:`memory.store.memory_store.MemoryStore` (typed records with an edit history),
so the audit reads its snapshots like ours. It uses only frames, the goal text and proposals.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from memory.control.access import ReadTrace
from memory.contract.frames import Frame
from memory.layer import Revision
from memory.store.records import EntityRecord, EntityStatus, Source
from memory.store.memory_store import MemoryStore
from memory.perception.blobs import find_blobs
from memory.language.words import COLOUR_WORDS
from subgoals.grammar import Point, points, replace_point

__all__ = ["LastSeenMemory"]


class LastSeenMemory:
    """Last-seen position of every colour the goal names; re-points subgoals at colours out of view.

    Args:
        min_area: smallest blob (pixels) that counts as a sighting.
    """

    render_stride = 4  # front frame every 4 live steps (like our tools), and the whole video
    render_video = True

    def __init__(self, min_area: int = 12) -> None:
        self.min_area = min_area
        self.store = MemoryStore()
        self.colours: tuple[str, ...] = ()
        self._traces: list[ReadTrace] = []
        self._time = 0.0

    # -------------------------------------------------------------- interface
    def reset(self, goal: str, demo_frames: Sequence[Frame]) -> None:
        self.store.reset()
        self._traces = []
        words = goal.lower().replace(",", " ").split()
        self.colours = tuple(dict.fromkeys(w for w in words if w in COLOUR_WORDS))
        for frame in demo_frames:
            self.observe(frame)

    def observe(self, frame: Frame) -> None:
        if frame.rgb is None or not self.colours:
            return
        t0 = time.perf_counter()
        for colour, blob in self._sightings(frame).items():
            key = f"last_seen/{colour}"
            record = EntityRecord(identity=f"{colour} object", role="object", position=blob.point.as_tuple(),
                                  status=EntityStatus.VERIFIED,
                                  source=Source.DEMONSTRATION if frame.source == "video" else Source.LIVE)
            old = self.store.get(key)
            if old is None:
                self.store.add(key, record, step=frame.step, reason=f"{colour} first seen")
            elif old.position != record.position:
                self.store.update(key, record, step=frame.step, reason=f"{colour} seen elsewhere")
        self._time += time.perf_counter() - t0

    def revise(self, proposed: str, frame: Frame) -> Revision:
        colour = next((w for w in proposed.lower().replace(",", " ").split() if w in self.colours), None)
        if colour is None or not points(proposed) or (frame.rgb is not None and colour in self._sightings(frame)):
            return Revision(text=proposed, rewritten=False, trace=None)  # nothing out of view to recall
        record = self.store.get(f"last_seen/{colour}")
        if record is None or record.position is None:
            trace = self._trace(frame, proposed, colour, None, proposed, abstained=True, reason="no-record: never seen")
            return Revision(text=proposed, rewritten=False, trace=trace, traces=(trace,))
        revised = replace_point(proposed, 0, Point(*record.position))
        trace = self._trace(frame, proposed, colour, f"{colour} last seen at {record.position}", revised,
                            abstained=False, reason="read: last seen position")
        return Revision(text=revised, rewritten=revised != proposed, trace=trace, traces=(trace,))

    def snapshot(self, step: int) -> dict:
        snap = self.store.snapshot(step).to_dict()
        snap["traces"] = [t.to_dict() for t in self._traces if t.step <= step]
        return snap

    def diagnostics(self) -> dict:
        return {"colours": list(self.colours), "reads": sum(not t.abstained for t in self._traces),
                "abstentions": sum(t.abstained for t in self._traces), "time_s": round(self._time, 6),
                "records": len(self.store.snapshot().records)}

    def time_s(self) -> float:
        return self._time

    # -------------------------------------------------------------- helpers
    def _sightings(self, frame: Frame) -> dict:
        """The largest blob of each goal colour in ``frame``."""
        blobs = find_blobs(frame.rgb, self.colours, min_area=self.min_area)
        best: dict = {}
        for b in blobs:
            if b.colour not in best or b.area > best[b.colour].area:
                best[b.colour] = b
        return best

    def _trace(self, frame, proposed, colour, answer, rewritten, *, abstained, reason) -> ReadTrace:
        trace = ReadTrace(step=frame.step, query=f"where was the {colour} object last seen?", proposed=proposed,
                          answer=answer, record_key=f"last_seen/{colour}", record_status=None if answer is None else "verified",
                          rewritten=rewritten, abstained=abstained, reason=reason, kind="last_seen")
        self._traces.append(trace)
        return trace

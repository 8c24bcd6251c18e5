"""One blob tracker: nearest-centroid association inside a jump limit, and a sighting / miss lifecycle.

:class:`BlobTrack` follows one watched object from frame to frame: a sighting near the last one (or
near the record's position, before any) continues the track, ``confirm_frames`` of them in a row
confirm it, ``lose_frames`` misses in a row lose it, and a lost track takes the object wherever it
reappears. The colour-blob tool's entity records run on it (it was the tool's private ``_Track``).

Why not ``supervision`` (its ``Detections``, ``ByteTrack``, ``LineZone`` / ``PolygonZone``). Read
from its documentation (supervision.roboflow.com, trackers and detection/tools/line_zone pages):

* ``ByteTrack`` associates boxes by IoU against a constant-velocity Kalman prediction, in two passes
  split by detection confidence. Our detections are colour blobs (centroid, area, box) with no
  confidence, so the two passes collapse into one IoU match, and IoU is the wrong affinity here:
  at the live render stride a swapped container moves 12 px between frames, about half its own
  width, so its box overlaps the neighbour it is passing more than its own last box, and two
  look-alikes crossing trade identities; swaps follow a smoothstep (start and end at rest) that a
  constant-velocity prediction overshoots; two touching cubes render as one blob, i.e. one box for
  two tracks.
* Occlusion by the robot: a lost track survives ``lost_track_buffer`` frames and is re-matched by
  IoU to whatever box appears near its prediction. When the arm stands over a container, the arm's
  gray faces render in the containers' palette and become a box that matches; what keeps our
  bindings true is the arm's own kinematics (the projected skeleton holds a track), the lift-off
  rule and optical flow of the container's own features (:mod:`memory.tools.cover_tracker`),
  none of which an IoU tracker has.
* ``LineZone`` counts a tracker id's box anchors crossing a line, in or out; the pass timer needs a
  point target (a disc) crossed within ``cross_px``, verified ``past_px`` beyond, arrivals at least
  ``min_separation`` apart, and the interpolated arrival *time* (the press is timed on it), which
  ``LineZone`` does not give. ``PolygonZone`` is an in-zone test our distance checks already are.
* Cost: the dependency (and ``ByteTrack`` itself, deprecated in supervision 0.28 for the separate
  ``trackers`` package) for a few lines of geometry, and every result would move for the IoU
  matcher's sake. So it is not added.

Why the cover tracker keeps its own track (:class:`memory.tools.cover_tracker.CoverTrack`): its
identity is optical flow of the container's pixels checked against re-detection, with occlusion and
lift-off rules and a widening recovery search that never steals another track's container; the
words of its lifecycle are the same (verified / uncertain / lost / reacquired) but its transitions
are not (``patience`` then recovery steps, versus ``lose_frames`` here). Folding it onto this
nearest-centroid track would change the cover bindings, which is exactly what flow is there to
prevent.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.perception.blobs import Blob

__all__ = ["BlobTrack", "TrackConfig"]


@dataclass(frozen=True)
class TrackConfig:
    """Thresholds of a blob track (256 x 256 front camera, live stride 4, video stride 2).

    max_jump: the largest centroid move (px) between two sightings of one object: a cube carried by
        the gripper moves up to about 20 px between rendered frames; a look-alike farther than that
        is another object.
    confirm_frames: sightings in a row that verify the object (one frame can be a passing speck of
        the same colour; two rendered frames cannot).
    lose_frames: misses in a row before the object is lost (the gripper or a container hides a cube
        for a few frames while it is grasped; five frames is longer than that).
    """

    max_jump: float = 24.0
    confirm_frames: int = 2
    lose_frames: int = 5


@dataclass
class BlobTrack:
    """Per-object evidence state between frames."""

    config: TrackConfig
    streak: int = 0
    misses: int = 0
    lost: bool = False
    last: tuple[float, float] | None = None

    def associate(self, blobs: list[Blob], fallback: tuple[float, float] | None = None) -> Blob | None:
        """The blob that continues this track: the nearest within ``max_jump`` of the last sighting
        (or of ``fallback``, the record's position, before any); a lost track takes the first blob
        (the largest), wherever it is."""
        anchor = None if self.lost else (self.last or fallback)
        if anchor is None:
            return blobs[0] if blobs else None
        near = [b for b in blobs if b.distance(anchor) <= self.config.max_jump]
        return min(near, key=lambda b: b.distance(anchor)) if near else None

    def hit(self, blob: Blob) -> None:
        """A sighting: the streak grows, the misses and the loss end."""
        self.misses = 0
        self.lost = False
        self.streak += 1
        self.last = (blob.y, blob.x)

    def miss(self) -> bool:
        """No sighting; whether the track is lost now (``lose_frames`` misses in a row or more)."""
        self.streak = 0
        self.misses += 1
        if self.misses >= self.config.lose_frames:
            self.last = None
            self.lost = True
            return True
        return False

    @property
    def confirmed(self) -> bool:
        return self.streak >= self.config.confirm_frames

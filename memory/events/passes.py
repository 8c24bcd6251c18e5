"""Pass: a moving object crossing a target disc and going on beyond it, with its arrival time.

Moved here from the pass timer (which times these events): the target (a saturated purple disc read
from the first live frames), the moving object (what differs from a background that takes every
pixel once it has stood still for two rendered frames), and the crossing test on consecutive
sightings. Everything is read from pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from memory.events.base import Detector, DetectorConfig, Event
from memory.contract.frames import Frame
from memory.perception.layout_pixels import purple_blobs
from memory.perception.morphology import open_

__all__ = ["PassConfig", "PassDetector"]

_EIGHT = np.ones((3, 3), dtype=bool)
TARGET_FRAMES = 2
"""Rendered frames a purple place must be seen in (within 3 px) before it can be the target."""


@dataclass(frozen=True)
class PassConfig(DetectorConfig):
    """Thresholds of the pass detector (live frames, 256 x 256 front camera, stride 4).

    still_threshold: a pixel whose RGB changes less than this between two frames stands still
        (render noise and shading stay under 10; the sliding cube changes its pixels by 50+).
    diff_threshold: a pixel this far from the background belongs to something that moved.
    min_area, max_area: a moving component of this size (px) can be the object (a cube covers about
        100-400 px; the arm reaching in is larger, specks smaller).
    max_jump: the object seen within this of its last sighting (it slides about 4 px per step, so
        under 20 px between rendered frames; the margin covers a dropped frame) is the same object.
    cross_px: a segment between two sightings passing within this of the target's centre crosses it
        (the disc's radius is about 10 px).
    past_px: the pass is verified once the object is this far beyond the target along its motion
        (a sighting on the target has reached it, not passed it).
    max_gap: two sightings at most this many steps apart are consecutive (three rendered frames).
    min_separation: arrivals closer than this (steps) are one pass (the back-and-forth period is 40+
        steps; two sightings either side of the target can both look like crossings).
    """

    still_threshold: int = 12
    diff_threshold: int = 30
    min_area: int = 30
    max_area: int = 900
    max_jump: float = 40.0
    cross_px: float = 10.0
    past_px: float = 3.0
    max_gap: int = 12
    min_separation: int = 20


class PassDetector(Detector):
    """A ``pass`` event (``time``: the interpolated arrival; ``step``: the frame that verified it)."""

    config: PassConfig

    def reset(self) -> None:
        self.target: tuple[float, float] | None = None
        self._target_seen: list[list] = []  # [y, x, frames seen there] per purple place
        self._bg: np.ndarray | None = None
        self._prev: np.ndarray | None = None
        self._still: np.ndarray | None = None
        self.track: list[tuple[int, float, float, int]] = []  # (step, y, x, area)
        self.arrivals: list[float] = []
        self._pending: tuple[float, np.ndarray] | None = None  # (arrival step, direction) of a pass not yet beyond
        self.sighting: tuple[float, float, int] | None = None  # the object in the latest frame, if seen
        self._step = 0

    def _read_target(self, rgb: np.ndarray) -> None:
        """The target is the purple place seen in the most frames, once it has been seen in
        ``TARGET_FRAMES`` and more often than any other. Why not the largest purple blob: the moving
        object may be purple too, and larger in the image; it also stands still where its motion
        starts, but only the disc keeps standing at one place while the object moves on (a tie
        waits)."""
        for y, x, _ in purple_blobs(rgb):
            seen = next((p for p in self._target_seen if np.hypot(y - p[0], x - p[1]) <= 3), None)
            if seen is None:
                self._target_seen.append([y, x, 1])
            else:
                seen[2] += 1
        ranked = sorted(self._target_seen, key=lambda p: -p[2])
        if ranked and ranked[0][2] >= TARGET_FRAMES and (len(ranked) == 1 or ranked[0][2] > ranked[1][2]):
            self.target = (ranked[0][0], ranked[0][1])

    def _update_background(self, rgb: np.ndarray) -> None:
        """The background takes the current value of every pixel that stayed still for two frames."""
        img = rgb.astype(np.int16)
        if self._bg is None:
            self._bg, self._prev, self._still = img.copy(), img, np.ones(img.shape[:2], dtype=bool)
            return
        still = np.abs(img - self._prev).max(axis=-1) < self.config.still_threshold
        settled = still & self._still
        self._bg[settled] = img[settled]
        self._prev, self._still = img, still

    def _find_object(self, rgb: np.ndarray) -> tuple[float, float, int] | None:
        c = self.config
        if self._bg is None:
            return None
        diff = np.abs(rgb.astype(np.int16) - self._bg).max(axis=-1) > c.diff_threshold
        diff = open_(diff)
        labels, n = ndimage.label(diff, structure=_EIGHT)
        if n == 0:
            return None
        idx = np.arange(1, n + 1)
        areas = ndimage.sum_labels(diff, labels, idx)
        centres = ndimage.center_of_mass(diff, labels, idx)
        comps = [(float(cy), float(cx), int(a)) for a, (cy, cx) in zip(areas, centres)
                 if c.min_area <= a <= c.max_area]
        if not comps:
            return None
        if self.track and self._step - self.track[-1][0] <= 2 * c.max_gap:
            _, py, px, _ = self.track[-1]
            near = [m for m in comps if np.hypot(m[0] - py, m[1] - px) <= c.max_jump]
            if near:
                return min(near, key=lambda m: np.hypot(m[0] - py, m[1] - px))
        # (re)acquisition: the component nearest to the target
        return min(comps, key=lambda m: np.hypot(m[0] - self.target[0], m[1] - self.target[1]))

    def update(self, frame: Frame) -> list[Event]:
        self.sighting = None
        if frame.source != "live" or frame.rgb is None:
            return []
        step = frame.step
        self._step = step
        if self.target is None:
            self._read_target(frame.rgb)
        if self.target is None:
            self._update_background(frame.rgb)
            return []
        obj = self._find_object(frame.rgb)
        self._update_background(frame.rgb)
        if obj is None:
            return []
        y, x, area = obj
        out: list[Event] = []
        if self.track:
            t = self._crossing(self.track[-1], (step, y, x, area))
            if t is not None:
                out.append(Event("pass", step, frame.source, point=self.target, time=t))
        self.track = (self.track + [(step, y, x, area)])[-64:]
        self.sighting = obj
        return out

    def _crossing(self, a: tuple, b: tuple) -> float | None:
        """The arrival time of a pass these two sightings verify, if any."""
        c = self.config
        (t0, y0, x0, a0), (t1, y1, x1, a1) = a, b
        p1, T = np.array([y1, x1]), np.array(self.target)
        if self._pending is not None:
            # a pass seen reaching the target: verified once the object is beyond it
            t, direction = self._pending
            if float((p1 - T) @ direction) >= c.past_px:
                self._pending = None
                return self._count(t)
            if t1 - t > 3 * c.max_gap:
                self._pending = None  # it never went on: not a verified pass
            return None
        p0 = np.array([y0, x0])
        # sightings of very different sizes are two things, unless one of them is over the target:
        # an object the disc's own colour differs from it only at its edges there
        on_target = min(float(np.hypot(*(p0 - T))), float(np.hypot(*(p1 - T)))) <= c.cross_px
        if t1 - t0 > c.max_gap or (max(a0, a1) > 3 * min(a0, a1) and not on_target):
            return None
        seg = p1 - p0
        L2 = float(seg @ seg)
        if L2 < 1.0:
            return None
        lam = float((T - p0) @ seg) / L2
        if not 0.0 < lam <= 1.0:
            return None
        closest = p0 + lam * seg
        if float(np.hypot(*(closest - T))) > c.cross_px:
            return None
        t = t0 + lam * (t1 - t0)
        if self.arrivals and t - self.arrivals[-1] < c.min_separation:
            return None
        direction = seg / np.sqrt(L2)
        if float((p1 - T) @ direction) >= c.past_px:
            return self._count(t)
        self._pending = (t, direction)
        return None

    def _count(self, t: float) -> float | None:
        if self.arrivals and t - self.arrivals[-1] < self.config.min_separation:
            return None
        self.arrivals.append(t)
        return t


PassConfig.detector = PassDetector

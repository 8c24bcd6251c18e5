"""Flash: a lit target disc (red rings with white between them), verified on two frames, one per lit period.

Moved here from the flash counter, which counts these events; the pixel predicate
(:func:`find_flashes`) and the sites (:class:`Site`, one per target disc) live with the detector.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from memory.events.base import Detector, DetectorConfig, Event
from memory.contract.frames import Frame
from memory.perception.blobs import hsv
from memory.perception.morphology import close, dilate

__all__ = ["Flash", "FlashConfig", "FlashDetector", "Site", "find_flashes", "red_mask"]

_EIGHT = np.ones((3, 3), dtype=bool)


@dataclass(frozen=True)
class Flash:
    """A flash-shaped red group in one frame: centroid, bounding-box size, hollowness."""

    y: float
    x: float
    width: int
    height: int
    hollow: float

    def distance(self, yx) -> float:
        return float(np.hypot(self.y - yx[0], self.x - yx[1]))


def red_mask(rgb: np.ndarray, max_hue_gap: float = 12.0, min_saturation: float = 0.75, min_value: int = 80) -> np.ndarray:
    hue, sat, val = hsv(rgb)
    near_red = (hue <= max_hue_gap) | (hue >= 360.0 - max_hue_gap)
    return near_red & (sat >= min_saturation) & (val >= min_value)


def find_flashes(rgb: np.ndarray, min_width: int = 10, max_width: int = 60, min_red: int = 25, min_white: int = 25,
                 min_white_share: float = 0.08, min_rings: int = 1) -> list[Flash]:
    """Lit target discs: red rings with white rings between them.

    The red pixels are grouped (a small dilation joins concentric rings); a group is a flash when
    it is wide enough and its closed interior
    holds enough white (unsaturated, bright) pixels that are not red: the white rings of the disc.
    A red cube is one solid red piece with nothing white inside. The centre is the centroid of the
    white rings, which stays put when a carried object covers part of the red.
    """
    mask = red_mask(rgb)
    if mask.sum() < min_red:
        return []
    _, sat, val = hsv(rgb)
    white = (sat < 0.2) & (val > 170)
    grouped = dilate(mask, iterations=2)
    labels, n = ndimage.label(grouped, structure=_EIGHT)
    out = []
    for i, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None:
            continue
        h, w = box[0].stop - box[0].start - 4, box[1].stop - box[1].start - 4  # undo the dilation
        if not (min_width <= w <= max_width and min_width // 2 <= h <= max_width):
            continue
        red = mask[box] & (labels[box] == i)
        if int(red.sum()) < min_red:
            continue
        pieces = ndimage.label(red, structure=_EIGHT)[0]
        sizes = np.bincount(pieces.ravel())[1:]
        if int((sizes >= 4).sum()) < min_rings:
            continue
        interior = ndimage.binary_fill_holes(close(red, iterations=3))
        inner_white = white[box] & interior & ~red
        n_white = int(inner_white.sum())
        share = n_white / max(int(interior.sum()), 1)
        if n_white < min_white or share < min_white_share:
            continue
        wy, wx = np.nonzero(inner_white)
        out.append(Flash(float(wy.mean() + box[0].start), float(wx.mean() + box[1].start), int(w), int(h), share))
    return out


@dataclass
class Site:
    """A place where flashes were seen (a target disc)."""

    y: float
    x: float
    last_lit: int | None = None  # last step a flash-shaped group was seen here
    streak: list[int] = field(default_factory=list)  # steps of the current run of sightings
    counted: bool = False  # the current lit period has been counted
    visits: int = 0

    @property
    def point(self) -> tuple[int, int]:
        return int(round(self.y)), int(round(self.x))


@dataclass(frozen=True)
class FlashConfig(DetectorConfig):
    """Thresholds of the flash detector (live frames, 256 x 256 front camera, stride 4).

    still_px: a flash seen on two frames stays within this of its site (a lit disc does not move;
        a carried red cube moves more than 6 px between two rendered frames).
    site_px: a flash this close to a known site is that site (the two side targets lie far apart;
        the white-ring centroid wanders 2-3 px while the arm covers part of the disc).
    relight_gap: a site lit again within this many steps is the same lit period, hidden for a frame
        or two by the arm (the re-entry guard: one lit period, one visit).
    frame_gap: two sightings this many steps apart at most are consecutive (two rendered frames at
        the live render stride 4, with one dropped).
    """

    still_px: float = 6.0
    site_px: float = 10.0
    relight_gap: int = 24
    frame_gap: int = 8


class FlashDetector(Detector):
    """One ``flash`` event (with its ``site``) per lit period of a target disc, on its second frame."""

    config: FlashConfig

    def reset(self) -> None:
        self.sites: list[Site] = []
        self.rejected = 0  # flash-shaped groups lit in one frame only
        self.last_step: int | None = None

    def site_for(self, f: Flash) -> int | None:
        if not self.sites:
            return None
        d = [f.distance((s.y, s.x)) for s in self.sites]
        i = int(np.argmin(d))
        return i if d[i] <= self.config.site_px else None

    def pending(self) -> int | None:
        """A site lit in the latest frame whose lit period is not counted yet (its second frame is awaited)."""
        for i, s in enumerate(self.sites):
            if s.streak and s.streak[-1] == self.last_step and not s.counted:
                return i
        return None

    def update(self, frame: Frame) -> list[Event]:
        if frame.source != "live" or frame.rgb is None:
            return []
        step = frame.step
        out: list[Event] = []
        seen_sites: set[int] = set()
        for f in find_flashes(frame.rgb):
            i = self.site_for(f)
            if i is None:
                self.sites.append(Site(f.y, f.x))
                i = len(self.sites) - 1
            if i in seen_sites:
                continue
            seen_sites.add(i)
            if self._sighting(i, f, step):
                out.append(Event("flash", step, frame.source, point=self.sites[i].point, site=i))
        for i, s in enumerate(self.sites):  # a site not lit now ends its run
            if i not in seen_sites and s.streak and step - s.streak[-1] > self.config.frame_gap:
                if len(s.streak) == 1 and not s.counted:
                    self.rejected += 1  # lit in one frame only: not a verified flash
                s.streak = []
        self.last_step = step
        return out

    def _sighting(self, i: int, f: Flash, step: int) -> bool:
        """Record a sighting at site ``i``; whether it completes a new lit period (a visit)."""
        c = self.config
        s = self.sites[i]
        previous_lit = s.last_lit
        if s.streak and step - s.streak[-1] <= c.frame_gap and f.distance((s.y, s.x)) <= c.still_px:
            s.streak.append(step)
        else:
            s.streak = [step]
            # a new run: a new lit period only if the site was dark long enough (re-entry guard)
            if previous_lit is not None and step - previous_lit < c.relight_gap:
                pass  # the same lit period, seen again after an occlusion
            else:
                s.counted = False
        s.last_lit = step
        if len(s.streak) == 1:
            # the first sighting fixes the site position (the flash disc lies exactly on the target)
            s.y, s.x = 0.5 * (s.y + f.y), 0.5 * (s.x + f.x)
            return False
        if s.counted:
            return False
        s.counted = True
        s.visits += 1
        return True


FlashConfig.detector = FlashDetector

"""Counts visits of two side targets from their red flashes, and gates "swing again or put down".

The goal names a back-and-forth between a right-side and a left-side target, done N times. The
scene keeps no trace of how many round trips are done, but each time the carried object enters a
target, that target lights up red for a short while. This tool counts those flashes.

Evidence for one visit (the evidence gate):

* a *flash*: a group of saturated pure-red pixels (hue within 12 degrees of red, saturation >=
  0.75: the wooden table is orange with saturation about 0.6) with the shape of a lit target
  disc, concentric red rings with white rings between them (:func:`find_flashes`); a red cube is
  red too, but one solid piece with nothing white inside;
* seen in two consecutive rendered frames at the same place (within ``still_px``): a flash is
  stationary, a carried cube is not;
* a *re-entry guard*: one lit period is one visit. A site that was seen lit within the last
  ``relight_gap`` steps (occlusion by the arm can hide a flash for a frame or two) does not count
  again; it must stay dark that long first.

Each verified flash is associated with a *site* (a target position, within ``site_px``). Which
side a site is on comes from the layout: the front camera looks back at the robot, so the robot's
right is the image's left. With two sites known, the one with the smaller image column is the
right-side target; with one, the image half it lies in decides.

Progress state: ``progress/target visits`` (all verified visits, target 2N) and
``progress/round trips`` (visits of the left-side target, the end of each round trip, target N),
and layout records for the two flash sites.

The gate (read kind ``count_gate``) fires only on the proposals that continue the swing ("move to
the top of the <side>-side target ...") or end it ("put the <object> on the table"). From the
verified visits it computes what comes next: after a right-side visit, the left-side target for
the same round trip; after a left-side visit, the right-side target for the next round trip while
fewer than N are done, otherwise putting the object down. A proposal that disagrees (wrong side,
putting down too early, swinging once too often) is rewritten into that; a proposal's position word
("for the second time") is the proposer's count, never evidence, and is not read; a point
for a target comes from its flash site. While a flash awaits its second frame (the count is about
to change), the gate decides nothing: it holds the object over the target that just lit, which
makes no new visit, and decides at the next query. Rewrites are latched per (proposal, visit count,
pending flash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from memory.frames import Frame
from memory.needs import Need
from memory.records import LayoutRecord, ProgressRecord
from memory.spec import MemorySpec, ReadKind
from memory.store import MemoryStore
from memory.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import hsv
from subgoals import phrases
from subgoals.edits import Replace, SubgoalEdit
from subgoals.grammar import try_parse

VISITS_KEY = "progress/target visits"
TRIPS_KEY = "progress/round trips"
SIDES = ("right", "left")
_SIDE_PHRASE = re.compile(r"\b(right|left)-side (\w+)")
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
    grouped = ndimage.binary_dilation(mask, structure=_EIGHT, iterations=2)
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
        interior = ndimage.binary_fill_holes(ndimage.binary_closing(red, structure=_EIGHT, iterations=3))
        inner_white = white[box] & interior & ~red
        n_white = int(inner_white.sum())
        share = n_white / max(int(interior.sum()), 1)
        if n_white < min_white or share < min_white_share:
            continue
        wy, wx = np.nonzero(inner_white)
        out.append(Flash(float(wy.mean() + box[0].start), float(wx.mean() + box[1].start), int(w), int(h), share))
    return out


@dataclass
class _Site:
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


@register_tool(order=40)
class FlashCounter(Tool):
    name = "flash_counter"
    serves = frozenset({Need.ROUND_TRIP_COUNT})
    group = "progress"
    gate_kind = ReadKind.COUNT_GATE
    render = RenderNeed(stride=4, video=False)

    def __init__(self, still_px: float = 6.0, site_px: float = 10.0, relight_gap: int = 24,
                 frame_gap: int = 8, image_width: int = 256):
        self.still_px = still_px
        self.site_px = site_px
        self.relight_gap = relight_gap
        self.frame_gap = frame_gap
        self.image_width = image_width
        self.target: int | None = None

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        self.target = spec.repetitions if self.active else None
        self.phrase = spec.watch[0] if spec.watch else None
        self.sites: list[_Site] = []
        self.events: list[tuple[int, int]] = []  # (step, site index)
        self.rejected = 0
        self._last_rgb_step: int | None = None
        self._latched: tuple | None = None
        self._gate_calls = 0
        self._rewrites = 0
        if self.active:
            store.add(VISITS_KEY, ProgressRecord(name="target visits", count=0, target=2 * self.target),
                      step=store.last_step or 0, reason=f"goal asks for {self.target} round trips between two targets")
            store.add(TRIPS_KEY, ProgressRecord(name="round trips", count=0, target=self.target),
                      step=store.last_step or 0, reason=f"goal asks for {self.target} round trips")

    # ------------------------------------------------------------------ evidence
    def _site_for(self, f: Flash) -> int | None:
        if not self.sites:
            return None
        d = [f.distance((s.y, s.x)) for s in self.sites]
        i = int(np.argmin(d))
        return i if d[i] <= self.site_px else None

    def side_of(self, index: int) -> str | None:
        """'right' or 'left' (robot frame) for a site; the camera mirrors: robot right = image left."""
        s = self.sites[index]
        others = [o for j, o in enumerate(self.sites) if j != index and o.visits]
        if others:
            other = max(others, key=lambda o: abs(o.x - s.x))  # the site across
            if abs(other.x - s.x) > 2 * self.site_px:
                return "right" if s.x < other.x else "left"
        return "right" if s.x < self.image_width / 2 else "left"

    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active or frame.source != "live" or frame.rgb is None:
            return
        step = frame.step
        flashes = find_flashes(frame.rgb)
        seen_sites: set[int] = set()
        for f in flashes:
            i = self._site_for(f)
            if i is None:
                self.sites.append(_Site(f.y, f.x))
                i = len(self.sites) - 1
            if i in seen_sites:
                continue
            seen_sites.add(i)
            self._sighting(i, f, step, store)
        for i, s in enumerate(self.sites):  # a site not lit now ends its run
            if i not in seen_sites and s.streak and step - s.streak[-1] > self.frame_gap:
                if len(s.streak) == 1 and not s.counted:
                    self.rejected += 1  # lit in one frame only: not a verified flash
                s.streak = []
        self._last_rgb_step = step

    def _sighting(self, i: int, f: Flash, step: int, store: MemoryStore) -> None:
        s = self.sites[i]
        previous_lit = s.last_lit
        if s.streak and step - s.streak[-1] <= self.frame_gap and f.distance((s.y, s.x)) <= self.still_px:
            s.streak.append(step)
        else:
            s.streak = [step]
            # a new run: a new lit period only if the site was dark long enough (re-entry guard)
            if previous_lit is not None and step - previous_lit < self.relight_gap:
                pass  # the same lit period, seen again after an occlusion
            else:
                s.counted = False
        s.last_lit = step
        if len(s.streak) == 1:
            # the first sighting fixes the site position (the flash disc lies exactly on the target)
            s.y, s.x = 0.5 * (s.y + f.y), 0.5 * (s.x + f.x)
            return
        if s.counted:
            return
        s.counted = True
        s.visits += 1
        self.events.append((step, i))
        self._commit(step, store, f"flash seen twice at {s.point} (ring shape, stationary)")

    def counts(self) -> tuple[int, int, str | None]:
        """(right-side visits, left-side visits, side of the last visit) from the verified events."""
        right = left = 0
        last = None
        for _, i in self.events:
            side = self.side_of(i)
            if side == "right":
                right += 1
            else:
                left += 1
            last = side
        return right, left, last

    def _commit(self, step: int, store: MemoryStore, reason: str) -> None:
        right, left, _ = self.counts()
        self.commit(store, VISITS_KEY, ProgressRecord(name="target visits", count=right + left, target=2 * self.target),
                    step=step, reason=reason, accepted=True)
        self.commit(store, TRIPS_KEY, ProgressRecord(name="round trips", count=left, target=self.target),
                    step=step, reason=reason + "; round trips = left-side visits", accepted=True)
        for i, s in enumerate(self.sites):
            if s.visits:
                side = self.side_of(i)
                self.commit(store, f"layout/{side}-side target", LayoutRecord(role="side target", label=f"{side}-side target",
                                                                              position=s.point),
                            step=step, reason="a verified flash lit this place", accepted=True)

    # ------------------------------------------------------------------ gate
    def site_point(self, side: str) -> tuple[int, int] | None:
        for i, s in enumerate(self.sites):
            if s.visits and self.side_of(i) == side:
                return s.point
        return None

    def pending_site(self) -> int | None:
        """A site lit in the latest frame whose lit period is not counted yet (its second frame is awaited)."""
        for i, s in enumerate(self.sites):
            if s.streak and s.streak[-1] == self._last_rgb_step and not s.counted:
                return i
        return None

    def expected(self) -> tuple[str, int] | None:
        """What comes next: ('right'|'left', round trip k) to visit, ('put', 0) to end; None if unknown."""
        if self.target is None:
            return None
        right, left, last = self.counts()
        if last is None:
            return ("right", 1)
        if last == "right":
            return ("left", max(right, 1))
        if left < self.target:
            return ("right", left + 1)
        return ("put", 0)

    def gate(self, proposed: str, store: MemoryStore) -> SubgoalEdit | None:
        if not self.active:
            return None
        self._gate_calls += 1
        key = (proposed, len(self.events), self.pending_site())
        out, fresh = self.latched(key, lambda: self._decide(proposed))
        if fresh and out is not None:
            self._rewrites += 1
        return out

    def _decide(self, proposed: str) -> SubgoalEdit | None:
        sg = try_parse(proposed)
        if sg is None:
            return None
        text = proposed.lower()
        verb = sg.verb.lower()
        m = _SIDE_PHRASE.search(text)
        is_move = verb.startswith("move") and m is not None
        is_put = verb.startswith("put") and "on the table" in text
        if not (is_move or is_put):
            return None
        pending = self.pending_site()
        if pending is not None:
            # a flash awaits its second frame: the count is about to change, so decide nothing yet and
            # hold the object over the target that just lit (it is inside it already: no new visit)
            side = self.side_of(pending)
            if is_move and m.group(1) == side:
                return None
            k = sum(1 for _, i in self.events if self.side_of(i) == side) + 1
            noun = m.group(2) if m else "target"
            return Replace(phrases.move_to_top(side, noun, self.sites[pending].point, time=min(k, 10)))
        nxt = self.expected()
        if nxt is None:
            return None
        side, k = nxt
        if side == "put":
            if is_put:
                return None
            if self.phrase is None:
                return None
            return Replace(phrases.put_on_table(self.phrase))
        if is_move and m.group(1) == side:
            return None  # the right side: its position word is the proposer's count, never evidence
        point = self.site_point(side)
        if point is None:
            return None
        noun = m.group(2) if m else "target"
        return Replace(phrases.move_to_top(side, noun, point, time=min(k, 10)))

    def diagnostics(self) -> dict:
        right, left, last = self.counts() if self.active else (0, 0, None)
        return {"active": self.active, "target": self.target, "visits_right": right, "visits_left": left,
                "last_side": last, "sites": [s.point for s in self.sites], "events": list(self.events),
                "rejected_single_frames": self.rejected,
                "gate_calls": self._gate_calls, "rewrites": self._rewrites}

"""Transient marks kept as relations: "the highlighted cube" after the highlight is gone.

Some goals refer to objects by a mark they carried for a while ("pick up all cubes that have
been highlighted with white areas on the table"). The mark (a flat white disc under the cube)
shows only during an early window and is gone when the choice is made; the cubes it marked then
look exactly like the others, often of the same colour. This tool keeps the mark as a relation
and the marked cubes as entity records, and keeps track of which of them were already handled.

Evidence chain:

1. **Mark sighting.** For every cube blob (a named colour's, :func:`~memory.perception.blobs.find_blobs`,
   cubes of one colour that touch taken apart, :func:`~memory.perception.touching.pieces_of`,
   or an object of any other hue that stands out from the scene,
   :func:`~memory.perception.scene_objects.find_scene_objects`, identified by its look) the annulus ``ring`` px around its centroid is searched for bright neutral pixels (white disc
   material). A mark needs ``min_white`` such pixels *and* white on at least three of the four
   sides of the cube: a disc surrounds its cube, while an arm link passing nearby lies on one side.
   A cube coloured like the table is found by its disc instead: the non-white pixels inside a
   disc-sized white component's outline where no cube blob stands, if their colour is the
   surface's (``_on_surface_disc``); it is found again only where it is known to stand.
2. **Persistence.** A marked cube seen marked on ``confirm_frames`` consecutive observed frames,
   at the same place (``match_px``) and of the same look (colour word, or hue), becomes an entity record: identity
   ``"<colour> <role>"``, binding ``"highlighted <role>"``, status ``verified``, plus the relation
   record ``<colour> <role> on highlight``. The role (``cube``) is the parameter of the episode's
   :class:`~memory.language.state_kinds.Mark` (the word table's role of the noun the goal names),
   not a word of this module; the pixel readers were measured on cubes. A one-frame sighting stays a candidate and is never read.
   A sighting nearer an existing mark than about its width (``same_object``) is a part of that
   object whatever its label (one cube's faces can fall on both sides of a colour word's hue edge).
3. **Window.** Once marks have been seen and then no marked cube is found for ``close_frames``
   consecutive frames, the marking window is over: later white near a cube (the arm, the gripper)
   adds nothing.
4. **Picked-off bookkeeping.** In a closed grip that began after a read sent the robot to a marked
   cube, a marked cube not seen whole on its spot (its colour's blob within ``still_px`` with at
   least ``whole_share`` of its area at the sighting: fingers around it hide part of it, lifting it
   moves it) on ``lift_frames`` rendered frames was handled; at the release it is marked picked
   (binding becomes ``"picked highlighted cube"``): the mark the last read named if it was
   disturbed, else the only disturbed one. The k-th read of "the highlighted cube" therefore
   answers a marked cube not picked yet. (A grip before any read, the button press, marks nothing.)
   Where the frames log the fingers (:mod:`memory.events.lift`), a grip that never held them apart
   and rose lifted nothing and picks nothing off, however it disturbed the cube: a missed grasp
   beside or above a cube hides part of it and may push it, exactly as the pixels of a pick do.
5. **Re-grounding.** A recalled marked cube is the blob of its colour nearest the stored
   position, within ``reground_px``; otherwise the tool finds nothing (and the access layer answers
   with the record's stored position, :class:`~memory.layer.MemoryConfig` ``record_position_fallback``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.contract.frames import Frame
from memory.events import GRIPPER_LIVE, LIFT_LIVE, events_for, sensed_grip
from memory.language.needs import Need
from memory.language.state_kinds import Mark, state_kinds_of
from memory.store.records import EntityRecord, EntityStatus, ProgressRecord, RelationRecord, Source
from memory.language.spec import MemorySpec
from memory.store.memory_store import MemoryStore
from memory.contract.render_need import RenderNeed
from memory.tools.base import Tool, register_tool
from memory.perception.blobs import Blob, bare_table, find_blobs, hsv
from memory.perception.touching import pieces_of
import cv2
from scipy import ndimage

from memory.perception.scene_objects import (circular_mean_hue, find_scene_objects, label_hue, look_label,
                                              looks_like_surface, same_look, surface_look, surface_of)
from memory.language.words import COLOUR_WORDS, DEFAULT_OBJECT_ROLE, colour_of
from subgoals.record_names import highlight_binding, highlight_count
from subgoals.grammar import Point, try_parse
from memory.tools.groups import ToolGroup

__all__ = ["HighlightMarkTool", "MarkThresholds", "mark_key", "ring_evidence"]

PICKED_PREFIX = "picked "


def mark_key(n: int) -> str:
    return f"mark/highlighted/{n}"


def _white(rgb: np.ndarray, min_value: int = 200, max_spread: int = 18) -> np.ndarray:
    img = rgb.astype(np.int16)
    lo, hi = img.min(axis=-1), img.max(axis=-1)
    return (lo >= min_value) & (hi - lo <= max_spread)


def ring_evidence(white: np.ndarray, blob: Blob, ring: tuple[float, float] = (5.0, 11.0)) -> tuple[int, int]:
    """``(white pixels, sides)`` in the annulus ``ring`` around ``blob``: how many bright neutral
    pixels, and on how many of the four sides (above, below, left, right) at least 4 of them lie."""
    r = int(np.ceil(ring[1]))
    cy, cx = int(round(blob.y)), int(round(blob.x))
    y0, y1 = max(0, cy - r), min(white.shape[0], cy + r + 1)
    x0, x1 = max(0, cx - r), min(white.shape[1], cx + r + 1)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    dy, dx = yy - blob.y, xx - blob.x
    d = np.hypot(dy, dx)
    hit = white[y0:y1, x0:x1] & (d >= ring[0]) & (d <= ring[1])
    sides = 0
    for side in (dy < -abs(dx), dy > abs(dx), dx < -abs(dy), dx > abs(dy)):
        sides += int((hit & side).sum() >= 4)
    return int(hit.sum()), sides


class _FrameLooks:
    """One frame's derived views for finding unnamed cubes again, each computed once when first asked
    for, however many marks are looked for in that frame."""

    def __init__(self, rgb: np.ndarray, min_area: int, max_area: int) -> None:
        self.rgb, self.min_area, self.max_area = rgb, min_area, max_area
        self._surface: tuple[float, float] | None = None
        self._looks: list[Blob] | None = None

    def surface(self) -> tuple[float, float]:
        """The table's look in this frame (:func:`~memory.perception.scene_objects.surface_look`)."""
        if self._surface is None:
            self._surface = surface_look(self.rgb)
        return self._surface

    def looks(self) -> list[Blob]:
        """Every object that stands out from the scene, each labelled by its look, none left to the
        named reader: how a cube no colour word names is found again (its faces, shaded differently,
        may fall on both sides of a colour word's hue window; one component keeps them together)."""
        if self._looks is None:
            self._looks = find_scene_objects(self.rgb, min_area=self.min_area, max_area=self.max_area)
        return self._looks


@dataclass
class _Mark:
    colour: str
    pos: tuple[float, float]
    area: int = 0
    streak: int = 1
    key: str | None = None  # store key once verified
    picked: bool = False
    away: int = 0  # rendered frames of the current closed grip on which the cube was not seen whole on its spot


@dataclass(frozen=True)
class MarkThresholds:
    """The numbers :class:`HighlightMarkTool` reads and keeps marks with (observed frames, pixels in the 256x256 frame); the module docstring says where each enters."""

    ring: tuple[float, float] = (5.0, 11.0)
    """Inner and outer radius (px) of the annulus around a cube searched for white disc material: the
    disc under a cube shows right around it; a neighbour's disc lies further out (a cube standing
    between two discs sees white on three sides of a wider ring, and none this close)."""
    min_white: int = 40
    """A mark needs at least this many bright neutral pixels in the ring..."""
    min_sides: int = 3
    """...and white on at least this many of the cube's four sides: a disc surrounds its cube, an arm link passing nearby lies on one side."""
    confirm_frames: int = 2
    """A cube seen marked on this many consecutive observed frames becomes a verified record (a one-frame sighting stays a candidate)."""
    match_px: float = 5.0
    """Sightings within this (px), in the same colour, are the same marked cube."""
    close_frames: int = 3
    """No marked cube found for this many consecutive frames after marks were seen: the marking window is over."""
    still_px: float = 2.5
    """A marked cube is whole on its spot when its colour's blob lies within this (px)..."""
    whole_share: float = 0.75
    """...with at least this share of its area at the sighting (fingers around it hide part of it)."""
    lift_frames: int = 1
    """A marked cube not whole on its spot on this many rendered frames in a grip was handled."""
    reground_px: float = 14.0
    """A recalled marked cube is the blob of its colour nearest the stored position within this (px); otherwise the tool abstains."""
    min_area: int = 20
    """Smallest colour blob (px) taken as a cube (half of it when re-grounding)."""
    min_disc_white: int = 90
    """A white component this large (px) is a disc whose outline may hold an object of the table's colour..."""
    max_disc_px: tuple[int, int] = (28, 40)
    """...if its bounding box is no taller and wider than this (px; a disc seen from the front camera)."""
    max_area: int = 900
    """Largest colour blob (px) taken as a cube."""
    same_object: float = 0.75
    """A sighting whose centre is nearer an existing mark than this many times the larger one's width
    (the square root of its area) is a part of that object, not a second one: two objects cannot
    stand closer than about a width apart, while one object's faces can take two labels (a hue across
    a colour word's edge). Touching objects taken apart lie a width or more apart."""


@register_tool(order=130)
class HighlightMarkTool(Tool):
    """Marks seen live under cubes, kept as verified relations, with picked-off bookkeeping."""

    name = "highlight_marks"
    serves = frozenset({Need.HIGHLIGHT_MARKS})
    group = ToolGroup.MARK
    render = RenderNeed(stride=4, video=False)

    def __init__(self, *, ring: tuple[float, float] = (5.0, 11.0), min_white: int = 40, min_sides: int = 3,
                 confirm_frames: int = 2, match_px: float = 5.0, close_frames: int = 3, still_px: float = 2.5,
                 whole_share: float = 0.75, lift_frames: int = 1, reground_px: float = 14.0, min_area: int = 20, max_area: int = 900,
                 min_disc_white: int = 90) -> None:
        self.config = MarkThresholds(
            ring=ring, min_white=min_white, min_sides=min_sides, confirm_frames=confirm_frames, match_px=match_px,
            close_frames=close_frames, still_px=still_px, whole_share=whole_share, lift_frames=lift_frames,
            reground_px=reground_px, min_area=min_area, max_area=max_area, min_disc_white=min_disc_white,
        )
        self.active = False
        self.role = DEFAULT_OBJECT_ROLE  # the marked objects' role: the episode's Mark's, set at reset
        self._marks: list[_Mark] = []
        self._open = True
        self._quiet = 0
        self._closed = False
        self._armed = False
        self._last_read: str | None = None
        self._events: list[str] = []
        self._frames = 0

    def thresholds(self) -> tuple:
        return (self.config, GRIPPER_LIVE, LIFT_LIVE)

    # ------------------------------------------------------------------ episode
    def reset(self, spec: MemorySpec, store: MemoryStore) -> None:
        self.active = self.enabled_by(spec)
        self.binding = None
        # the role of the marked objects is the Mark's parameter (the word table's role of the noun the
        # goal names; without one, the table's default object role, which the layer reports as unserved)
        state = next((s for s in state_kinds_of(spec) if isinstance(s, Mark)), None)
        self.role = DEFAULT_OBJECT_ROLE if state is None else state.role
        self.binding = highlight_binding(self.role)
        self._marks = []
        self._open = True
        self._quiet = 0
        self._closed = False
        self._gripper = events_for(store).attach(GRIPPER_LIVE) if self.active else None
        self._lift = events_for(store).attach(LIFT_LIVE) if self.active else None
        self._armed = False
        self._last_read = None
        self._events = []
        self._frames = 0

    # ------------------------------------------------------------------ frames
    def observe(self, frame: Frame, store: MemoryStore) -> None:
        if not self.active or frame.source != "live":
            return
        edges = events_for(store).events(frame, GRIPPER_LIVE)
        events_for(store).events(frame, LIFT_LIVE)  # fed before a release reads the grip it ends
        self._closed = self._gripper.closed
        for e in edges:
            if e.kind == "grasp":
                self._armed = self._last_read is not None
                for m in self._marks:
                    m.away = 0
            else:
                self._on_release(frame, store)
        if frame.rgb is None:
            return
        self._frames += 1
        blobs = self._cubes(frame.rgb, self.config.min_area)
        if self._open:
            self._sight(blobs, frame, store)
        if self._closed:
            self._check_lifts(blobs, frame.rgb)

    def _cubes(self, rgb: np.ndarray, min_area: int) -> list[Blob]:
        """The cubes in view: blobs of the colour words, then objects that stand out from the scene
        in a hue no colour word names (:mod:`memory.perception.scene_objects`), labelled by their look."""
        named = find_blobs(rgb, COLOUR_WORDS, min_area=min_area, max_area=self.config.max_area)
        others = find_scene_objects(rgb, named=named, min_area=min_area, max_area=self.config.max_area)
        # touching cubes of one colour are one blob centred on neither: each is read on its own
        return pieces_of(rgb, named, min_area) + others

    def _on_surface_disc(self, rgb: np.ndarray, white: np.ndarray, blobs: list[Blob]) -> list[Blob]:
        """Objects on a disc that no blob found because they are coloured like the table: the
        non-white pixels inside a white disc's outline (its convex hull), where no cube blob stands,
        whose colour is the surface's. Labelled by their look like any unnamed cube."""
        planes = None  # hue, saturation, value: computed once, at the first disc with a hole
        labels, _ = ndimage.label(white, structure=np.ones((3, 3), dtype=bool))
        out = []
        for i, box in enumerate(ndimage.find_objects(labels), start=1):
            if box is None:
                continue
            comp = labels[box] == i
            h_px, w_px = box[0].stop - box[0].start, box[1].stop - box[1].start
            if int(comp.sum()) < self.config.min_disc_white or h_px > self.config.max_disc_px[0] or w_px > self.config.max_disc_px[1]:
                continue  # too small for a disc, or larger than one (the robot's white links, two discs)
            ys, xs = np.nonzero(comp)
            hull = cv2.convexHull(np.stack([xs + box[1].start, ys + box[0].start], axis=1).astype(np.int32))
            inside = np.zeros(white.shape, np.uint8)
            cv2.fillPoly(inside, [hull], 1)
            hole = cv2.erode(inside, np.ones((3, 3), np.uint8)).astype(bool) & ~white
            hy, hx = np.nonzero(hole)
            if len(hy) < self.config.min_area or any(hole[int(round(b.y)), int(round(b.x))] for b in blobs
                                                      if 0 <= b.y < hole.shape[0] and 0 <= b.x < hole.shape[1]):
                continue
            if planes is None:
                planes = hsv(rgb)
                surface = surface_of(*planes)
            hue, sat, _ = planes
            h = circular_mean_hue(hue[hole])
            if not looks_like_surface(h, float(sat[hole].mean()), surface):
                continue  # a coloured object a blob would have found: not seen whole now (an arm?), no guess
            y0, x0, y1, x1 = int(hy.min()), int(hx.min()), int(hy.max()), int(hx.max())
            b = Blob(colour=look_label(h), y=float(hy.mean()), x=float(hx.mean()), area=len(hy), bbox=(y0, x0, y1, x1), hue=h)
            n, sides = ring_evidence(white, b, self.config.ring)
            if n >= self.config.min_white and sides >= self.config.min_sides:  # the disc surrounds it
                out.append(b)
        return out

    def _find_again(self, view: "_FrameLooks", label: str, near: tuple[float, float], radius: float) -> list[Blob]:
        """Blobs that may be the unnamed object labelled ``label`` near ``near``: objects of the same
        look; for a look the table has, whatever stands out from its surroundings there (such an
        object is found only where it is known to stand)."""
        surface = view.surface()
        if looks_like_surface(label_hue(label), surface[1], surface):
            return find_scene_objects(view.rgb, min_area=view.min_area, max_area=self.config.max_area,
                                      within=(near[0], near[1], radius))
        return [b for b in view.looks() if same_look(label, b)]

    def _sight(self, blobs: list[Blob], frame: Frame, store: MemoryStore) -> None:
        white = _white(frame.rgb)
        marked = []
        for b in blobs:
            n, sides = ring_evidence(white, b, self.config.ring)
            if n >= self.config.min_white and sides >= self.config.min_sides:
                marked.append(b)
        marked += self._on_surface_disc(frame.rgb, white, blobs)
        if not marked:
            if any(m.key for m in self._marks):
                self._quiet += 1
                if self._quiet >= self.config.close_frames:
                    self._open = False
                    self._events.append(f"{frame.step}: marking window closed")
            for m in self._marks:
                if m.key is None:
                    m.streak = 0
            return
        self._quiet = 0
        seen: set[int] = set()
        for b in marked:
            near = [(i, m) for i, m in enumerate(self._marks)
                    if same_look(m.colour, b) and np.hypot(m.pos[0] - b.y, m.pos[1] - b.x) <= self.config.match_px]
            if near:
                i, m = min(near, key=lambda im: np.hypot(im[1].pos[0] - b.y, im[1].pos[1] - b.x))
                if i in seen:
                    continue
                seen.add(i)
                m.streak += 1
                if m.key is None:
                    m.pos, m.area = (b.y, b.x), b.area
            elif any(np.hypot(m.pos[0] - b.y, m.pos[1] - b.x) < self.config.same_object * np.sqrt(max(m.area, b.area))
                     for m in self._marks):
                continue  # nearer a mark than one object's width: a part of that object, whatever its label
            elif b.hue is not None and any(same_look(m.colour, b) and np.hypot(m.pos[0] - b.y, m.pos[1] - b.x) <= 2 * self.config.ring[1]
                                           for m in self._marks):
                # one disc holds one object: a second piece of the same look on it is that object (its
                # faces, shaded apart, can label as two); named-colour blobs were taken apart by the
                # solid-part rule (pieces_of), so two of them are two objects, on discs side by side
                continue
            else:
                self._marks.append(_Mark(b.colour, (b.y, b.x), b.area))
                seen.add(len(self._marks) - 1)
        for i, m in enumerate(self._marks):
            if i not in seen and m.key is None:
                m.streak = 0
        # marks confirmed on the same frame enter the store far side (image top) first
        for m in sorted(self._marks, key=lambda m: m.pos[0]):
            if m.key is None and m.streak >= self.config.confirm_frames:
                self._verify(m, frame, store)

    def _verify(self, m: _Mark, frame: Frame, store: MemoryStore) -> None:
        n = sum(1 for x in self._marks if x.key is not None)
        m.key = mark_key(n)
        point = Point(int(round(m.pos[0])), int(round(m.pos[1])))
        identity = f"{m.colour} {self.role}"
        self.commit(store, m.key, EntityRecord(identity=identity, role=self.role, position=point.as_tuple(),
                                               binding=self.binding, status=EntityStatus.VERIFIED, source=Source.LIVE),
                    step=frame.step, reason=f"white mark around the {identity} on {m.streak} frames in a row", accepted=True)
        self.commit(store, f"relation/{m.key}", RelationRecord(subject=m.key, relation="on", object="highlight",
                                                                status=EntityStatus.VERIFIED, source=Source.LIVE),
                    step=frame.step, reason=f"mark under the {self.role}", accepted=True)
        self._count(store, frame.step)
        self._events.append(f"{frame.step}: {identity} highlighted at {point}")

    def _count(self, store: MemoryStore, step: int) -> None:
        verified = [m for m in self._marks if m.key is not None]
        self.commit(store, "progress/highlighted", ProgressRecord(name=highlight_count(self.role), count=len(verified)),
                    step=step, reason="verified marks", accepted=True)
        self.commit(store, "progress/picked highlighted", ProgressRecord(
            name=f"{PICKED_PREFIX}{self.binding}s", count=sum(m.picked for m in verified), target=len(verified)),
            step=step, reason="marked objects picked", accepted=True)

    def _check_lifts(self, blobs: list[Blob], frame_rgb: np.ndarray) -> None:
        """In a closed grip: is each marked cube still whole on its spot? Fingers closing around a
        cube hide part of it, and lifting it moves it off the spot; either disturbs it."""
        view = _FrameLooks(frame_rgb, self.config.min_area, self.config.max_area)
        for m in self._marks:
            if m.key is None or m.picked:
                continue
            found = blobs if label_hue(m.colour) is None else self._find_again(view, m.colour, m.pos, self.config.still_px)
            whole = any(same_look(m.colour, b) and b.distance(m.pos) <= self.config.still_px and b.area >= self.config.whole_share * m.area
                        for b in found)
            if not whole:
                m.away += 1

    def _on_release(self, frame: Frame, store: MemoryStore) -> None:
        armed, self._armed = self._armed, False
        lifted = [m for m in self._marks if m.away >= self.config.lift_frames and not m.picked and m.key is not None]
        for m in self._marks:
            m.away = 0
        if not lifted or not armed:
            return  # no grip since the robot was sent to a marked cube (the button press, say)
        grip = sensed_grip(self._lift)
        if grip is not None and not grip.lifted:
            # the fingers closed on nothing, or on a cube they never raised (a missed grasp that
            # brushed or pushed it): the hand's own sensing says nothing was picked, whatever the
            # pixels of the disturbed cube say
            self._events.append(f"{frame.step}: a grip lifted nothing")
            return
        chosen = [m for m in lifted if m.key == self._last_read] or (lifted if len(lifted) == 1 else [])
        for m in chosen:
            m.picked = True
            record = store.get(m.key)
            if isinstance(record, EntityRecord):
                self.commit(store, m.key, record.evolve(binding=PICKED_PREFIX + self.binding), step=frame.step,
                            reason=f"its {self.role} left its spot while the gripper was closed, then was released",
                            accepted=True)
            self._events.append(f"{frame.step}: {m.colour} {self.role} at {tuple(round(v) for v in m.pos)} picked")
        self._count(store, frame.step)

    # ------------------------------------------------------------------ reads
    def reground(self, entity: EntityRecord, frame: Frame) -> Point | None:
        if not self.active or frame.rgb is None or entity.binding != self.binding or entity.position is None:
            return None
        words = entity.identity.split()
        colour = colour_of(words)
        if colour is not None:
            blobs = pieces_of(frame.rgb, find_blobs(frame.rgb, [colour], min_area=self.config.min_area // 2,
                                                    max_area=self.config.max_area), self.config.min_area // 2)
        elif words and label_hue(words[0]) is not None:  # a cube no colour word names: found by its look
            view = _FrameLooks(frame.rgb, self.config.min_area // 2, self.config.max_area)
            blobs = self._find_again(view, words[0], entity.position, self.config.reground_px)
        else:
            return None
        blobs = [b for b in blobs if b.distance(entity.position) <= self.config.reground_px]
        if not blobs:
            # the arm in front of it (reaching for this very cube, or passing): marked cubes stay where
            # they stand, so the view cannot contradict the record; bare table there would
            return None if bare_table(frame.rgb, entity.position) else Point(*entity.position)
        return min(blobs, key=lambda b: b.distance(entity.position)).point

    def gate(self, proposed: str, store: MemoryStore) -> None:
        """Never rewrites; notes which marked cube the subgoal about to run sends the robot to (the
        point of a "highlighted" noun phrase), for the picked-off bookkeeping."""
        if not self.active:
            return None
        sg = try_parse(proposed)
        if sg is None:
            return None
        for np_ in sg.noun_phrases:
            if np_.point is None or not any(w.lower().startswith("highlight") for w in (*np_.modifiers, *np_.post_modifiers)):
                continue
            marks = [m for m in self._marks if m.key is not None and not m.picked]
            near = [m for m in marks if np.hypot(m.pos[0] - np_.point.y, m.pos[1] - np_.point.x) <= self.config.reground_px]
            if near:
                self._last_read = min(near, key=lambda m: np.hypot(m.pos[0] - np_.point.y, m.pos[1] - np_.point.x)).key
        return None

    def diagnostics(self) -> dict:
        return {
            "active": self.active,
            "frames": self._frames,
            "marks": [{"colour": m.colour, "pos": [round(v, 1) for v in m.pos], "verified": m.key is not None,
                       "picked": m.picked} for m in self._marks][:12],
            "window_open": self._open,
            "events": self._events[:20],
        }
